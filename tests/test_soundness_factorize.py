"""Soundness of FactorizeUnionOfJoins: interval arithmetic stays above the join (day-time and
year-month), an unseeded sample is not factored; it still fires with an interval passed through
and over a seeded sample of a relation. See ``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_OFF, ANSI_ON, MIN_SAVING, SHUFFLE, both_ways, inside_a_join,
    views,  # noqa: F401  (fixtures)
)


def firings(spark) -> int:
    """How many times the factorization fired in this JVM (through the public ``arrnf.Api``: the
    status object itself lives in ``arrnf.rules.factorize`` since the Scala packages were split)."""
    return int(spark._jvm.arrnf.Api.factorizeFirings())


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


def test_factorize_does_not_share_two_listings_of_one_folder(spark, views, conf, tmp_path):
    """Two views of one Parquet folder, one listed before rows were appended: the same plan to
    Spark's canonical form, other files. The factorization took them as one input A (a tester:
    9,867 rows where vanilla Spark counts 9,067, with Spark's exchange reuse off). One listing still
    factors."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1", MIN_SAVING: "0", "spark.sql.exchange.reuse": "false"})
    p = str(tmp_path / "grown")
    spark.sql("SELECT id AS k, id % 3 AS g FROM range(300)").write.parquet(p)
    spark.read.parquet(p).createOrReplaceTempView("fz_old")
    spark.sql("SELECT id AS k, id % 3 AS g FROM range(1000, 1100)").write.mode("append").parquet(p)
    spark.read.parquet(p).createOrReplaceTempView("fz_new")
    q = ("SELECT count(*) AS n FROM (SELECT a.k FROM {v1} a JOIN (SELECT id AS k, id % 3 AS g FROM range(50)) b "
         "ON a.g = b.g UNION ALL SELECT a.k FROM {v2} a JOIN (SELECT id AS k, id % 5 AS g FROM range(40)) c ON a.g = c.g)")
    before = firings(spark)
    on, off, _, _ = both_ways(spark, q.format(v1="fz_new", v2="fz_old"))
    assert off.rows[0].n == 9067 and firings(spark) == before
    both_ways(spark, q.format(v1="fz_new", v2="fz_new"))
    assert firings(spark) > before


@pytest.mark.parametrize("collation", ["UTF8_LCASE", "UTF8_LCASE_RTRIM", "UTF8_BINARY"])
def test_factorize_leaves_a_union_of_collated_strings_alone(spark, conf, collation):
    """Under a case-insensitive or trimming collation 'A ' and 'a' are one group of a UNION (distinct),
    and the group shows the value of the row it meets first: the factored join meets the branches'
    rows in another order (a tester: `B`, `C`, `a` where vanilla Spark shows `A`, `b`, `c`). As
    NegationCancels, the rule fires only where the union's columns compare by their bytes."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "300", MIN_SAVING: "0"})  # A (120 rows) shuffled, B and C broadcast
    t = f"STRING COLLATE {collation}"
    spark.sql(f"CREATE OR REPLACE TEMP VIEW fz_big AS SELECT CAST(chr(97 + CAST(id % 6 AS INT)) AS {t}) k FROM range(120)")
    spark.sql(f"CREATE OR REPLACE TEMP VIEW fz_s1 AS SELECT CAST(k AS {t}) k FROM VALUES ('A '), ('b') AS s1(k)")
    spark.sql(f"CREATE OR REPLACE TEMP VIEW fz_s2 AS SELECT CAST(k AS {t}) k FROM VALUES ('a'), ('B  ') AS s2(k)")
    q = ("SELECT fz_s1.k FROM fz_big JOIN fz_s1 ON fz_big.k = fz_s1.k UNION "
         "SELECT fz_s2.k FROM fz_big JOIN fz_s2 ON fz_big.k = fz_s2.k")
    before = firings(spark)
    both_ways(spark, q)
    assert (firings(spark) > before) == (collation == "UTF8_BINARY"), collation
