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

The cases, one file per rule: ``test_soundness_fold_value_terms.py`` (FoldValueTerms),
``test_soundness_negation_cancels.py`` (NegationCancels: failing terms, collations, samples, RDDs),
``test_soundness_self_semi_anti_join.py`` (EliminateSelfSemiAntiJoin), ``test_soundness_unit_join.py``
(EliminateUnitJoin) and ``test_soundness_factorize.py`` (FactorizeUnionOfJoins). This file holds what
they share: the settings, the failing expressions (:data:`FAILING`), the ``views`` and
``random_rdd_df`` fixtures, and the helpers that run a query both ways and read its plans.
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


# --- RDD-backed relations ---------------------------------------------------------------------------

@pytest.fixture
def random_rdd_df(spark):
    return spark.createDataFrame(
        spark.sparkContext.parallelize(range(10), 1).map(lambda i: (i, random.random())), "i long, r double"
    )
