"""Where the extension's planning time goes: CPU samples of the driver while it plans the TPC queries.

    python bench/planning_profile.py                          # plan the 125 queries 5 rounds, default broadcast
    python bench/planning_profile.py --broadcast off --rounds 3
    python bench/planning_profile.py --mode explain           # arrnf(df) of every planned query (estimates)
    python bench/planning_profile.py --report bench/results/<time>-profile   # summarize a profile again

The targets it serves are ratios of whole runs (``bench/run.py --plan-only``, ``bench/accuracy.py``);
this says which parts of the rules and of the estimator make them up. One Spark session with the
extension, the sketch pass taken, every query planned (and explained) twice untimed (JIT warm-up),
then async-profiler (``tools.profiler:async-profiler`` from Maven Central, fetched with ``mvn
dependency:get`` the first time) samples CPU time every 200 µs over ``--rounds`` rounds: ``plan``
mode runs the optimizer on every query (the rules' time), ``explain`` takes ``arrnf(df)`` of every
planned query (the ArrNF program and its estimates). The sketch pass is taken again just before the
samples unless ``--warm-sketch``: the sample's answers are then computed afresh, as the first time
a query is explained after a sketch pass (what ``bench/accuracy.py`` times).

Results under ``bench/results/<time>-profile/``: ``stacks.collapsed.gz`` (one line per stack, its
samples last: flame graph tools read it) and ``profile.md``: per rule and for the estimator the
share of the samples under it, then the frames most often under ``--focus`` (a frame name's part).
A profiler's shares are estimates too: they attribute the samples it took, and JIT inlining moves
them between frames; read them beside the timed runs.
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

PROFILER = ("tools.profiler", "async-profiler", "3.0")
RULES = ("EagerAggregation", "FactorizeUnionOfJoins", "FoldValueTerms", "FoldAggregateValueTerms",
         "EliminateUnitJoin", "EliminateSelfSemiAntiJoin", "NegationCancels")
# Frames whose samples are summed apart in the report (a frame name's part, as async-profiler writes it).
PARTS = {**{r: f"arrnf/rules/{r}$.apply" for r in RULES},
         "estimator (arrnf.cost.Estimator)": "arrnf/cost/Estimator.apply",
         "Spark's size of file relations (allFiles, anywhere)": "PartitioningAwareFileIndex.allFiles",
         "Spark's optimizer (every rule)": "QueryExecution.$anonfun$lazyOptimizedPlan"}


def profiler_jar() -> Path:
    """The async-profiler jar in the local Maven repository, fetched once from Maven Central."""
    group, artifact, version = PROFILER
    jar = Path.home() / ".m2" / "repository" / Path(*group.split(".")) / artifact / version / f"{artifact}-{version}.jar"
    if not jar.exists():
        subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact={group}:{artifact}:{version}", "-Dtransitive=false"],
                       check=True)
    return jar


def native_library(jar: Path, folder: Path) -> Path:
    """The profiler's Linux x64 library, taken out of its jar."""
    import zipfile

    with zipfile.ZipFile(jar) as z:
        z.extract("linux-x64/libasyncProfiler.so", folder)
    return folder / "linux-x64" / "libasyncProfiler.so"


def summarize(collapsed: Path, focus: str | None = None, top: int = 40) -> dict:
    """Samples per part of :data:`PARTS` (each stack counted once per part) and, with ``focus``,
    the frames most often found under the first frame containing it.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "s.gz"
    >>> _ = gzip.open(f, "wt").write("a;arrnf/cost/Estimator.apply;x 3\\na;b 1\\n")
    >>> s = summarize(f, focus="Estimator.apply")
    >>> s["total"], s["parts"]["estimator (arrnf.cost.Estimator)"], s["under"][:2]
    (4, 3, [('arrnf/cost/Estimator.apply', 3), ('x', 3)])
    """
    total, parts, under = 0, Counter(), Counter()
    for line in gzip.open(collapsed, "rt"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        for part, frame in PARTS.items():
            if any(frame in f for f in frames):
                parts[part] += n
        if focus:
            at = next((i for i, f in enumerate(frames) if focus in f), None)
            if at is not None:
                for f in set(frames[at:]):
                    under[f] += n
    return {"total": total, "parts": dict(parts), "under": sorted(under.items(), key=lambda kv: (-kv[1], kv[0]))[:top]}


def write_report(folder: Path, focus: str | None, settings: str) -> Path:
    import pandas as pd

    s = summarize(folder / "stacks.collapsed.gz", focus)
    opt = s["parts"].get("Spark's optimizer (every rule)") or 1
    rows = [{"part": k, "samples": v, "share of the optimizer's": v / opt}
            for k, v in sorted(s["parts"].items(), key=lambda kv: -kv[1])]
    lines = ["# Where planning time goes (async-profiler, CPU samples)", "", settings, "",
             f"{s['total']} samples in all.", "", pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"), ""]
    if focus and s["under"]:
        first = s["under"][0][1] or 1
        lines += [f"## Frames under `{focus}`", "", pd.DataFrame(
            [{"frame": f, "samples": n, "share": n / first} for f, n in s["under"]]).to_markdown(index=False, floatfmt=".3f"), ""]
    out = folder / "profile.md"
    out.write_text("\n".join(lines))
    return out


def collect(args, folder: Path) -> str:
    import pyspark_arrnf
    from pyspark_arrnf._jvm import clear_statistics
    from pyspark_arrnf.data import generate, register_tables
    from run import _workload

    jar = profiler_jar()
    library = native_library(jar, folder)
    conf = {"spark.sql.shuffle.partitions": "8", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": args.driver_memory, "spark.driver.extraClassPath": str(jar)}
    if args.broadcast == "off":
        conf["spark.sql.autoBroadcastJoinThreshold"] = "-1"
    spark = pyspark_arrnf.session(conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    kinds = args.kinds.split(",")
    tables = {k: [f"{k}.{t}" for t in register_tables(spark, generate(k, args.scale), database=k)] for k in kinds}
    items = [(k, n, sql) for k, n, sql, _ in _workload(set(args.only.split(",")) if args.only else None, kinds)]

    def sketch():
        for names in tables.values():
            pyspark_arrnf.statistics(spark, names)

    def round_():
        for kind, _, sql in items:
            spark.catalog.setCurrentDatabase(kind)
            df = spark.sql(sql)
            if args.mode == "plan":
                df._jdf.queryExecution().optimizedPlan()
            else:
                df._jdf.queryExecution().executedPlan()
                try:
                    pyspark_arrnf.arrnf(df)
                except Exception:  # noqa: BLE001 - a query the program fails on is profiled as far as it goes
                    pass

    sketch()
    for _ in range(2):
        round_()
    if not args.warm_sketch:
        clear_statistics(spark)
        sketch()
    profiler = spark._jvm.one.profiler.AsyncProfiler.getInstance(str(library))
    profiler.execute(f"start,event={args.event},interval=200us")
    t0 = time.perf_counter()
    for _ in range(args.rounds):
        round_()
    took = time.perf_counter() - t0
    stacks = folder / "stacks.collapsed"
    profiler.execute(f"stop,file={stacks},collapsed")
    spark.stop()
    with open(stacks, "rb") as raw, gzip.open(f"{stacks}.gz", "wb") as packed:  # deep stacks: hundreds of MB
        shutil.copyfileobj(raw, packed)
    stacks.unlink()
    shutil.rmtree(library.parent)
    return (f"Scale factor {args.scale:g}; {len(items)} queries, {args.rounds} round(s) of `{args.mode}` in {took:.1f} s; "
            f"broadcast {args.broadcast}; sketch pass {'warm' if args.warm_sketch else 'taken again before the samples'}; "
            f"event {args.event}; {time.strftime('%Y-%m-%d %H:%M:%S')}.")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["plan", "explain"], default="plan")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--broadcast", choices=["on", "off"], default="on", help="off: spark.sql.autoBroadcastJoinThreshold=-1")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--kinds", default="tpch,tpcds")
    p.add_argument("--only", help="kind:name,... (default: every query of --kinds)")
    p.add_argument("--warm-sketch", action="store_true", help="keep the sketch the warm-up rounds used")
    p.add_argument("--event", default="cpu", help="async-profiler's event (itimer where perf events are not allowed)")
    p.add_argument("--focus", default="arrnf/rules/EagerAggregation$.apply", help="list the frames under this one")
    p.add_argument("--driver-memory", default="12g")
    p.add_argument("--out", help="results folder (default bench/results/<time>-profile)")
    p.add_argument("--report", help="summarize this folder's stacks.collapsed.gz again (with --focus)")
    args = p.parse_args(argv)
    if args.report:
        print(write_report(Path(args.report), args.focus, "(summarized again)"))
        return 0
    # (absolute: the profiler loads its library by an absolute path)
    folder = Path(args.out or HERE / "results" / (time.strftime("%Y%m%d-%H%M%S") + "-profile")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    settings = collect(args, folder)
    print(write_report(folder, args.focus, settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
