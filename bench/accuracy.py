"""Accuracy of ArrNF's size estimates: estimated rows of each block's state against what Spark measures.

    python bench/accuracy.py                                   # scale factor 1, all 22 TPC-H + 103 TPC-DS queries
    python bench/accuracy.py --scale 0.01 --only tpch:q3,tpch:q5,tpcds:q3
    python bench/accuracy.py --report bench/results/<time>     # rewrite accuracy.md from accuracy.json

One Spark session with the extension (default settings, AQE on). First every table's row count
(``spark.table(t).count()``), then every query planned with its ArrNF program, untimed
(``--plan-warmup`` rounds: JIT warm-up; then, unless ``--no-sketch-warmup``, one more round with every
table sketched, after which the sketches are forgotten: the estimator's code that reads a sketch is
compiled like the rest, and a p1 without it times a cold JVM). Then per kind, per query: a fresh DataFrame is planned (``executedPlan``, timed: the plain
planning time), ``p0 = arrnf(df)`` is taken (timed: what the program adds to planning; estimates from
file metadata and catalog only) and ``m = measure(df)`` runs the query. After all queries of a kind,
the sketch pass runs once over that kind's tables (``pyspark_arrnf.statistics``, timed) and every
query gets ``p1 = arrnf(df)`` on a fresh, planned DataFrame (estimates with the sketch). Where the
sketch changed the plan (a rule's cost guard decided otherwise: EagerAggregation on TPC-DS q82), the
query is measured again (``m1``), and p1 is judged against that run.

Blocks of p0 / p1 are matched to m's by name. A realized arrangement is a block for which Spark
builds state in the measured run (``realization`` holds a non-shared entry). For those the report
gives the share of estimates (``cost.rows``) within 2× and 10× of the measured rows
(``measured.rows``; 0 is read as 1), unknown estimates (misses), and the worst ten. The bound check:
a block whose branches are all joins must not be estimated above the product of its inputs' rows
(measured, else estimated; a table's row count; a factor 0 read as 1, outer joins add the inputs'
sum; summed over the branches), and, apart, above the product of its inputs' estimates (a ROLLUP's
Expand between the joins and the head repeats each row once per grouping set: such a block may
rightly exceed it). Also: stateful operators and the unattributed ones by reason, and
the times. Results: ``accuracy.json`` and ``accuracy.md`` under ``bench/results/<time>/``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

KINDS = ("tpch", "tpcds")


def _err(e: BaseException) -> str:
    from pyspark_arrnf._jvm import java_message

    return f"{type(e).__name__}: {java_message(e)[:300]}"


def _timed(f, *a):
    t0 = time.perf_counter()
    out = f(*a)
    return out, time.perf_counter() - t0


def _planned(spark, sql):
    """A fresh DataFrame of ``sql`` and the seconds its physical planning took (no ArrNF asked)."""
    df = spark.sql(sql)
    return df, _timed(df._jdf.queryExecution().executedPlan)[1]


def _rows_of(counts: dict, name: str):
    return counts.get(name, counts.get(name.split(".")[-1]))


def _bound(block: dict, est: dict, measured: dict, counts: dict):
    """Upper bound on a join block's rows (module doc), or None: not a join block, or an input unknown.
    ``measured`` empty: the bound of the inputs' estimates (what the estimator itself must respect)."""
    total = 0
    for br in block["branches"]:
        leaf = br["leaf"]
        if leaf["kind"] != "Join":
            return None
        xs = []
        for g in leaf["inputs"]:
            if g["source"] == "block":
                x = measured.get(g["name"])
                xs.append(x if x is not None else est.get(g["name"]))
            else:
                xs.append(_rows_of(counts, g["name"]) if g["source"] == "table" else None)
        if any(x is None for x in xs):
            return None
        prod = 1
        for x in xs:
            prod *= max(x, 1)
        total += prod + (sum(xs) if "outer" in leaf["type"] else 0)
    return total if block["branches"] else None


def _blocks(p: dict, m: dict, counts: dict) -> tuple[dict, list[str]]:
    """Per block name of ``p``: estimate, source, bound; and the names of p and m that do not match."""
    mb = {b["name"]: b for b in m["blocks"]}
    pb = {b["name"]: b for b in p["blocks"]}
    est = {n: b["cost"]["rows"] for n, b in pb.items()}
    measured = {n: (b.get("measured") or {}).get("rows") for n, b in mb.items()}
    out = {n: {"est": b["cost"]["rows"], "source": b["cost"]["source"], "bound": _bound(b, est, measured, counts),
               "bound_est": _bound(b, est, {}, counts)} for n, b in pb.items()}
    return out, sorted(set(pb) ^ set(mb))


def _shape(p: dict) -> list:
    """The program without its estimates and texts: equal shapes, the same plan and blocks."""
    return [{k: v for k, v in b.items() if k not in ("cost", "measured", "text")} for b in p["blocks"]]


def _measured(m: dict) -> dict:
    ms = m["measurement"]
    blocks = [{"name": b["name"], "realization": b.get("realization"),
               "rows": (b.get("measured") or {}).get("rows"), "bytes": (b.get("measured") or {}).get("bytes")}
              for b in m["blocks"]]
    ops = {o["id"]: o for o in ms["operators"]}
    return {"status": ms["status"], "error": ms.get("error"), "blocks": blocks, "operators": len(ops),
            "shared": sum(o["shared"] for o in ops.values()),
            "unattributed": [{k: ops[i][k] for k in ("id", "node", "kind", "reason")} for i in ms["unattributed"]]}


def collect(args) -> dict:
    import pyspark_arrnf
    from pyspark_arrnf._jvm import clear_statistics
    from run import _workload
    from pyspark_arrnf.data import generate, register_tables

    conf = {"spark.sql.shuffle.partitions": str(args.partitions), "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false", "spark.driver.memory": args.driver_memory}
    spark = pyspark_arrnf.session(conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    kinds = [k for k in args.kinds.split(",") if k in KINDS]

    def estimating() -> float:
        """Seconds the JVM spent on statistics and estimation so far (arrnf.cost.Estimator)."""
        return spark._jvm.arrnf.cost.Estimator.nanos() / 1e9

    tables, counts = {}, {}
    for kind in kinds:
        tables[kind] = [f"{kind}.{t}" for t in register_tables(spark, generate(kind, args.scale), database=kind)]
        counts.update({t: spark.table(t).count() for t in tables[kind]})
    items = [(k, n, sql) for k, n, sql, _ in _workload(set(args.only.split(",")) if args.only else None, kinds)]
    def warm_up(label: str) -> None:
        t0 = time.perf_counter()
        for kind, name, sql in items:
            spark.catalog.setCurrentDatabase(kind)
            try:
                pyspark_arrnf.arrnf(_planned(spark, sql)[0])
            except Exception:  # noqa: BLE001 - recorded below, when it is timed
                pass
        print(f"warm-up {label}: {len(items)} queries planned in {time.perf_counter() - t0:.0f} s", flush=True)

    for r in range(args.plan_warmup):  # JIT warm-up: plan and normalize every query, untimed
        warm_up(f"{r + 1}/{args.plan_warmup}")
    if args.plan_warmup and args.sketch_warmup:
        # The estimator's paths that read a sketch (samples, distinct counts, clusters) run only once
        # one is taken: warmed like planning's, on sketches then forgotten (p0 is without them).
        for kind in kinds:
            pyspark_arrnf.statistics(spark, tables[kind])
        warm_up("with sketches")
        clear_statistics(spark)
    queries, sketch = [], {}
    for kind in kinds:
        spark.catalog.setCurrentDatabase(kind)
        mine = [it for it in items if it[0] == kind]
        done = []
        for i, (_, name, sql) in enumerate(mine):
            q = {"kind": kind, "name": name}
            try:
                df, q["plan_s"] = _planned(spark, sql)
                s0 = estimating()
                p0, q["arrnf0_s"] = _timed(pyspark_arrnf.arrnf, df)
                q["stats0_s"] = estimating() - s0
                m, q["run_s"] = _timed(pyspark_arrnf.measure, df)
                m = m.to_dict()
                q["m"] = _measured(m)
                if q["m"]["status"] != "ok":
                    q["error"] = f"run failed: {q['m']['error']}"
                p0 = p0.to_dict()
                q["p0"], q["unmatched0"] = _blocks(p0, m, counts)
                done.append((q, sql, m, _shape(p0)))
            except Exception as e:  # noqa: BLE001 - one failing query must not end the run
                q["error"] = _err(e)
            queries.append(q)
            print(f"[{kind} {i + 1}/{len(mine)}] {name}  {q.get('error') or 'ok'}", flush=True)
        if not done:
            continue
        lines, sketch[kind] = _timed(pyspark_arrnf.statistics, spark, tables[kind])
        skipped = [x for x in lines if "not sketched" in x]
        print(f"sketch pass {kind}: {len(lines) - len(skipped)} tables in {sketch[kind]:.1f} s", *skipped, sep="\n  ", flush=True)
        for q, sql, m, shape in done:
            try:
                df, q["plan1_s"] = _planned(spark, sql)
                s1 = estimating()
                p1, q["arrnf1_s"] = _timed(pyspark_arrnf.arrnf, df)
                q["stats1_s"] = estimating() - s1
                p1 = p1.to_dict()
                if _shape(p1) != shape:  # another plan: its blocks are not m's, though named alike
                    m = pyspark_arrnf.measure(df).to_dict()
                    q["m1"] = _measured(m)
                    if q["m1"]["status"] != "ok":
                        q["error1"] = f"run failed: {q['m1']['error']}"
                q["p1"], q["unmatched1"] = _blocks(p1, m, counts)
            except Exception as e:  # noqa: BLE001
                q["error1"] = _err(e)
    spark.stop()
    import pyspark

    settings = {"scale": args.scale, "partitions": args.partitions, "driver_memory": args.driver_memory,
                "plan_warmup": args.plan_warmup, "sketch_warmup": bool(args.plan_warmup and args.sketch_warmup), "master": "local[2]", "aqe": "on (default)", "autoBroadcastJoinThreshold": "default (10 MB)"}
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
               "pyspark": pyspark.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    return {"machine": machine, "settings": settings, "table_rows": counts, "sketch_s": sketch, "queries": queries}


def _ratio(e, m) -> float:
    e, m = max(e, 1), max(m, 1)
    return max(e, m) / min(e, m)


def summarize(data: dict) -> dict:
    """Figures per kind and overall (``all``) for p0 and p1, from :func:`collect`'s plain data."""
    qs = [q for q in data["queries"] if "m" in q and "error" not in q and "error1" not in q]
    out = {}
    for scope in [*sorted({q["kind"] for q in qs}), "all"]:
        sq = [q for q in qs if scope in ("all", q["kind"])]
        fig = {"queries": len(sq), "errors": sum(1 for q in data["queries"] if scope in ("all", q["kind"]) and
                                                ("error" in q or "error1" in q))}
        for p in ("p0", "p1"):
            rows, viol, checked, unmatched, viol_est, checked_est = [], [], 0, 0, [], 0
            for q in sq:
                unmatched += len(q["unmatched" + p[1]])
                run = q.get("m1", q["m"]) if p == "p1" else q["m"]  # the run of p's plan
                for b in run["blocks"]:  # a block of the run that p lacks: an unknown estimate
                    e = q[p].get(b["name"]) or {"est": None, "source": "unmatched", "bound": None, "bound_est": None}
                    if e.get("bound_est") is not None and e["est"] is not None:
                        checked_est += 1
                        if e["est"] > e["bound_est"]:
                            viol_est.append({"query": f"{q['kind']}:{q['name']}", "block": b["name"],
                                             "estimated": e["est"], "bound": e["bound_est"], "source": e["source"]})
                    if e["bound"] is not None and e["est"] is not None:
                        checked += 1
                        if e["est"] > e["bound"]:
                            viol.append({"query": f"{q['kind']}:{q['name']}", "block": b["name"], "estimated": e["est"],
                                         "bound": e["bound"], "source": e["source"]})
                    if any(not r["shared"] for r in b["realization"] or []):
                        rows.append({"query": f"{q['kind']}:{q['name']}", "block": b["name"], "estimated": e["est"],
                                     "measured": b["rows"], "source": e["source"],
                                     "ratio": None if e["est"] is None or b["rows"] is None else _ratio(e["est"], b["rows"])})
            judged = [r for r in rows if r["measured"] is not None]
            known = [r for r in judged if r["ratio"] is not None]
            n = len(judged) or 1
            fig[p] = {"realized": len(rows), "no measured rows": len(rows) - len(judged),
                      "within 2x": sum(r["ratio"] <= 2 for r in known) / n, "within 10x": sum(r["ratio"] <= 10 for r in known) / n,
                      "unknown": len(judged) - len(known), "unmatched blocks": unmatched,
                      "measured again": sum("m1" in q for q in sq) if p == "p1" else 0, "bound checked": checked,
                      "bound violations": viol, "bound checked, estimated inputs": checked_est,
                      "bound violations, estimated inputs": viol_est, "worst": sorted(known, key=lambda r: -r["ratio"])[:10],
                      "arrnf s": sum(q.get("arrnf" + p[1] + "_s", 0) for q in sq),
                      "statistics s": sum(q.get("stats" + p[1] + "_s", 0) for q in sq)}
        un = [u for q in sq for u in q["m"]["unattributed"]]
        fig["operators"] = {"stateful": sum(q["m"]["operators"] for q in sq), "shared": sum(q["m"]["shared"] for q in sq),
                            "unattributed": len(un), "reasons": dict(Counter(f"{u['node']}: {u['reason']}" for u in un))}
        fig["plan s"] = sum(q["plan_s"] for q in sq)
        fig["plan s after sketch"] = sum(q.get("plan1_s", 0) for q in sq)
        fig["run s"] = sum(q["run_s"] for q in sq)
        fig["sketch s"] = sum(v for k, v in data["sketch_s"].items() if scope in ("all", k))
        out[scope] = fig
    return out


def write_markdown(data: dict, figs: dict, path: Path) -> None:
    import pandas as pd

    def table(rows) -> str:
        return pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3g") if rows else "none"

    mc, st = data["machine"], data["settings"]
    lines = ["# ArrNF size estimates against measured rows", "",
             f"Scale factor {st['scale']:g}; run {mc['date']}; {mc['cpus']} cores, {mc['platform']}; Python {mc['python']}, "
             f"PySpark {mc['pyspark']}. Settings: master {st['master']}, driver memory {st['driver_memory']}, "
             f"{st['partitions']} shuffle partitions, {st.get('plan_warmup', 1)} planning warm-up round(s)"
             f"{' and one with sketches taken, then forgotten' if st.get('sketch_warmup') else ''}, AQE {st['aqe']}, broadcast threshold {st['autoBroadcastJoinThreshold']}. "
             "p0: estimates without sketch (file metadata, catalog); p1: after the sketch pass. Measured: `measured.rows` "
             "of the blocks Spark builds state for (`realization` with a non-shared entry); 0 counts as 1.", "",
             "## Accuracy", ""]
    acc, times = [], []
    for scope, f in figs.items():
        for p, label in (("p0", "without sketch"), ("p1", "with sketch")):
            g = f[p]
            acc.append({"kind": scope, "estimates": label, "queries": f["queries"], "errors": f["errors"], "realized": g["realized"],
                        "no measured rows": g["no measured rows"], "within 2×": f"{g['within 2x']:.0%}",
                        "within 10×": f"{g['within 10x']:.0%}", "unknown": g["unknown"],
                        "bound checked": g["bound checked"], "bound violations": len(g["bound violations"]),
                        "bound checked (est. inputs)": g.get("bound checked, estimated inputs"),
                        "violations (est. inputs)": len(g.get("bound violations, estimated inputs", [])),
                        "unmatched blocks": g["unmatched blocks"], "measured again": g.get("measured again", 0)})
        times.append({"kind": scope, "queries": f["queries"], "plain planning s": f["plan s"], "arrnf s (p0)": f["p0"]["arrnf s"],
                      "plain planning s, after sketch": f["plan s after sketch"],
                      "arrnf s (p1)": f["p1"]["arrnf s"], "p0 / planning": f["p0"]["arrnf s"] / (f["plan s"] or 1),
                      "p1 / planning": f["p1"]["arrnf s"] / (f["plan s"] or 1),
                      "statistics s (p0)": f["p0"]["statistics s"], "statistics s (p1)": f["p1"]["statistics s"],
                      "(planning + statistics p1) / planning": (f["plan s"] + f["p1"]["statistics s"]) / (f["plan s"] or 1),
                      "sketch pass s": f["sketch s"],
                      "query runs s (measure)": f["run s"]})
    lines += [table(acc), "", "Shares are of the realized arrangements with measured rows; unknown estimates count as misses.", ""]
    for scope, f in figs.items():
        for p, label in (("p0", "without sketch"), ("p1", "with sketch")):
            lines += [f"### Worst ten, {scope}, {label}", "", table(f[p]["worst"]), ""]
    lines += ["## Bound check", "", "A join block's estimate above the product of its inputs' rows (module doc): "
              "of the inputs' measured rows (an input overestimated makes its consumers exceed it too), and of the "
              "inputs' estimates (what the estimator itself must respect).", ""]
    for p, label in (("p0", "without sketch"), ("p1", "with sketch")):
        lines += [f"### {label}, measured inputs", "", table(figs["all"][p]["bound violations"]), "",
                  f"### {label}, estimated inputs", "", table(figs["all"][p].get("bound violations, estimated inputs", [])), ""]
    lines += ["## Attribution", "", table([{"kind": s, **{k: v for k, v in f["operators"].items() if k != "reasons"}}
                                           for s, f in figs.items()]), "",
              table([{"operator: reason": r, "count": c} for r, c in
                     sorted(figs["all"]["operators"]["reasons"].items(), key=lambda kv: -kv[1])]), "",
              "## Time", "", "Plain planning: `executedPlan` of a fresh DataFrame; arrnf s: `arrnf(df)` on the planned "
              "DataFrame (what the whole program adds: normalizing, SQL forms, texts, statistics); statistics s: the "
              "part of it spent on statistics and estimation, timed in the JVM (`arrnf.cost.Estimator.nanos`). "
              "Sums over the queries that ran.", "", table(times), ""]
    errors = [q for q in data["queries"] if "error" in q or "error1" in q]
    if errors:
        lines += ["## Errors", ""] + [f"* {q['kind']}:{q['name']}: {q.get('error') or 'p1: ' + q['error1']}" for q in errors] + [""]
    path.write_text("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=1.0, help="TPC-H / TPC-DS scale factor")
    p.add_argument("--kinds", default="tpch,tpcds")
    p.add_argument("--only", help="comma-separated kind:name, e.g. tpch:q3,tpcds:q71")
    p.add_argument("--plan-warmup", type=int, default=1, help="untimed rounds planning every query first")
    p.add_argument("--no-sketch-warmup", dest="sketch_warmup", action="store_false",
                   help="no warm-up round with sketches taken and then forgotten: the estimator's sketch paths run cold "
                        "the first time p1 is timed (the first plan after a sketch pass in a fresh JVM)")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--driver-memory", default="12g")
    p.add_argument("--out", help="results folder (default bench/results/<time>)")
    p.add_argument("--report", metavar="DIR", help="only rewrite DIR/accuracy.md from DIR/accuracy.json")
    args = p.parse_args(argv)
    if args.report:
        out = Path(args.report)
        data = json.loads((out / "accuracy.json").read_text())
    else:
        out = Path(args.out or HERE / "results" / time.strftime("%Y%m%d-%H%M%S"))
        out.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        data = collect(args)
        data["machine"]["run_s"] = time.perf_counter() - t0
    data["figures"] = summarize(data)
    (out / "accuracy.json").write_text(json.dumps(data, indent=1))
    write_markdown(data, data["figures"], out / "accuracy.md")
    print(f"report: {out / 'accuracy.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
