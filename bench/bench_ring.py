"""Ring laws against vanilla Spark, side by side in one session: for each law the query where it
fires, run alternately with ``spark.arrnf.enabled`` on and off; reports the ratio of median run
times (on / off) and the stateful operators of each physical plan (aggregates, joins, sorts,
exchanges, windows, generators).

    .venv/bin/python bench/bench_ring.py --rows 2000000 --runs 5

Results go to bench/results/ring.json (git-ignored). Not a test: numbers depend on the machine.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

STATEFUL = re.compile(r"\b(HashAggregate|SortAggregate|ObjectHashAggregate|SortMergeJoin|ShuffledHashJoin|"
                      r"BroadcastHashJoin|BroadcastNestedLoopJoin|CartesianProduct|Sort|Exchange|Window|Generate)\b")

LAWS = {
    "NegationCancels: Q EXCEPT ALL Q": "select a, k from big except all select a, k from big",
    "NegationCancels: (A UNION ALL B) EXCEPT ALL B":
        "(select k from big where a < 1000 union all select a % 997 from big) except all select a % 997 from big",
    "EliminateSelfSemiAntiJoin: Q EXCEPT Q": "select k, n from big except select k, n from big",
    "EliminateSelfSemiAntiJoin: Q INTERSECT Q": "select k, n from big intersect select k, n from big",
    "EliminateUnitJoin: left anti with a unit": "select a from big x left anti join (select 3 as c) u on x.n > u.c",
    "EliminateUnitJoin: left outer with a unit": "select a, c from big x left join (select 3 as c) u on x.n > u.c",
    "FoldValueTerms: -(-d), n - n, n * 0": "select sum(-(-d)), sum(n - n), sum(n * 0) from big",
    "FoldAggregateValueTerms: max/min/first of keys":
        "select k, n, max(k), min(n), first(k), count(*) from big group by k, n",
}


def stateful_ops(plan: str) -> int:
    return len(STATEFUL.findall(plan))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    import pyspark_arrnf

    spark = pyspark_arrnf.session(conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
                                        "spark.driver.memory": "2g",
                                        "spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(args.rows).selectExpr(
        "id as a", "id % 1000 as k", "if(id % 7 = 0, null, id % 13) as n", "cast(id as double) / 3 as d"
    ).write.mode("overwrite").saveAsTable("bench_ring_big")
    spark.table("bench_ring_big").createOrReplaceTempView("big")

    results = []
    for law, q in LAWS.items():
        times = {True: [], False: []}
        plans = {}
        for i in range(args.runs * 2 + 2):  # alternate; the first round of each side is warm-up
            on = i % 2 == 0
            spark.conf.set("spark.arrnf.enabled", str(on).lower())
            df = spark.sql(q)
            t0 = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            elapsed = time.perf_counter() - t0
            if i >= 2:
                times[on].append(elapsed)
            plans[on] = df._jdf.queryExecution().executedPlan().toString()
        med_on, med_off = statistics.median(times[True]), statistics.median(times[False])
        row = {"law": law, "query": q, "median_s_on": round(med_on, 3), "median_s_off": round(med_off, 3),
               "time_ratio_on_off": round(med_on / med_off, 3),
               "stateful_on": stateful_ops(plans[True]), "stateful_off": stateful_ops(plans[False])}
        results.append(row)
        print(f"{law:50s} on {med_on:7.3f}s off {med_off:7.3f}s ratio {row['time_ratio_on_off']:6.3f} "
              f"stateful ops {row['stateful_on']} vs {row['stateful_off']}", flush=True)
    spark.conf.set("spark.arrnf.enabled", "true")
    spark.sql("drop table if exists bench_ring_big")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "ring.json").write_text(json.dumps({"rows": args.rows, "runs": args.runs, "results": results}, indent=2))
    print(f"written {out / 'ring.json'}")
    spark.stop()


if __name__ == "__main__":
    main()
