"""What the rules decided on every TPC query, and the physical plan they led to: for checking that a
change to a rule's guard (made for its planning time) changes no plan and no reason.

    python bench/rule_reasons.py --broadcast on  --out /tmp/before-on.json    # one setting a run
    python bench/rule_reasons.py --broadcast off --out /tmp/before-off.json
    python bench/rule_reasons.py --compare /tmp/before-on.json /tmp/after-on.json

Per query, with the extension on (after the sketch pass, as ``bench/run.py`` plans): the reasons
EagerAggregation left on its aggregates (``fired: …`` / ``declined: …``), the reasons of the joins
FactorizeUnionOfJoins built, a digest of the physical plan free of expression and plan ids (as
``bench/run.py``'s ``plan_sha``), and EagerAggregation's and FactorizeUnionOfJoins' own planning
milliseconds (Spark's rule tracker, one planning: a pointer to where time goes, not a measurement).
``--compare`` prints the queries whose plans or reasons differ between two such files.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def dump(args) -> int:
    import pyspark_arrnf
    from pyspark_arrnf.data import generate, register_tables
    from run import _sketch_pass, _workload, plan_digest

    conf = {
        "spark.sql.shuffle.partitions": "8",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": "8g",
        "spark.sql.autoBroadcastJoinThreshold": "10485760" if args.broadcast == "on" else "-1",
        # scan filters in full: abbreviated, they are cut where the ids' digits move
        "spark.sql.maxMetadataStringLength": "1000000",
    }
    spark = pyspark_arrnf.session(conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    kinds = ["tpch", "tpcds"]
    tables = {k: [f"{k}.{t}" for t in register_tables(spark, generate(k, args.scale), database=k)] for k in kinds}
    _sketch_pass(spark, tables, "sketch")
    jvm = spark._jvm
    ea, fuj, facts = jvm.arrnf.rules.EagerAggregation, jvm.arrnf.rules.FactorizeUnionOfJoins, jvm.arrnf.bench.PlanFacts
    as_java = jvm.scala.jdk.javaapi.CollectionConverters.asJava
    out = {}
    only = set(args.only.split(",")) if args.only else None
    for kind, name, sql, _ in _workload(only, kinds):
        spark.catalog.setCurrentDatabase(kind)
        try:
            jdf = spark.sql(sql)._jdf
            qe = jdf.queryExecution()
            opt = qe.optimizedPlan()
            ms = {str(k): float(v) for k, v in dict(facts.ruleMillis(jdf)).items()}
            out[f"{kind}:{name}"] = {
                "eager": [str(x) for x in as_java(ea.reasonsIn(opt))],
                "factorize": [str(x) for x in fuj.firedIn(opt)],
                "plan_sha": plan_digest(qe.executedPlan().toString()),
                "rule_ms": {r: ms.get(r, 0.0) for r in ("EagerAggregation", "FactorizeUnionOfJoins")},
            }
        except Exception as e:  # noqa: BLE001 - one failing query must not end the dump
            out[f"{kind}:{name}"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
        print(kind, name, flush=True)
    Path(args.out).write_text(json.dumps({"broadcast": args.broadcast, "queries": out}, indent=1))
    spark.stop()
    return 0


def compare(a: dict, b: dict) -> list[str]:
    """The queries whose plan or reasons differ, and those only one of the two files holds.

    >>> x = {"queries": {"q1": {"plan_sha": "1", "eager": ["declined: a"], "factorize": []}}}
    >>> y = {"queries": {"q1": {"plan_sha": "1", "eager": ["declined: b"], "factorize": []}}}
    >>> compare(x, x), compare(x, y)
    ([], ['q1: eager'])
    >>> compare(x, {"queries": {}}), compare({"queries": {}}, x)
    (['q1: only before'], ['q1: only after'])
    """
    diffs = []
    for q, before in a["queries"].items():
        if q not in b["queries"]:
            diffs.append(f"{q}: only before")
            continue
        after = b["queries"][q]
        changed = [k for k in ("plan_sha", "eager", "factorize", "error") if before.get(k) != after.get(k)]
        if changed:
            diffs.append(f"{q}: {', '.join(changed)}")
    diffs += [f"{q}: only after" for q in b["queries"] if q not in a["queries"]]
    return diffs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--broadcast", default="on", choices=["on", "off"])
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--only", help="comma-separated kind:name")
    p.add_argument("--out", default="rule_reasons.json")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = p.parse_args(argv)
    if args.compare:
        a, b = (json.loads(Path(f).read_text()) for f in args.compare)
        diffs = compare(a, b)
        print("\n".join(diffs) if diffs else f"the same: {len(a['queries'])} queries, plans and reasons")
        return 1 if diffs else 0
    return dump(args)


if __name__ == "__main__":
    sys.exit(main())
