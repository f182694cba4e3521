"""Soundness of FoldValueTerms (``-(-x)``, ``x - x``, ``x * 0``): a 38- or 35-digit decimal negation
is not folded (Spark's rounds), a term whose column can fail keeps its error; it still folds on
DECIMAL(34), doubles, ANSI off and columns that cannot fail. See ``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import re

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_OFF, ANSI_ON, FAILING_INTEGRAL, both_ways,
    views,  # noqa: F401  (fixtures)
)
from pyspark_arrnf.testing import assert_same_both_ways  # noqa: E402


def test_double_negation_of_decimal_38_keeps_sparks_rounding(spark, views):
    q = ("SELECT x, -(-x) AS y FROM (SELECT CAST(id AS DECIMAL(38,0)) * "
         "CAST(123456789012345678901234567890123456 AS DECIMAL(38,0)) AS x FROM range(1,3))")
    on, off, on_plan, _ = both_ways(spark, q)
    assert "- -" in on_plan or "--" in on_plan, on_plan
    # vanilla rounds the negation to 34 digits: the test would see a folded `-(-x)`
    assert any(row.x != row.y for row in off.rows), off.rows


def test_double_negation_of_decimal_35_is_not_folded(spark, views):
    q = ("SELECT x, -(-x) AS y FROM (SELECT CAST(CAST(id AS STRING) || '2345678901234567890123456789012345' "
         "AS DECIMAL(35,0)) AS x FROM range(1,3))")
    _, off, on_plan, _ = both_ways(spark, q)
    assert "- -" in on_plan or "--" in on_plan, on_plan
    assert any(row.x != row.y for row in off.rows), off.rows


def test_double_negation_of_decimal_34_still_folds(spark, views):
    q = ("SELECT x, -(-x) AS y FROM (SELECT CAST(CAST(id AS STRING) || '234567890123456789012345678901234' "
         "AS DECIMAL(34,0)) AS x FROM range(1,3))")
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert "- -" not in on_plan and "--" not in on_plan, on_plan
    assert "--" in off_plan or "- -" in off_plan, off_plan
    assert all(row.x == row.y for row in on.rows)


def test_double_negation_of_doubles_still_folds(spark, views):
    q = ("SELECT d, -(-d) AS y FROM (SELECT element_at(array(0.5D, -0.0D, double('NaN'), double('-Infinity')), "
         "CAST(id % 4 + 1 AS INT)) AS d FROM range(8))")
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert "- -" not in on_plan and "--" not in on_plan, on_plan
    assert "--" in off_plan or "- -" in off_plan, off_plan


def test_minus_itself_keeps_the_ansi_multiply_overflow(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT d - d FROM (SELECT id * 9223372036854775807 AS d FROM range(1,4))"
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None
    assert re.search(r"d#\d+L? - d#", on_plan), on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING_INTEGRAL],
                         ids=[f[0] for f in FAILING_INTEGRAL])
def test_minus_itself_keeps_the_error_of_its_column(spark, views, conf, expr, settings):
    # coalesce(…, 0) makes the column non-nullable: a folded `d - d` would be a plain 0 and the
    # column's definition (with its error) would be pruned
    conf(settings)
    q = f"SELECT d - d AS z FROM (SELECT coalesce({expr}, 0) AS d FROM r)"
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (off.rows, on.rows)
    assert re.search(r"d#\d+L? - d#", on_plan), on_plan


def test_times_zero_keeps_the_decimal_overflow(spark, views, conf):
    conf(ANSI_ON)
    # two references keep `d` a column (CollapseProject does not inline it); non-nullable, so a
    # folded `d * 0` is a plain 0 (Catalyst folds `x * 0` itself only for integral columns)
    q = ("SELECT d * 0 AS z1, 0 * d AS z2 FROM (SELECT coalesce(CAST(id AS DECIMAL(38,0)) * "
         "CAST(50000000000000000000000000000000000000 AS DECIMAL(38,0)), 0) AS d FROM range(1,4))")
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None
    assert re.search(r"d#\d+ \* 0", on_plan) and re.search(r"0 \* d#\d+", on_plan), on_plan


def test_minus_itself_still_folds_without_ansi(spark, views, conf):
    conf(ANSI_OFF)  # the multiplication wraps: nothing can fail
    q = "SELECT d - d FROM (SELECT id * 9223372036854775807 AS d FROM range(1,4))"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert not re.search(r"d#\d+L? - d#", on_plan), on_plan
    assert re.search(r"d#\d+L? - d#", off_plan), off_plan
    assert [r[0] for r in on.rows] == [0, 0, 0]


def test_times_zero_still_folds_without_ansi(spark, views, conf):
    conf(ANSI_OFF)  # a decimal overflow is NULL, coalesced to 0
    q = ("SELECT d * 0 AS z1, 0 * d AS z2 FROM (SELECT coalesce(CAST(id AS DECIMAL(38,0)) * "
         "CAST(50000000000000000000000000000000000000 AS DECIMAL(38,0)), 0) AS d FROM range(1,4))")
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert not re.search(r"d#\d+ \* 0|0 \* d#\d+", on_plan), on_plan
    assert re.search(r"d#\d+ \* 0", off_plan), off_plan


def test_minus_itself_still_folds_a_column_that_cannot_fail_under_ansi(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT d - d AS z FROM (SELECT IF(k > 3, k, 0) AS d FROM r)"
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert not re.search(r"d#\d+L? - d#", on_plan), on_plan
    assert re.search(r"d#\d+L? - d#", off_plan), off_plan


def test_a_folded_difference_does_not_let_spark_drop_a_failing_join_input(spark, views, conf):
    """The random gate's case (seed 77, ANSI on): ``q5.c0 - q5.c0`` folded to 0 made ``j1.c0 = j4.c0
    AND j1.c0 > 0`` a contradiction, and Spark dropped the join with the input whose filter raises
    ('boom' for k = 4): vanilla raises, the extension returned NULL. Not folded where the plan has
    a predicate and something in it can fail."""
    conf(ANSI_ON)
    spark.range(10).selectExpr("id AS k").createOrReplaceTempView("fv")
    q = ("SELECT sum(q6.c0) AS s FROM (SELECT j1.c0 FROM (SELECT l2.c0 FROM (SELECT k AS c0 FROM fv) l2 "
         "JOIN (SELECT k AS c0 FROM fv WHERE CASE WHEN k = 4 THEN raise_error('boom') ELSE k END > 0) r3 "
         "ON l2.c0 = r3.c0) j1 JOIN (SELECT q5.c0 - q5.c0 AS c0 FROM (SELECT k AS c0 FROM fv) q5) j4 "
         "ON j1.c0 = j4.c0 WHERE j1.c0 > 0) q6")
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (on, off)
    assert re.search(r"#(\d+)L? - \w+#\1L?\)", on_plan), on_plan  # the term kept
    # with nothing that can fail, the same shape still folds
    safe = q.replace("CASE WHEN k = 4 THEN raise_error('boom') ELSE k END", "k").replace("sum(", "max(")  # (ANSI sum overflows)
    _, _, safe_plan, _ = both_ways(spark, safe)
    assert not re.search(r"#(\d+)L? - \w+#\1L?\)", safe_plan), safe_plan


def test_a_max_of_a_key_is_not_folded_where_the_plan_has_a_predicate_and_can_fail(spark, views, conf):
    """``max(k)`` of a group by ``k`` folded to ``k`` (FoldAggregateValueTerms) is an alias Spark's
    constraint propagation reads, as FoldValueTerms' constants are (whose fold let Spark drop a
    failing join input: the case above). A precaution, the same guard: where the plan has a predicate
    and something in it can fail, not folded; with nothing that can fail, folded."""
    conf(ANSI_ON)
    spark.range(10).selectExpr("id AS k").createOrReplaceTempView("fa")
    q = ("SELECT * FROM (SELECT k, max(k) AS m FROM fa WHERE CASE WHEN k = 4 THEN raise_error('boom') "
         "ELSE k END >= 0 GROUP BY k) WHERE m > 5")
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (on, off)
    assert "max(" in on_plan, on_plan
    safe = q.replace("CASE WHEN k = 4 THEN raise_error('boom') ELSE k END", "k")
    _, _, safe_plan, _ = both_ways(spark, safe)
    assert "max(" not in safe_plan, safe_plan


@pytest.fixture(scope="module")
def parquet_tables(spark, tmp_path_factory):
    """An empty and a 3-row Parquet table of a nullable INT `k`: files, so that Spark cannot see the
    empty one is empty while it plans (it would over a `range(0)`)."""
    d = tmp_path_factory.mktemp("fold_constant")
    spark.createDataFrame([], "k INT").write.parquet(str(d / "empty"))
    spark.createDataFrame([(1,), (2,), (None,)], "k INT").write.parquet(str(d / "full"))
    spark.read.parquet(str(d / "empty")).createOrReplaceTempView("fold_empty")
    spark.read.parquet(str(d / "full")).createOrReplaceTempView("fold_full")


@pytest.mark.parametrize("q,settings", [
    ("SELECT 1 DIV (x - x) AS y FROM (SELECT coalesce(k, 0) AS x FROM fold_empty)", ANSI_ON),
    ("SELECT element_at(array(1, 2), x - x) AS y FROM (SELECT coalesce(k, 0) AS x FROM fold_empty)", ANSI_OFF),
    ("SELECT 1 DIV (x - x) AS y FROM (SELECT coalesce(k, 0) AS x FROM fold_empty) UNION ALL SELECT k FROM fold_full",
     ANSI_ON),
    ("SELECT k, 10 DIV (max(3) - 3) AS y FROM fold_empty GROUP BY k", ANSI_ON),
], ids=["div_over_empty", "element_at_ansi_off", "union_with_empty_branch", "aggregate_literal"])
def test_a_fold_makes_no_failing_expression_constant(spark, conf, parquet_tables, q, settings):
    """Folded to a literal, `x - x` (or `max(3)`) made `1 DIV 0` a constant, which Spark's constant
    folding evaluated while planning: DIVIDE_BY_ZERO (INVALID_INDEX_OF_ZERO) where vanilla Spark
    returns the rows (a tester). No rule folds there; the results are the same both ways."""
    conf(settings)
    on, off = assert_same_both_ways(spark, q)
    assert on.error is None and off.error is None, (on.error, off.error)


def test_a_fold_under_a_sum_that_can_overflow_still_folds(spark, conf, parquet_tables):
    """An aggregate's own overflow (ANSI `sum`) happens over rows, never while Spark plans: it does
    not stop the fold of `max(k)` by its key."""
    conf(ANSI_ON)
    on, _, on_plan, off_plan = both_ways(spark, "SELECT k, max(k) AS m, sum(k) AS s FROM fold_full GROUP BY k")
    assert "max(" not in on_plan and "max(" in off_plan, on_plan
