"""Normalizing is linear in plan size: a 2,000-branch UNION ALL and a 300-deep chain of joins.

Builds both plans directly in their optimized shape (untimed), then times the normalizer alone
(optimized plan → ArrNF program → JSON and text) in the JVM, median of several runs. Writes
bench/results/normalize.json. A script, not a test:

    .venv/bin/python bench/bench_normalize.py [--union 2000] [--joins 300] [--runs 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def build_union(spark, n: int):
    """A flat Union of n branches, as Spark's optimizer leaves it (built directly: Spark's SQL
    parser overflows on 2,000 UNION ALLs; see arrnf.bench.PlanShapes)."""
    return spark._jvm.arrnf.bench.PlanShapes.union(n)


def build_chain(spark, n: int):
    """k0 ⋈ k1 ⋈ … ⋈ kn, left-deep, each join on the previous key (built directly: analyzing a
    300-join DataFrame step by step takes Spark minutes)."""
    return spark._jvm.arrnf.bench.PlanShapes.joinChain(n)


def spark_optimized_chain(spark, n: int):
    """The same chain through the DataFrame API and Spark's optimizer (slow: for small n only)."""
    from pyspark.sql import functions as F

    df = spark.range(10).toDF("k0")
    for i in range(1, n + 1):
        df = df.join(spark.range(10 + i).toDF(f"k{i}"), F.col(f"k{i - 1}") == F.col(f"k{i}"))
    return df._jdf.queryExecution().optimizedPlan()


def time_normalize(spark, plan, name: str, runs: int) -> dict:
    arrnf = spark._jvm.arrnf.normalize.Arrnf  # of a plan: arrnf.Api takes DataFrames only
    times, text_times = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        js = arrnf.jsonOfPlan(plan, name)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        arrnf.textOfPlan(plan, name)
        text_times.append(time.perf_counter() - t0)
    d = json.loads(js)
    return {"median_json_s": statistics.median(times), "median_text_s": statistics.median(text_times),
            "min_json_s": min(times), "blocks": len(d["blocks"]), "arrangements": d["arrangements"],
            "branches_of_result": len(d["blocks"][-1]["branches"]), "json_bytes": len(js)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--union", type=int, default=2000)
    ap.add_argument("--joins", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--spark-chain", type=int, default=30,
                    help="also a chain of this many joins built with DataFrame.join and optimized by Spark")
    args = ap.parse_args(argv)

    import pyspark_arrnf

    spark = pyspark_arrnf.session(conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"})
    spark.sparkContext.setLogLevel("ERROR")
    results = {}

    t0 = time.perf_counter()
    union = build_union(spark, args.union)
    results["union"] = {"branches": args.union, "build_s": time.perf_counter() - t0,
                        **time_normalize(spark, union, "u", args.runs)}
    print(f"union of {args.union}: {results['union']}", flush=True)

    t0 = time.perf_counter()
    chain = build_chain(spark, args.joins)
    results["join_chain"] = {"joins": args.joins, "build_s": time.perf_counter() - t0,
                             **time_normalize(spark, chain, "chain", args.runs)}
    print(f"chain of {args.joins} joins: {results['join_chain']}", flush=True)

    if args.spark_chain:
        t0 = time.perf_counter()
        plan = spark_optimized_chain(spark, args.spark_chain)
        results["spark_optimized_chain"] = {"joins": args.spark_chain, "build_and_optimize_s": time.perf_counter() - t0,
                                            **time_normalize(spark, plan, "chain", args.runs)}
        print(f"Spark-optimized chain of {args.spark_chain}: {results['spark_optimized_chain']}", flush=True)

    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "normalize.json").write_text(json.dumps(results, indent=2))
    ok = all(r["median_json_s"] < 1.0 for r in results.values())
    print(("OK" if ok else "SLOW") + f": results in {out / 'normalize.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
