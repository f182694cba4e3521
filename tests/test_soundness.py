"""Soundness (issue 23): no rule of the extension changes a query's answer.

Every case the issue lists — an error dropped (ANSI overflow, DIV by zero, interval overflow in any
mode), a 38-digit decimal negation folded although Spark's negation rounds, a collated string
compared as bytes, an unseeded sample or a random RDD taken as the same rows twice, interval
arithmetic moved below a join onto rows that never matched — is run here with the rewrites on and
off (``assert_same_both_ways``: equal rows, or the same error class on both sides; an error on one
side only fails), next to its neighbours in the same family (other failing expressions, other
collations, DECIMAL(34) vs DECIMAL(35), seeded samples, year-month intervals). Where the law does
not hold the test also reads from the optimized plan that the rule did not fire; where it does hold
(non-failing terms, binary strings and doubles, a seeded sample over a relation, ANSI off, a plain
pass-through column) the test checks that the rule still fires, as ``test_ring_laws.py`` does.
"""
from __future__ import annotations

import random
import re

import pytest

from pyspark_arrnf.compare import arrnf_enabled, optimized_plan
from pyspark_arrnf.testing import assert_same_both_ways

ANSI_ON = {"spark.sql.ansi.enabled": "true"}
ANSI_OFF = {"spark.sql.ansi.enabled": "false"}
MIN_SAVING = "spark.arrnf.FactorizeUnionOfJoins.minSaving"
# as in test_factorize.py: shuffle joins, and any saving will do (the cost guard is not under test here)
SHUFFLE = {"spark.sql.autoBroadcastJoinThreshold": "-1", MIN_SAVING: "0"}

def marked_terms(plan: str) -> int:
    """How many ±1-marked union branches of a rewritten EXCEPT ALL the plan holds: `Project [1 AS
    vcol#…`, `Project [-1 AS vcol#…`, or `LocalRelation [vcol#…` once Spark folded a branch of
    constants."""
    return len(re.findall(r"\[(?:-?1 AS )?vcol#", plan))


@pytest.fixture(scope="module")
def views(spark):
    spark.sql("create or replace temp view r as select id as k from range(20)")
    spark.sql("create or replace temp view sr as select id as k from range(200)")
    for name, collation in (("lc", "UTF8_LCASE"), ("ci", "UNICODE_CI"), ("bin", "UTF8_BINARY")):
        spark.sql(f"create or replace temp view ca_{name} as select * from values "
                  f"('A' collate {collation}, 1), ('x' collate {collation}, 2) as t(c, n)")
        spark.sql(f"create or replace temp view cb_{name} as select * from values "
                  f"('a' collate {collation}, 1), ('X' collate {collation}, 2) as t(c, n)")
    # trailing spaces: equal under UTF8_BINARY_RTRIM, different bytes
    spark.sql("create or replace temp view ca_rtrim as select * from values "
              "('a  ' collate UTF8_BINARY_RTRIM, 1), ('x' collate UTF8_BINARY_RTRIM, 2) as t(c, n)")
    spark.sql("create or replace temp view cb_rtrim as select * from values "
              "('a' collate UTF8_BINARY_RTRIM, 1), ('x ' collate UTF8_BINARY_RTRIM, 2) as t(c, n)")
    # doubles whose grouping normalizes: -0.0 / 0.0 and NaN
    spark.sql("create or replace temp view da as select * from values "
              "(0.0D, 1), (double('NaN'), 2), (1.5D, 3) as t(d, n)")
    spark.sql("create or replace temp view db as select * from values "
              "(-0.0D, 1), (double('NaN'), 2), (2.5D, 3) as t(d, n)")
    return True


def plan_of(spark, query, enabled: bool) -> str:
    """The optimized plan with the rewrites on or off (also for queries that fail when run)."""
    with arrnf_enabled(spark, enabled):
        df = spark.sql(query) if isinstance(query, str) else query()
        return optimized_plan(df)


def both_ways(spark, query):
    """Equal results on and off, and both optimized plans (computed apart when a side raised)."""
    on, off = assert_same_both_ways(spark, query)
    return on, off, on.plan or plan_of(spark, query, True), off.plan or plan_of(spark, query, False)


def inside_a_join(plan: str, pattern: str) -> bool:
    """Whether a node matching `pattern` lies in the subtree of a `Join` node of the plan text."""
    joins = []  # depths of the Join nodes on the path to the current line
    for line in plan.splitlines():
        m = re.search(r"[A-Za-z]", line)
        if not m:
            continue
        depth = m.start()
        joins = [d for d in joins if d < depth]
        if re.search(pattern, line) and joins:
            return True
        if line[depth:].startswith("Join "):
            joins.append(depth)
    return False


# --- failing expressions over `r` (k in 0..19), each raising on some row ----------------------------
# (id, SQL expression over k, settings): interval arithmetic overflows with ANSI off as well.
FAILING = [
    ("div_by_zero", "10 DIV (k - 3)", ANSI_ON),
    ("ansi_add_overflow", "k + 9223372036854775800", ANSI_ON),
    ("ansi_multiply_overflow", "k * 922337203685477580", ANSI_ON),
    ("ansi_cast_invalid", "CAST(IF(k = 3, 'x', CAST(k AS STRING)) AS INT)", ANSI_ON),
    ("raise_error_in_case", "CASE WHEN k = 3 THEN raise_error('boom') ELSE k END", ANSI_ON),
    ("year_month_interval_overflow_ansi_off",
     "CAST(make_ym_interval(178956970, CAST(k % 8 AS INT)) + INTERVAL '1' MONTH AS STRING)", ANSI_OFF),
    ("scalar_subquery_many_rows", "k + (SELECT k FROM r)", ANSI_OFF),
]
FAILING_IDS = [f[0] for f in FAILING]
# the ones that type as an integral column (for `x - x`)
FAILING_INTEGRAL = [f for f in FAILING if "interval" not in f[0]]


# === FoldValueTerms =================================================================================

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


# === NegationCancels: Q EXCEPT ALL Q, (A ∪ B) − B ===================================================

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

@pytest.fixture
def random_rdd_df(spark):
    return spark.createDataFrame(
        spark.sparkContext.parallelize(range(10), 1).map(lambda i: (i, random.random())), "i long, r double"
    )


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


# === EliminateSelfSemiAntiJoin: Q EXCEPT Q, Q INTERSECT Q ===========================================

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


# === EliminateUnitJoin: Q ▷ 1 without a condition is empty ==========================================

@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_anti_join_with_a_unit_keeps_a_failing_input(spark, views, conf, expr, settings):
    conf(settings)
    # the failing expression is in the anti join's input, in a filter Spark can neither drop (as it
    # drops `IS NOT NULL` of a non-nullable expression) nor move above the join
    q = f"SELECT k FROM (SELECT k FROM r WHERE CAST({expr} AS STRING) <> 'none') LEFT ANTI JOIN (SELECT 1 AS c) u"
    _, _, on_plan, _ = both_ways(spark, q)
    assert "LeftAnti" in on_plan, on_plan


def test_anti_join_with_a_unit_still_empties_a_non_failing_input(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT k FROM (SELECT k FROM r WHERE k % 3 = 0) LEFT ANTI JOIN (SELECT 1 AS c) u"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows == []
    assert "Join" not in on_plan and "LocalRelation <empty>" in on_plan, on_plan
    assert "LeftAnti" in off_plan, off_plan


# === FactorizeUnionOfJoins ==========================================================================

def firings(spark) -> int:
    return int(spark._jvm.arrnf.rules.FactorizeStatus.firings())


FACTOR_DAY = """WITH a AS (SELECT id AS k FROM range(10)),
b1 AS (SELECT id AS x, CASE WHEN id < 10 THEN INTERVAL '1' DAY ELSE INTERVAL '100000000' DAY END AS iv FROM range(20)),
b2 AS (SELECT id AS x, INTERVAL '2' DAY AS iv FROM range(20))
SELECT a.k, {e1} AS s FROM a JOIN b1 ON a.k = b1.x UNION ALL SELECT a.k, {e2} FROM a JOIN b2 ON a.k = b2.x"""

FACTOR_MONTH = """WITH a AS (SELECT id AS k FROM range(10)),
b1 AS (SELECT id AS x, CASE WHEN id < 10 THEN INTERVAL '1' MONTH ELSE make_ym_interval(178956970, 7) END AS iv FROM range(20)),
b2 AS (SELECT id AS x, INTERVAL '2' MONTH AS iv FROM range(20))
SELECT a.k, CAST(b1.iv + INTERVAL '1' MONTH AS STRING) AS s FROM a JOIN b1 ON a.k = b1.x
UNION ALL SELECT a.k, CAST(b2.iv + INTERVAL '1' MONTH AS STRING) FROM a JOIN b2 ON a.k = b2.x"""


@pytest.mark.parametrize("min_saving", ["default", "0"])
def test_factorize_keeps_day_interval_arithmetic_above_the_join(spark, views, conf, min_saving):
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1", **ANSI_OFF})
    if min_saving != "default":
        conf({MIN_SAVING: min_saving})
    q = FACTOR_DAY.format(e1="b1.iv + b1.iv", e2="b2.iv + b2.iv")
    on, off, on_plan, _ = both_ways(spark, q)
    assert off.error is None and len(off.rows) == 20
    # fired or not, the interval addition is never evaluated below a join (on B rows that never matched)
    assert not inside_a_join(on_plan, r"iv#\d+ \+ |s_b#\d+ \+ |\+ INTERVAL"), on_plan


@pytest.mark.parametrize("ansi", [ANSI_OFF, ANSI_ON], ids=["ansi_off", "ansi_on"])
def test_factorize_keeps_year_month_interval_arithmetic_above_the_join(spark, views, conf, ansi):
    conf({**SHUFFLE, **ansi})
    on, off, on_plan, _ = both_ways(spark, FACTOR_MONTH)
    assert off.error is None and len(off.rows) == 20
    assert not inside_a_join(on_plan, r" \+ INTERVAL"), on_plan


def test_factorize_still_fires_with_an_interval_passed_through(spark, views, conf):
    conf({**SHUFFLE, **ANSI_OFF})
    q = FACTOR_DAY.format(e1="b1.iv", e2="b2.iv")
    before = firings(spark)
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert firings(spark) > before, on_plan
    assert on_plan.count("Join Inner") < off_plan.count("Join Inner"), on_plan
    assert len(on.rows) == 20


def test_factorize_declines_over_an_unseeded_sample(spark, views, conf):
    conf(SHUFFLE)
    # A sampled without a seed: each branch draws its own sample, a factored A would draw one. (The
    # other sides differ, so A is the only common factor: a deterministic common side may be factored
    # out, leaving each branch its own sample.)
    q = ("WITH a AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT)) "
         "SELECT count(*) > 0 AS any FROM (SELECT a.k, b.k AS v, 'b' AS tag FROM a JOIN sr b ON a.k = b.k "
         "UNION ALL SELECT a.k, c.k, 'c' FROM a JOIN r c ON a.k = c.k)")
    before = firings(spark)
    on, off, on_plan, _ = both_ways(spark, q)
    assert firings(spark) == before, on_plan


def test_factorize_still_fires_over_a_seeded_sample_of_a_range_view(spark, views, conf):
    conf(SHUFFLE)
    q = ("WITH a AS (SELECT k FROM sr TABLESAMPLE (50 PERCENT) REPEATABLE (7)) "
         "SELECT a.k, b.k AS v, 'b' AS tag FROM a JOIN sr b ON a.k = b.k "
         "UNION ALL SELECT a.k, c.k, 'c' FROM a JOIN sr c ON a.k = c.k")
    before = firings(spark)
    _, _, on_plan, off_plan = both_ways(spark, q)
    assert firings(spark) > before, on_plan
    assert on_plan.count("Join Inner") < off_plan.count("Join Inner"), on_plan
