"""The benchmark: pyspark-arrnf against vanilla Spark, side by side in one run.

    python bench/run.py                      # scale factor 1, TPC-H + TPC-DS + synthetic, broadcast on and off
    python bench/run.py --scale 0.1 --runs 3 --only tpch:q1,tpcds:q71,synthetic:unit_join

For each broadcast setting one Spark process is started (``worker``). It first takes the sketch pass
(``pyspark_arrnf.statistics``) over every TPC-H / TPC-DS table, timed apart and reported per kind
(``--statistics sketch``, the default; ``none`` skips it): cost guards that read row and distinct
counts see them while planning, ``--plan-only`` included, and no timed query pays for them. Then
it plans every TPC-H / TPC-DS query both ways, untimed (``--plan-warmup`` rounds: the JIT compiles
the optimizer and the rules before anything is timed). Then every query is planned both ways ``--plan-runs`` times (Spark's
``QueryPlanningTracker`` phases, the ArrNF explain section's time and, for scale, that of Spark's own
``explain("extended")`` text, both measured in the JVM), then runs with the extension's rewrites off
(vanilla) and on after ``--warmup`` untimed runs of each side (which also collect each side's operator counts, so no bookkeeping falls
between timed runs). Timed runs alternate the sides, each pair changing which goes first, and each
starts after a JVM garbage collection. Queries where a rule fired get ``--runs`` timed runs per side;
queries where none fired have the same plan both ways and get ``--same-plan-runs`` (default 2): their
ratios are the noise control of the report. Per query it records run times (median, spread), counts of
Exchange / Sort / join / aggregate operators in both final physical plans, the ArrNF arrangement
count and estimated bytes before and after the rules (when the normalizer is present), and which
rules fired. The parent merges the parts into ``report.json``, ``report.md`` and ``ratios.png``
under ``bench/results/<time>/``.

"Vanilla" is the same session with ``spark.arrnf.enabled=false``: every rule returns its input at
once. The sketches live apart from Spark's own statistics (only the extension's estimates read
them), so vanilla plans are the same with and without the sketch pass; each side's physical plan
before it runs is recorded as a digest (``plan_sha``) to check that across runs. Neither side
builds the ArrNF explain section for the plan description Spark records per executed
query (``spark.arrnf.explain.sqlUi`` is off by default); its cost is timed apart, inside the JVM.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def _median(xs):
    return statistics.median(xs) if xs else None


def _rel_mad(xs):
    """Median absolute deviation over the median: run-to-run noise of one side."""
    if len(xs) < 2:
        return 0.0
    m = statistics.median(xs)
    return statistics.median(abs(x - m) for x in xs) / m if m else 0.0


def _workload(only: set[str] | None, kinds: list[str]):
    from cases import CASES
    from pyspark_arrnf.data import queries

    def key(name):  # q14a after q14, q2 before q10
        digits = "".join(c for c in name if c.isdigit())
        return (int(digits or 0), name)

    items = []
    for kind in ("tpch", "tpcds"):
        if kind in kinds:
            for name, sql in sorted(queries(kind).items(), key=lambda kv: key(kv[0])):
                items.append((kind, name, sql, None))
    if "synthetic" in kinds:
        for c in CASES:
            items.append(("synthetic", c.name, c.sql, c))
    if only:
        items = [it for it in items if f"{it[0]}:{it[1]}" in only]
    return items


def _arrnf_summary(spark, df):
    """Arrangement count and estimated bytes of the ArrNF program, if the normalizer is present."""
    try:
        import pyspark_arrnf

        plan = pyspark_arrnf.arrnf(df)
        return {"arrangements": plan.arrangements, "bytes": sum(b.cost.bytes or 0 for b in plan.blocks)}
    except Exception as e:  # noqa: BLE001 - the benchmark reports what it could not measure
        return {"error": type(e).__name__}


def _one_run(spark, sql, enabled, want_details):
    from pyspark_arrnf.compare import arrnf_enabled

    jvm = spark._jvm
    facts = jvm.arrnf.bench.PlanFacts
    jvm.System.gc()  # garbage of the previous run (and of our own bookkeeping) is not this run's cost
    with arrnf_enabled(spark, enabled):
        t0 = time.perf_counter()
        df = spark.sql(sql)
        jdf = df._jdf
        phases = {str(k): int(v) for k, v in dict(facts.phaseMillis(jdf)).items()}
        t1 = time.perf_counter()
        # Run the query's own plan and count its rows in the JVM: no rows travel to Python, and the
        # final adaptive plan stays on this QueryExecution for the operator counts below.
        n = jdf.queryExecution().toRdd().count()
        t2 = time.perf_counter()
        out = {"total_s": t2 - t0, "plan_s": t1 - t0, "phases_ms": phases, "rows": n}
        if want_details:
            out["physical"] = {str(k): int(v) for k, v in dict(facts.physicalCounts(jdf)).items()}
            out["fired"] = [str(x) for x in facts.firedRules(jdf)]
            t3 = time.perf_counter()
            out["arrnf"] = _arrnf_summary(spark, df)
            out["arrnf_s"] = time.perf_counter() - t3
    return out


_DETAIL_KEYS = ("physical", "fired", "arrnf", "arrnf_s", "rows")


def plan_digest(text: str) -> str:
    """A physical plan's text without expression and plan ids, hashed: equal digests, equal plans.

    >>> plan_digest("Project [a#12] plan_id=3") == plan_digest("Project [a#7] plan_id=41")
    True
    """
    return hashlib.sha1(re.sub(r"#\d+", "#", re.sub(r"plan_id=\d+", "plan_id=", text)).encode()).hexdigest()[:16]


def _plan_digests(spark, sql) -> dict[str, str]:
    """Per side, a digest of the physical plan Spark chooses before running (with AQE, its initial
    plan), free of expression and plan ids: equal digests, equal plans, also across runs (compare
    ``--statistics sketch`` with ``none``). Planned once more per side, untimed, with scan metadata
    in full: abbreviated (``spark.sql.maxMetadataStringLength``), a scan's filters are cut at a
    place that moves with the ids' digits, and the same plan would read differently in another run."""
    from pyspark_arrnf.compare import arrnf_enabled

    key, before = "spark.sql.maxMetadataStringLength", spark.conf.get("spark.sql.maxMetadataStringLength", None)
    out = {}
    try:
        spark.conf.set(key, "1000000")
        for side in ("off", "on"):
            with arrnf_enabled(spark, side == "on"):
                out[side] = plan_digest(spark.sql(sql)._jdf.queryExecution().executedPlan().toString())
    finally:
        spark.conf.unset(key) if before is None else spark.conf.set(key, before)
    return out


def _plan_times(spark, sql, n):
    """Planning only, ``n`` times per side alternating: optimizer and total planning milliseconds
    (medians), and for the extension side the ArrNF explain section's time, the rules that fired and
    each rule's own time (``rule_ms``: where the rules' overhead goes).
    Planning is cheap, so it gets more repetitions than execution; the overhead target uses these."""
    from pyspark_arrnf.compare import arrnf_enabled

    facts = spark._jvm.arrnf.bench.PlanFacts
    estimator = spark._jvm.arrnf.cost.Estimator
    acc = {"off": {"opt": [], "plan": []},
           "on": {"opt": [], "plan": [], "recorded": [], "explain": [], "spark_explain": [], "rules": [], "statistics": []}}
    fired, by_rule = [], {}
    for r in range(n):
        for side in (("off", "on") if r % 2 == 0 else ("on", "off")):
            with arrnf_enabled(spark, side == "on"):
                # (read on the extension's side only: vanilla's rules estimate nothing)
                spent = estimator.nanos() if side == "on" else 0
                jdf = spark.sql(sql)._jdf
                phases = {str(k): int(v) for k, v in dict(facts.phaseMillis(jdf)).items()}
                acc[side]["opt"].append(phases.get("optimization", 0))
                acc[side]["plan"].append(sum(phases.values()))
                if side == "on":
                    # The statistics' part of that planning: the rules' cost guards estimating rows
                    # (timed in the JVM: arrnf.cost.Estimator.nanos; nothing is estimated since
                    # phaseMillis); the explain section's below is apart.
                    acc[side]["statistics"].append((estimator.nanos() - spent) / 1e6)
                    fired = [str(x) for x in facts.firedRules(jdf)]
                    per_rule = {str(k): float(v) for k, v in dict(facts.ruleMillis(jdf)).items()}
                    acc[side]["rules"].append(sum(per_rule.values()))
                    for name, ms in per_rule.items():
                        by_rule.setdefault(name, []).append(ms)
                    # What the explain provider adds to every executed query (Spark asks it for the
                    # description it records); first, while the section is not yet built and kept.
                    acc[side]["recorded"].append(float(facts.recordedDescriptionMillis(jdf)))
                    # Timed inside the JVM: across py4j a long section pays a socket delay of ~40 ms.
                    acc[side]["explain"].append(float(facts.explainMillis(jdf)))
                    # For scale: Spark's own explain("extended") text of the same plan.
                    acc[side]["spark_explain"].append(float(facts.sparkExplainMillis(jdf)))
    out = {"fired": fired}
    for side, a in acc.items():
        out[side] = {"optimization_ms": _median(a["opt"]), "planning_ms": _median(a["plan"]), "plan_runs": n}
        if side == "on":
            out[side]["recorded_description_ms"] = _median(a["recorded"])
            out[side]["explain_ms"] = _median(a["explain"])
            out[side]["spark_explain_ms"] = _median(a["spark_explain"])
            out[side]["rules_ms"] = _median(a["rules"])
            out[side]["statistics_ms"] = _median(a["statistics"])
            out[side]["rule_ms"] = {name: _median(ms) for name, ms in sorted(by_rule.items())}
    return out


def _plan_warmup(spark, items, rounds) -> None:
    """Untimed planning of every TPC-H / TPC-DS query, both ways, with its explain section: the JIT
    compiles the optimizer's and the extension's code before any of it is timed. Without it the first
    queries' planning times are those of a cold JVM (TPC-H q2's optimizer phase took 135 ms in the
    first round, about 25 ms once warm), on both sides."""
    tpc = [(kind, sql) for kind, _, sql, _ in items if kind in ("tpch", "tpcds")]
    for r in range(rounds):
        t0 = time.perf_counter()
        for kind, sql in tpc:
            spark.catalog.setCurrentDatabase(kind)
            _plan_times(spark, sql, 1)
        print(f"planning warm-up {r + 1}/{rounds}: {len(tpc)} queries in {time.perf_counter() - t0:.0f} s", flush=True)


def _timed_runs(spark, sql, args, kind, plans, fired, entry) -> None:
    """Warm-up, then timed runs of both sides alternating; fills ``entry`` (see the module doc)."""
    # Identical plans (no rule fired) differ only by noise: they get fewer timed pairs and
    # serve as the noise control of the report. Synthetic cases always get the full count.
    pairs = args.runs if fired or kind == "synthetic" else args.same_plan_runs
    sides = {"off": [], "on": []}
    details = {}

    def run(side):  # the first run of each side also records its plan details
        first = side not in details
        res = _one_run(spark, sql, side == "on", first)
        if first:
            details[side] = {k: res[k] for k in _DETAIL_KEYS}
        return res

    # Warm-up of each side (JIT, generated code, file cache), in alternating order: with one
    # warm-up run shared by the sides, the side that missed it paid its first execution in a
    # timed run (identical plans then read about 1.15 in vanilla's disfavour).
    for r in range(args.warmup):
        for side in (("on", "off") if r % 2 == 0 else ("off", "on")):
            run(side)
    for r in range(pairs):
        for side in (("off", "on") if r % 2 == 0 else ("on", "off")):
            sides[side].append(run(side))
    for side in ("off", "on"):
        runs = sides[side]
        totals = [x["total_s"] for x in runs]
        entry[side] = {
            "median_s": _median(totals),
            "runs_s": totals,
            "noise": _rel_mad(totals),
            **plans[side],
            **details[side],
        }
    entry["ratio"] = entry["off"]["median_s"] / entry["on"]["median_s"]
    entry["fired"] = fired  # from planning; the executed plan is the same one


def _sketch_pass(spark, tables: dict[str, list[str]], setting: str) -> dict:
    """The sketch pass over every table of each kind (as ``bench/accuracy.py`` takes it), once per
    Spark process and before anything is planned or timed: a one-off cost the user pays explicitly,
    so it is reported apart (seconds per kind) and falls inside no query's time."""
    import pyspark_arrnf

    out = {"setting": setting, "sketch_s": {}, "sketched": {}, "not_sketched": []}
    if setting == "none":
        return out
    for kind, names in tables.items():
        t0 = time.perf_counter()
        lines = pyspark_arrnf.statistics(spark, names)
        out["sketch_s"][kind] = time.perf_counter() - t0
        skipped = [x for x in lines if "not sketched" in x]
        out["sketched"][kind] = len(lines) - len(skipped)
        out["not_sketched"] += skipped
        print(f"sketch pass {kind}: {len(lines) - len(skipped)} tables in {out['sketch_s'][kind]:.1f} s",
              *skipped, sep="\n  ", flush=True)
    return out


def worker(args) -> int:
    import pyspark_arrnf
    from pyspark_arrnf.data import generate, register_tables

    conf = {
        "spark.sql.shuffle.partitions": str(args.partitions),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": args.driver_memory,
        # A fixed heap: after the GC before each timed run the heap would otherwise shrink and grow
        # again inside the next run, which adds noise that has nothing to do with either side.
        "spark.driver.extraJavaOptions": f"-Xms{args.driver_memory}",
        "spark.sql.autoBroadcastJoinThreshold": "10485760" if args.broadcast == "on" else "-1",
    }
    spark = pyspark_arrnf.session(conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    kinds = args.kinds.split(",")
    tables = {}
    for kind in ("tpch", "tpcds"):
        if kind in kinds:
            tables[kind] = [f"{kind}.{t}" for t in register_tables(spark, generate(kind, args.scale), database=kind)]
    sketch = _sketch_pass(spark, tables, args.statistics)
    only = set(args.only.split(",")) if args.only else None
    results = []
    items = _workload(only, kinds)
    _plan_warmup(spark, items, args.plan_warmup)
    for i, (kind, name, sql, case) in enumerate(items):
        entry = {"kind": kind, "name": name, "broadcast": args.broadcast}
        saved = {}
        try:
            if kind in ("tpch", "tpcds"):
                spark.catalog.setCurrentDatabase(kind)
            else:
                spark.catalog.setCurrentDatabase("default")
                case.setup(spark, args.synthetic_scale)
                for k, v in case.settings:
                    saved[k] = spark.conf.get(k, None)
                    spark.conf.set(k, v)
            plans = _plan_times(spark, sql, args.plan_runs)
            fired = plans.pop("fired")
            for side, sha in _plan_digests(spark, sql).items():
                plans[side]["plan_sha"] = sha
            if args.plan_only:
                entry.update({"fired": fired, "off": plans["off"], "on": plans["on"]})
            else:
                _timed_runs(spark, sql, args, kind, plans, fired, entry)
        except Exception as e:  # noqa: BLE001 - one failing query must not end the run
            entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
        finally:
            for k, v in saved.items():
                spark.conf.unset(k) if v is None else spark.conf.set(k, v)
        results.append(entry)
        status = entry.get("error") or (f"ratio {entry['ratio']:.2f}" if "ratio" in entry else "planned") + \
            f"  fired {entry['fired']}"
        print(f"[{args.broadcast} {i + 1}/{len(items)}] {kind}:{name}  {status}", flush=True)
    Path(args.out).write_text(json.dumps({"broadcast": args.broadcast, "statistics": sketch, "queries": results}, indent=1))
    spark.stop()
    return 0


def _machine(args) -> dict:
    import pyspark

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpus": os.cpu_count(), "memory_gib": round(mem, 1), "platform": platform.platform(),
        "python": platform.python_version(), "java": java, "pyspark": pyspark.__version__,
        "scale_factor": args.scale, "synthetic_scale": args.synthetic_scale, "runs": args.runs,
        "warmup": args.warmup, "same_plan_runs": args.same_plan_runs,
        "plan_runs": args.plan_runs, "plan_warmup": args.plan_warmup, "shuffle_partitions": args.partitions, "driver_memory": args.driver_memory,
        "statistics": args.statistics,
        "master": "local[2]", "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", nargs="?", default="all", choices=["all", "worker", "report"])
    p.add_argument("--scale", type=float, default=1.0, help="TPC-H / TPC-DS scale factor")
    p.add_argument("--synthetic-scale", type=float, default=1.0, help="size of the synthetic cases (1 = issue size)")
    p.add_argument("--runs", type=int, default=4,
                   help="timed runs per side where a rule fired; pairs alternate which side goes first")
    p.add_argument("--warmup", type=int, default=2, help="untimed executions per query and side, sides alternating")
    p.add_argument("--same-plan-runs", type=int, default=2,
                   help="timed runs per side for queries where no rule fired (identical plans: noise control)")
    p.add_argument("--plan-runs", type=int, default=5, help="planning-only repetitions per side")
    p.add_argument("--plan-warmup", type=int, default=1,
                   help="untimed planning rounds over all TPC-H / TPC-DS queries before any timing")
    p.add_argument("--plan-only", action="store_true", help="time planning only (no query runs; after the sketch pass unless --statistics none): planning.json")
    p.add_argument("--statistics", default="sketch", choices=["sketch", "none"],
                   help="sketch: take the sketch pass over every TPC table first, timed apart (cost guards read "
                        "its row and distinct counts); none: no statistics beyond file metadata")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--driver-memory", default="12g")
    p.add_argument("--kinds", default="tpch,tpcds,synthetic")
    p.add_argument("--broadcast", default="on,off")
    p.add_argument("--only", help="comma-separated kind:name, e.g. tpcds:q71,synthetic:unit_join")
    p.add_argument("--out", help="worker: its JSON part; report: the results folder")
    args = p.parse_args(argv)
    if args.mode == "worker":
        return worker(args)
    if args.mode == "report":
        from report import write_report

        write_report(Path(args.out))
        return 0

    from pyspark_arrnf.data import generate

    for kind in ("tpch", "tpcds"):
        if kind in args.kinds.split(","):
            print(f"data: {generate(kind, args.scale)}", flush=True)
    out = Path(args.out or HERE / "results" / time.strftime("%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    for b in args.broadcast.split(","):
        part = out / f"part-broadcast-{b}.json"
        cmd = [sys.executable, __file__, "worker", "--broadcast", b, "--out", str(part)]
        for flag in ("scale", "synthetic_scale", "runs", "same_plan_runs", "plan_runs", "plan_warmup", "warmup", "partitions",
                     "driver_memory", "kinds", "only", "statistics"):
            v = getattr(args, flag)
            if v is not None:
                cmd += [f"--{flag.replace('_', '-')}", str(v)]
        if args.plan_only:
            cmd.append("--plan-only")
        subprocess.run(cmd, check=True)
        parts.append(part)
    loaded = [json.loads(part.read_text()) for part in parts]
    results = [e for d in loaded for e in d["queries"]]
    # Per broadcast setting (one Spark process each): the sketch pass's seconds per kind.
    stats = {"setting": args.statistics, "sketch_s": {d["broadcast"]: d["statistics"]["sketch_s"] for d in loaded},
             "sketched": loaded[0]["statistics"]["sketched"],
             "not_sketched": sorted({x for d in loaded for x in d["statistics"]["not_sketched"]})}
    if args.plan_only:
        from report import planning_by_rule, planning_summary, statistics_line

        (out / "planning.json").write_text(json.dumps({"machine": _machine(args), "statistics": stats, "queries": results}, indent=1))
        print(statistics_line(stats))
        print(planning_summary(results).to_markdown(index=False, floatfmt=".3f"))
        print(planning_by_rule(results).to_markdown(index=False, floatfmt=".3f"))
        return 0
    (out / "report.json").write_text(json.dumps({"machine": _machine(args), "statistics": stats, "queries": results}, indent=1))
    from report import write_report

    write_report(out)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
