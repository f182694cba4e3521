"""Soundness of NegationCancels (``Q EXCEPT ALL Q``, ``(A UNION ALL B) EXCEPT ALL B``): failing terms
keep their errors, collated strings (also inside a struct or an array), unseeded samples, seeded
samples over a union and random RDDs do not cancel; it still cancels where the law holds. See
``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_OFF, ANSI_ON, FAILING, FAILING_IDS, both_ways, marked_terms,
    random_rdd_df, views,  # noqa: F401  (fixtures)
)
from pyspark_arrnf.testing import assert_same_both_ways  # noqa: E402


def test_except_all_of_itself_keeps_divide_by_zero(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT 10 DIV (k-3) AS v FROM r EXCEPT ALL SELECT 10 DIV (k-3) FROM r"
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert off.error is not None and on.error is not None
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


def test_union_minus_a_term_keeps_divide_by_zero(spark, views, conf):
    conf(ANSI_ON)
    q = "(SELECT k FROM r UNION ALL SELECT 10 DIV (k-3) FROM r) EXCEPT ALL SELECT 10 DIV (k-3) FROM r"
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert off.error is not None and on.error is not None
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_except_all_of_itself_keeps_the_error(spark, views, conf, expr, settings):
    conf(settings)
    q = f"SELECT {expr} AS v FROM r EXCEPT ALL SELECT {expr} FROM r"
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (off.rows, on.rows)
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_union_minus_a_failing_term_keeps_the_error(spark, views, conf, expr, settings):
    conf(settings)
    q = f"(SELECT {expr} AS v FROM r WHERE k < 2 UNION ALL SELECT {expr} FROM r) EXCEPT ALL SELECT {expr} FROM r"
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert off.error is not None and on.error is not None, (off.rows, on.rows)
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


def test_except_all_of_itself_still_cancels_without_ansi(spark, views, conf):
    conf(ANSI_OFF)  # 10 DIV 0 is NULL: nothing can fail
    q = "SELECT 10 DIV (k-3) AS v FROM r EXCEPT ALL SELECT 10 DIV (k-3) FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows == []
    assert marked_terms(on_plan) == 0 and "LocalRelation <empty>" in on_plan, on_plan
    assert marked_terms(off_plan) == 2, off_plan


def test_except_all_of_a_non_failing_query_still_cancels_under_ansi(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT k, k > 3 AS b, IF(k % 2 = 0, NULL, k) AS n FROM r EXCEPT ALL SELECT k, k > 3, IF(k % 2 = 0, NULL, k) FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows == []
    assert marked_terms(on_plan) == 0 and "LocalRelation <empty>" in on_plan, on_plan
    assert marked_terms(off_plan) == 2, off_plan


def test_union_minus_a_non_failing_term_still_cancels_under_ansi(spark, views, conf):
    conf(ANSI_ON)
    q = "(SELECT k FROM r WHERE k < 5 UNION ALL SELECT k % 3 FROM r) EXCEPT ALL SELECT k % 3 FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert sorted(r[0] for r in on.rows) == [0, 1, 2, 3, 4]
    assert "Union" not in on_plan and marked_terms(on_plan) < marked_terms(off_plan) == 3, on_plan


@pytest.mark.parametrize("q", [
    "(SELECT 4 AS c0 UNION ALL SELECT k FROM r) EXCEPT ALL SELECT k FROM r",
    "(SELECT k AS c0 FROM r UNION ALL SELECT c0 FROM (SELECT 4 AS c0, 5 AS c1)) EXCEPT ALL SELECT k FROM r",
    "(SELECT k AS c0 FROM r UNION ALL SELECT 2 + 2 AS c0 FROM r WHERE k < 3) EXCEPT ALL SELECT k FROM r",
], ids=["constant_first", "constant_below_a_projection", "constant_expression_second"])
def test_a_constant_term_left_alone_keeps_its_union(spark, views, q):
    """Found by the random gate: with one term left whose column is a constant, the union's columns
    became constants and Spark's FoldablePropagation put a literal among the outputs of the
    EXCEPT ALL's Generate (ClassCastException, every such query failed). The rule leaves it."""
    on, off, on_plan, off_plan = both_ways(spark, q)
    assert on.error is None and off.error is None and on.rows, (on.error, on.rows)
    assert marked_terms(on_plan) == marked_terms(off_plan), on_plan


def test_a_constant_term_beside_others_still_cancels(spark, views):
    """Two terms left: the union stays, its columns are no constants, and the pair cancels."""
    q = "(SELECT k AS c0 FROM r UNION ALL SELECT 4 AS c0 UNION ALL SELECT k % 3 FROM r) EXCEPT ALL SELECT k FROM r"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert sorted(x[0] for x in on.rows) == sorted([4] + [k % 3 for k in range(20)])
    assert marked_terms(on_plan) < marked_terms(off_plan), on_plan


# --- collations ---------------------------------------------------------------------------------------

UNION_MINUS_B = "(SELECT c, n FROM {b} UNION ALL SELECT c, n FROM {a}) EXCEPT ALL SELECT c, n FROM {b}"


@pytest.mark.parametrize("collation", ["lc", "ci", "rtrim"], ids=["UTF8_LCASE", "UNICODE_CI", "UTF8_BINARY_RTRIM"])
def test_union_minus_a_term_declines_on_collated_strings(spark, views, collation):
    q = UNION_MINUS_B.format(a=f"ca_{collation}", b=f"cb_{collation}")
    on, off, on_plan, off_plan = both_ways(spark, q)
    # vanilla shows the subtracted term's representative of each group: ('a', 1), ('X', 2) / ('a', 1), ('x ', 2)
    assert sorted(on.rows) == sorted(off.rows)
    assert [r.c for r in sorted(off.rows, key=lambda r: r.n)] == (
        ["a", "x "] if collation == "rtrim" else ["a", "X"]), off.rows
    assert marked_terms(on_plan) == marked_terms(off_plan) == 3, on_plan


def test_union_minus_a_term_declines_on_a_collated_string_in_a_struct(spark, views):
    q = ("(SELECT named_struct('s', c) AS c, n FROM cb_lc UNION ALL SELECT named_struct('s', c), n FROM ca_lc) "
         "EXCEPT ALL SELECT named_struct('s', c), n FROM cb_lc")
    _, off, on_plan, off_plan = both_ways(spark, q)
    assert [r.c.s for r in sorted(off.rows, key=lambda r: r.n)] == ["a", "X"], off.rows
    assert marked_terms(on_plan) == marked_terms(off_plan) == 3, on_plan


def test_union_minus_a_term_declines_on_a_collated_string_in_an_array(spark, views):
    q = ("(SELECT array(c) AS c, n FROM cb_ci UNION ALL SELECT array(c), n FROM ca_ci) "
         "EXCEPT ALL SELECT array(c), n FROM cb_ci")
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert marked_terms(on_plan) == marked_terms(off_plan) == 3, on_plan


def test_union_minus_a_term_still_cancels_on_binary_strings(spark, views):
    q = UNION_MINUS_B.format(a="ca_bin", b="cb_bin")
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert sorted((r.c, r.n) for r in on.rows) == [("A", 1), ("x", 2)]
    assert marked_terms(on_plan) < marked_terms(off_plan) == 3, on_plan


def test_union_minus_a_term_still_cancels_on_plain_strings(spark, views):
    # (string functions such as upper() are not on the cannot-fail list: casts of numbers are)
    q = ("(SELECT CAST(k AS STRING) AS s FROM r WHERE k < 3 UNION ALL SELECT CAST(k % 5 AS STRING) FROM r) "
         "EXCEPT ALL SELECT CAST(k % 5 AS STRING) FROM r")
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert sorted(r.s for r in on.rows) == ["0", "1", "2"]
    assert marked_terms(on_plan) < marked_terms(off_plan), on_plan


def test_union_minus_a_term_still_cancels_on_doubles(spark, views):
    q = "(SELECT d, n FROM db UNION ALL SELECT d, n FROM da) EXCEPT ALL SELECT d, n FROM db"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert len(on.rows) == 3
    assert marked_terms(on_plan) < marked_terms(off_plan) == 3, on_plan


# --- samples ----------------------------------------------------------------------------------------

def test_except_all_of_an_unseeded_sample_does_not_cancel(spark, views):
    q = ("WITH s AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT)) "
         "SELECT count(*) > 0 AS left_over FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM s)")
    on, off, on_plan, off_plan = both_ways(spark, q)
    # each reference draws its own sample: 200 rows at 50% leave rows over (all but surely)
    assert off.rows[0].left_over is True and on.rows[0].left_over is True
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


def test_except_all_of_a_seeded_sample_over_a_range_view_still_cancels(spark, views):
    q = ("WITH s AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT) REPEATABLE (7)) "
         "SELECT count(*) AS left_over FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM s)")
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows[0].left_over == 0
    assert marked_terms(on_plan) < marked_terms(off_plan), on_plan


def test_except_all_of_a_seeded_sample_over_a_union_does_not_cancel(spark, views):
    # a seeded sampler picks rows by position: only over projections/filters of a relation is the
    # row order the same each time
    q = ("WITH s AS (SELECT * FROM (SELECT k FROM sr WHERE k < 50 UNION ALL SELECT k FROM sr WHERE k >= 150) "
         "TABLESAMPLE (50 PERCENT) REPEATABLE (7)) "
         "SELECT count(*) AS left_over FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM s)")
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


# --- RDD-backed relations ---------------------------------------------------------------------------

def test_except_all_of_a_random_rdd_does_not_cancel(spark, views, random_rdd_df):
    df = random_rdd_df
    # the random column differs between the two sides' runs: compare the keys
    on, off, on_plan, off_plan = both_ways(spark, lambda: df.exceptAll(df).select("i"))
    assert sorted(r.i for r in off.rows) == list(range(10))
    assert marked_terms(on_plan) == marked_terms(off_plan) > 0, on_plan


def test_except_all_of_a_checkpointed_rdd_still_cancels(spark, views, random_rdd_df):
    df = random_rdd_df.localCheckpoint()
    on, _, on_plan, off_plan = both_ways(spark, lambda: df.exceptAll(df).select("i"))
    assert on.rows == []
    assert marked_terms(on_plan) < marked_terms(off_plan), on_plan


@pytest.fixture
def stale_views(spark, tmp_path):
    """`v_old` lists a Parquet folder before rows are appended, `v_new` after: the same plan to
    Spark's canonical form (the folder's path), different files."""
    p = str(tmp_path / "grown")
    spark.range(3).write.parquet(p)
    spark.read.parquet(p).createOrReplaceTempView("v_old")
    spark.range(100, 102).write.mode("append").parquet(p)
    spark.read.parquet(p).createOrReplaceTempView("v_new")


@pytest.mark.parametrize("q", [
    "SELECT * FROM v_new EXCEPT ALL SELECT * FROM v_old",  # NegationCancels
    "SELECT * FROM v_new EXCEPT SELECT * FROM v_old",  # EliminateSelfSemiAntiJoin
    "SELECT * FROM v_new INTERSECT SELECT * FROM v_old",  # EliminateSelfSemiAntiJoin
])
def test_two_listings_of_one_folder_are_not_the_same_input(spark, stale_views, q):
    """A tester: the rules took the two views as one input and returned [] (EXCEPT) or all of
    v_new (INTERSECT). They compare a file index's listing now; the same view twice still cancels."""
    on, off = assert_same_both_ways(spark, q)
    assert off.rows and sorted(on.rows) == sorted(off.rows)
    same = q.replace("v_old", "v_new")
    on, _, on_plan, off_plan = both_ways(spark, same)
    assert on_plan != off_plan, on_plan  # the law still holds, and fires, for one listing
