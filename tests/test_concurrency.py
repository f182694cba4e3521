"""Correctness gate, part 5: many threads planning and running different queries on one session.

Six Python threads (each pinned to its own JVM thread by PySpark) plan and run a mix of TPC-H
queries and random queries from ``randomsql`` on the one shared session, every query twice, in a
shuffled order. Every result must equal the result of the same query run alone, and no rule may
fail while doing so (a failing rule is contained by ``GuardedRule``, so a thread-safety bug in a
rule would otherwise hide: the failure counters must not move).
"""
from __future__ import annotations

import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, seed, settings
from hypothesis import HealthCheck, Phase

from pyspark_arrnf.data import queries as workload

sys.path.insert(0, os.path.dirname(__file__))
import randomsql  # noqa: E402  (tests/ is not a package)

THREADS = 6
TPCH = ["q3", "q6", "q12", "q19"]
RING_SHAPES = [
    "SELECT t.k AS c0, u.one AS c1 FROM rt0 t CROSS JOIN (SELECT 1 AS one) u",
    "(SELECT a.k AS c0, b.a AS c1 FROM rt0 a JOIN rt1 b ON a.k = b.k) "
    "UNION ALL (SELECT a.k AS c0, c.b AS c1 FROM rt0 a JOIN rt2 c ON a.k = c.k)",
    "(SELECT k AS c0 FROM rt0) EXCEPT ALL (SELECT k AS c0 FROM rt0)",
    "(SELECT k AS c0, a AS c1 FROM rt1) INTERSECT ALL (SELECT k AS c0, a AS c1 FROM rt1)",
]


def random_queries(n: int, at: int = 7) -> list[str]:
    """``n`` distinct queries from the random generator, the same ones on every run."""
    out: list[str] = []

    @settings(max_examples=4 * n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @seed(at)
    @given(randomsql.queries(max_depth=2))
    def collect(sql):
        if sql not in out and len(out) < n:
            out.append(sql)

    collect()
    return out


def rows(spark, sql):
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_threads_give_the_results_of_one_at_a_time(spark, tpch_db, use_db, tmp_path_factory):
    randomsql.create_tables(spark, str(tmp_path_factory.mktemp("concurrency")))
    use_db(tpch_db)  # the current database is session state: set once, before the threads
    work = [workload("tpch")[q] for q in TPCH] + RING_SHAPES + random_queries(20)
    alone = {sql: rows(spark, sql) for sql in work}
    failures_before = dict(spark._jvm.arrnf.Api.ruleFailures())

    jobs = work * 2
    random.Random(5).shuffle(jobs)
    with ThreadPoolExecutor(THREADS) as pool:
        together = list(pool.map(lambda sql: (sql, rows(spark, sql)), jobs))

    assert len(together) == 2 * len(work)
    for sql, got in together:
        assert randomsql.same_bag(got, alone[sql]), f"a concurrent run differs from running alone:\n{sql}"
    assert dict(spark._jvm.arrnf.Api.ruleFailures()) == failures_before, "a rule failed under concurrency"
