"""Soundness of EliminateSelfSemiAntiJoin (``Q EXCEPT Q`` is empty, ``Q INTERSECT Q`` is ``DISTINCT
Q``): not where Q can fail, samples without a seed or reads a random RDD; it still collapses
where the law holds. See ``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_OFF, ANSI_ON, FAILING, FAILING_IDS, both_ways,
    random_rdd_df, views,  # noqa: F401  (fixtures)
)


def test_except_of_itself_keeps_divide_by_zero(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT 10 DIV (k-3) AS v FROM r EXCEPT SELECT 10 DIV (k-3) FROM r"
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None
    assert "LeftAnti" in on_plan, on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_except_of_itself_keeps_the_error(spark, views, conf, expr, settings):
    conf(settings)
    q = f"SELECT {expr} AS v FROM r EXCEPT SELECT {expr} FROM r"
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (off.rows, on.rows)
    assert "LeftAnti" in on_plan, on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_intersect_of_itself_declines_when_it_can_fail(spark, views, conf, expr, settings):
    conf(settings)
    q = f"SELECT {expr} AS v FROM r INTERSECT SELECT {expr} FROM r"
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (off.rows, on.rows)
    assert "LeftSemi" in on_plan, on_plan


def test_except_of_an_unseeded_sample_does_not_cancel(spark, views):
    q = ("WITH s AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT)) "
         "SELECT count(*) > 0 AS left_over FROM (SELECT * FROM s EXCEPT SELECT * FROM s)")
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.rows[0].left_over is True and on.rows[0].left_over is True
    assert "LeftAnti" in on_plan, on_plan


def test_intersect_of_an_unseeded_sample_does_not_collapse(spark, views):
    q = ("WITH s AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT)) "
         "SELECT count(*) < 100 AS fewer FROM (SELECT * FROM s INTERSECT SELECT * FROM s)")
    _, _, on_plan, _ = both_ways(spark, q)
    assert "LeftSemi" in on_plan, on_plan


def test_except_of_a_random_rdd_does_not_cancel(spark, views, random_rdd_df):
    df = random_rdd_df
    _, _, on_plan, _ = both_ways(spark, lambda: df.subtract(df).select("i"))
    assert "LeftAnti" in on_plan, on_plan


def test_except_and_intersect_of_a_non_failing_query_still_collapse(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT k % 7 AS a, IF(k % 2 = 0, NULL, k) AS n FROM r {op} SELECT k % 7, IF(k % 2 = 0, NULL, k) FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q.format(op="EXCEPT"))
    assert on.rows == []
    assert "LeftAnti" not in on_plan and "LocalRelation <empty>" in on_plan, on_plan
    assert "LeftAnti" in off_plan, off_plan
    on, _, on_plan, off_plan = both_ways(spark, q.format(op="INTERSECT"))
    assert len(on.rows) == 17  # distinct (k % 7, n) pairs
    assert "LeftSemi" not in on_plan, on_plan
    assert "LeftSemi" in off_plan, off_plan


def test_except_of_itself_still_cancels_without_ansi(spark, views, conf):
    conf(ANSI_OFF)
    q = "SELECT 10 DIV (k-3) AS v FROM r EXCEPT SELECT 10 DIV (k-3) FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows == []
    assert "LeftAnti" not in on_plan, on_plan
    assert "LeftAnti" in off_plan, off_plan


def test_except_of_a_seeded_sample_over_a_range_view_still_cancels(spark, views):
    q = ("WITH s AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT) REPEATABLE (7)) "
         "SELECT count(*) AS left_over FROM (SELECT * FROM s EXCEPT SELECT * FROM s)")
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows[0].left_over == 0
    assert "LeftAnti" not in on_plan, on_plan
    assert "LeftAnti" in off_plan, off_plan
