"""Correctness gate, part 4 (Python side): hard plans through the Python session, planned only.

The full check — 2,000-branch unions, 300-deep join chains, 100 nested subqueries and EXCEPT ALLs,
1,000-column rows, each run with the rewrites on and off and the results compared — is the Scala
suite ``jvm-rules/src/test/scala/arrnf/HardPlansSuite.scala`` (executing them through PySpark
takes minutes). Here the same shapes go through PySpark as a user sends them (py4j threads, the
package's session settings) and are *optimized* with every rule on and with the kill switch off:
the rules finish, without stack overflow, without a contained rule failure, and wherever vanilla
Spark can plan the query the extension can too. Then through the normalizer.
"""
from __future__ import annotations

import pytest

from pyspark_arrnf.compare import arrnf_enabled


@pytest.fixture(scope="module")
def hard_tables(spark):
    spark.range(0, 20, 1, 1).selectExpr("id", "id % 3 AS k").createOrReplaceTempView("hpp_a")
    spark.range(0, 10, 1, 1).selectExpr("id", "id % 5 AS k").createOrReplaceTempView("hpp_b")


def union_2000() -> str:
    branches = []
    for i in range(2000):
        if i % 100 == 0:
            branches.append(f"SELECT a.id AS x, b.k AS y FROM hpp_a a JOIN hpp_b b ON a.k = b.k WHERE b.id > {i % 7}")
        elif i % 100 == 1:
            branches.append(f"SELECT t.id AS x, u.c AS y FROM hpp_b t CROSS JOIN (SELECT {i} AS c) u")
        else:
            branches.append(f"SELECT id AS x, {i} AS y FROM hpp_b")
    # Spark's SQL parser overflows its stack on 2,000 branches in one flat UNION ALL chain (vanilla
    # Spark: FAILED_TO_PARSE_TOO_COMPLEX), so the text groups them by 40; the analyzer and
    # optimizer flatten the groups again into one Union of 2,000 children.
    groups = [" UNION ALL ".join(branches[i:i + 40]) for i in range(0, len(branches), 40)]
    union = " UNION ALL ".join(f"SELECT * FROM ({g}) g{i}" for i, g in enumerate(groups))
    return f"SELECT count(*) AS n, sum(x) AS sx, sum(y) AS sy FROM ({union}) q"


def join_chain_300() -> str:
    joins = " ".join(
        f"CROSS JOIN (SELECT {i} AS c{i}) t{i}" if i % 50 == 0 else f"JOIN hpp_b t{i} ON t{i}.id = t0.id"
        for i in range(1, 300)
    )
    return f"SELECT count(*) AS n FROM (SELECT id, k FROM hpp_b WHERE id < 2) t0 {joins}"


def nested_100() -> str:
    q = "SELECT id AS x FROM hpp_a"
    for i in range(1, 101):
        q = f"SELECT s{i}.x + u{i}.one AS x FROM ({q}) s{i} CROSS JOIN (SELECT 1 AS one) u{i} WHERE s{i}.x IN (SELECT id FROM hpp_a)"
    return q


def wide_1000() -> str:
    cols = ", ".join(f"id + {i} AS c{i}" for i in range(1000))
    w = f"SELECT {cols} FROM hpp_b"
    return f"({w}) EXCEPT ALL ({w}) UNION ALL SELECT w.* FROM ({w}) w CROSS JOIN (SELECT 1 AS one) u"


HARD = [union_2000, join_chain_300, nested_100, wide_1000]


def failures(spark) -> dict:
    return dict(spark._jvm.arrnf.Api.ruleFailures())


def optimized(spark, sql, enabled):
    with arrnf_enabled(spark, enabled):
        try:
            return spark.sql(sql)._jdf.queryExecution().optimizedPlan(), None
        except Exception as e:  # noqa: BLE001 - vanilla Spark's own limits are a result too
            return None, e


@pytest.mark.parametrize("make", HARD, ids=lambda f: f.__name__)
def test_rules_finish_on_hard_plans(spark, hard_tables, conf, make):
    # Vanilla Spark's fixed-point analyzer gives up on 100 nested levels at its default of 100
    # iterations; both sides get more. The optimizer's limits stay Spark's defaults.
    conf({"spark.sql.analyzer.maxIterations": "1000"})
    sql = make()
    before = failures(spark)
    off, off_error = optimized(spark, sql, False)
    on, on_error = optimized(spark, sql, True)
    if off_error is None:
        assert on_error is None, f"only the extension fails to plan {make.__name__}: {str(on_error)[:1500]}"
    else:
        assert "Analysis" not in type(off_error).__name__, f"the test's SQL is wrong: {str(off_error)[:1500]}"
        assert on_error is not None and type(on_error) is type(off_error), (on_error, off_error)
    assert failures(spark) == before, f"a rule failed (and was skipped) on {make.__name__}: {failures(spark)}"


def test_normalizer_finishes_on_hard_plans(spark, hard_tables, conf):
    """The normalizer (``arrnf.Api.text``) writes a program of each hard plan."""
    conf({"spark.sql.analyzer.maxIterations": "1000"})  # as above: vanilla's analyzer needs it for 100 levels
    api = spark._jvm.arrnf.Api
    for make in HARD:
        text = str(api.text(spark.sql(make())._jdf, make.__name__))
        assert text.startswith(f"-- ArrNF {make.__name__}:") and "could not normalize" not in text, (
            make.__name__, text[:500])
