"""Benchmark of FactorizeUnionOfJoins: vanilla Spark vs. the extension, side by side in one run.

    .venv/bin/python bench/bench_factorize.py synthetic        # 3 branches x 4M rows, shuffle joins
    .venv/bin/python bench/bench_factorize.py tpcds [--scale 1] # TPC-DS queries, broadcast on and off
    .venv/bin/python bench/bench_factorize.py all

Each query is planned and run with the rewrites off and on, alternating, several times; the table
shows medians, their ratio (vanilla / extension: > 1 means the extension is faster) and the number
of Exchange / Sort / join operators in both final (adaptive) physical plans. A TPC-DS query whose plan
the rule leaves unchanged is run once each way only (there is nothing to compare but noise).
Results go to bench/results/factorize-<kind>.json.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyspark_arrnf
from pyspark_arrnf.data import generate, query, register_tables

RESULTS = Path(__file__).parent / "results"
TPCDS = ["q71", "q76", "q33", "q56", "q60", "q66", "q75", "q80", "q14a", "q14b", "q23a", "q23b"]
ROWS = 4_000_000


@dataclass
class Row:
    name: str
    mode: str
    fired: bool
    vanilla_s: list = field(default_factory=list)
    arrnf_s: list = field(default_factory=list)
    vanilla_ops: dict = field(default_factory=dict)
    arrnf_ops: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if not self.fired and len(self.vanilla_s) < 2:
            return None
        return statistics.median(self.vanilla_s) / statistics.median(self.arrnf_s)


def ops(plan: str) -> dict:
    """Counts of stateful operators in a physical plan's text (one operator per line)."""
    lines = plan.splitlines()

    def count(pat):
        return sum(1 for ln in lines if re.search(pat, ln))

    return {
        "Exchange": count(r"\b(ShuffleExchange|Exchange hashpartitioning|Exchange SinglePartition|Exchange rangepartitioning|Exchange RoundRobin)"),
        "BroadcastExchange": count(r"BroadcastExchange"),
        "Sort": count(r"[-+:] *Sort \[|^Sort \["),
        "SortMergeJoin": count(r"SortMergeJoin"),
        "BroadcastHashJoin": count(r"BroadcastHashJoin"),
        "ShuffledHashJoin": count(r"ShuffledHashJoin"),
    }


def firings(spark) -> int:
    return int(spark._jvm.arrnf.rules.FactorizeStatus.firings())


def run_once(spark, sql: str, enabled: bool):
    pyspark_arrnf.set_enabled(spark, enabled)
    before = firings(spark)
    df = spark.sql(sql)
    t0 = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    dt = time.perf_counter() - t0
    plan = df._jdf.queryExecution().executedPlan().toString()
    return dt, plan, firings(spark) > before


def compare(spark, name: str, mode: str, sql: str, runs: int, always_time: bool) -> Row:
    t_off, plan_off, _ = run_once(spark, sql, False)  # also the warm-up (file listing, JIT)
    t_on, plan_on, fired = run_once(spark, sql, True)
    row = Row(name, mode, fired, vanilla_ops=ops(plan_off), arrnf_ops=ops(plan_on))
    if fired or always_time:
        for _ in range(runs):
            row.vanilla_s.append(run_once(spark, sql, False)[0])
            row.arrnf_s.append(run_once(spark, sql, True)[0])
    else:
        # The rule left the plan alone: one run each way, no ratio (the first run also warmed up).
        row.vanilla_s, row.arrnf_s = [t_off], [t_on]
    pyspark_arrnf.set_enabled(spark, True)
    print(fmt(row), flush=True)
    return row


def fmt(r: Row) -> str:
    v, a = r.vanilla_ops, r.arrnf_ops
    joins = lambda o: o["SortMergeJoin"] + o["BroadcastHashJoin"] + o["ShuffledHashJoin"]  # noqa: E731
    ratio = f"{r.ratio:5.2f}x" if r.ratio else "  -  "
    return (f"{r.name:10s} {r.mode:9s} fired={'yes' if r.fired else 'no ':3s} "
            f"vanilla {statistics.median(r.vanilla_s):7.2f}s  arrnf {statistics.median(r.arrnf_s):7.2f}s  ratio {ratio} "
            f"(runs {len(r.vanilla_s)})  Exchange {v['Exchange']}->{a['Exchange']}  Sort {v['Sort']}->{a['Sort']}  "
            f"joins {joins(v)}->{joins(a)} (SMJ {v['SortMergeJoin']}->{a['SortMergeJoin']}, "
            f"BHJ {v['BroadcastHashJoin']}->{a['BroadcastHashJoin']})  "
            f"BroadcastExchange {v['BroadcastExchange']}->{a['BroadcastExchange']}")


def session():
    return pyspark_arrnf.session(conf={
        "spark.sql.shuffle.partitions": "8",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "2g",
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
    })


SYNTHETIC = """
select tag, count(*) as n, sum(v) as s, sum(av) as sa from (
  select a.k, a.av, b1.v1 as v, 'one' as tag from a join b1 on a.k = b1.x
  union all select a.k, a.av, b2.v2, 'two' from a join b2 on a.k = b2.y
  union all select a.k, a.av, b3.v3, 'three' from a join b3 on a.k = b3.z
) u group by tag"""


def synthetic(spark, runs: int) -> list[Row]:
    folder = Path(tempfile.gettempdir()) / f"arrnf-bench-factorize-{ROWS}"
    if not (folder / "_DONE").exists():
        folder.mkdir(parents=True, exist_ok=True)
        spark.range(ROWS).selectExpr("id AS k", "id % 1000 AS av").write.mode("overwrite").parquet(str(folder / "a"))
        for i, (col, mul) in enumerate([("x", 7), ("y", 11), ("z", 13)], start=1):
            spark.range(ROWS).selectExpr(f"(id * {mul}) % {ROWS} AS {col}", f"id AS v{i}") \
                .write.mode("overwrite").parquet(str(folder / f"b{i}"))
        (folder / "_DONE").touch()
    for name in ("a", "b1", "b2", "b3"):
        spark.read.parquet(str(folder / name)).createOrReplaceTempView(name)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    return [compare(spark, "3x4M", "shuffle", SYNTHETIC, runs, always_time=True)]


def tpcds(spark, runs: int, scale: float, names: list[str], modes=("broadcast", "shuffle")) -> list[Row]:
    db = f"tpcds_sf{str(scale).replace('.', '_')}"
    if not spark.catalog.databaseExists(db):
        register_tables(spark, generate("tpcds", scale), database=db)
    spark.catalog.setCurrentDatabase(db)
    rows = []
    for mode, threshold in (("broadcast", str(10 * 1024 * 1024)), ("shuffle", "-1")):
        if mode not in modes:
            continue
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
        for name in names:
            rows.append(compare(spark, name, mode, query("tpcds", name), runs, always_time=False))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["synthetic", "tpcds", "all"])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--queries", default=",".join(TPCDS))
    p.add_argument("--modes", default="broadcast,shuffle", help="broadcast, shuffle or both")
    p.add_argument("--out", default="factorize-tpcds.json")
    a = p.parse_args(argv)
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    RESULTS.mkdir(parents=True, exist_ok=True)
    if a.what in ("synthetic", "all"):
        rows = synthetic(spark, a.runs)
        (RESULTS / "factorize-synthetic.json").write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
    if a.what in ("tpcds", "all"):
        rows = tpcds(spark, a.runs, a.scale, a.queries.split(","), tuple(a.modes.split(",")))
        (RESULTS / a.out).write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
