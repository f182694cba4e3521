"""Soundness of EagerAggregation: pre-aggregating one side of a join aggregates its rows that join
nothing too, reorders the joins and regroups additions. No error may be added or removed (a failing
argument or condition, an overflow of a part that the original never added), no collated or
floating-point key may be grouped where the original compared, and results keep their types. Each
case runs both ways (``both_ways``) with the rule firing wherever its law holds (``minReduction=0``),
and reads from the plan that it did not fire where it must not. See ``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_OFF, ANSI_ON, FAILING, FAILING_IDS, both_ways, inside_a_join,
    views,  # noqa: F401  (fixtures)
)

EVERYWHERE = {"spark.arrnf.EagerAggregation.minReduction": "0", "spark.sql.autoBroadcastJoinThreshold": "-1"}


def pre_aggregated(plan: str) -> bool:
    return inside_a_join(plan, r"Aggregate \[")


@pytest.fixture(scope="module")
def big_values(spark, tmp_path_factory):
    """`big`: BIGINT and DECIMAL values whose sums overflow in the group of key 5, which joins nothing
    in `small_dim` (key 1 only); `dim_all` has both keys. Parquet, so Spark cannot fold them."""
    root = tmp_path_factory.mktemp("eager_big")
    spark.sql("""select * from values
        (1, 1L, cast(1 as decimal(38,0)), cast(1 as decimal(28,0)), cast(1 as decimal(29,0))),
        (5, 4611686018427387904L, cast('99999999999999999999999999999999999999' as decimal(38,0)),
         cast('9999999999999999999999999999' as decimal(28,0)), cast('99999999999999999999999999999' as decimal(29,0))),
        (5, 4611686018427387904L, cast('99999999999999999999999999999999999999' as decimal(38,0)),
         cast('9999999999999999999999999999' as decimal(28,0)), cast('99999999999999999999999999999' as decimal(29,0))),
        (5, 4611686018427387904L, cast(1 as decimal(38,0)), cast(1 as decimal(28,0)), cast(1 as decimal(29,0)))
        as t(k, v, d38, d28, d29)""").write.parquet(str(root / "big"))
    spark.read.parquet(str(root / "big")).createOrReplaceTempView("big")
    spark.sql("select 1 as k, 'one' as name").write.parquet(str(root / "small_dim"))
    spark.read.parquet(str(root / "small_dim")).createOrReplaceTempView("small_dim")
    spark.sql("select * from values (1, 'one'), (5, 'five') as t(k, name)").write.parquet(str(root / "dim_all"))
    spark.read.parquet(str(root / "dim_all")).createOrReplaceTempView("dim_all")
    yield


def test_bigint_sum_with_ansi_on_is_not_split(spark, big_values, conf):
    # pre-aggregated, key 5's part would overflow although key 5 never joins
    conf({**EVERYWHERE, **ANSI_ON})
    on, _, on_plan, _ = both_ways(spark, "select d.name, sum(b.v) from big b join small_dim d on b.k = d.k group by d.name")
    assert on.rows == [("one", 1)]
    assert not pre_aggregated(on_plan), on_plan


def test_bigint_sum_with_ansi_off_is_split(spark, big_values, conf):
    # LEGACY wraps, and wrapped addition is associative: the same result however the sums are grouped
    conf({**EVERYWHERE, **ANSI_OFF})
    for dim in ("small_dim", "dim_all"):
        _, _, on_plan, _ = both_ways(spark, f"select d.name, sum(b.v) from big b join {dim} d on b.k = d.k group by d.name")
        assert pre_aggregated(on_plan), on_plan


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
def test_decimal_38_sum_is_not_split_and_its_overflow_stays(spark, big_values, conf, ansi):
    conf({**EVERYWHERE, **ansi})
    # with dim_all the original overflows (an error with ANSI on, NULL with it off); both ways alike
    for dim in ("small_dim", "dim_all"):
        _, _, on_plan, _ = both_ways(spark, f"select d.name, sum(b.d38) from big b join {dim} d on b.k = d.k group by d.name")
        assert not pre_aggregated(on_plan), on_plan
    _, _, on_plan, _ = both_ways(spark, "select d.name, sum(b.d29) from big b join dim_all d on b.k = d.k group by d.name")
    assert not pre_aggregated(on_plan), on_plan


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
def test_decimal_28_sum_is_split_with_its_type(spark, big_values, conf, ansi):
    # DECIMAL(28,0) sums into DECIMAL(38,0) both ways: the outer sum is cast back
    conf({**EVERYWHERE, **ansi})
    q = "select d.name, sum(b.d28) s, count(*) from big b join dim_all d on b.k = d.k group by d.name"
    on, off, on_plan, _ = both_ways(spark, q)
    assert pre_aggregated(on_plan), on_plan
    assert spark.sql(q).schema["s"].dataType.simpleString() == "decimal(38,0)"


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_a_failing_argument_is_not_pre_aggregated(spark, views, conf, expr, settings):
    # r: k in 0..19; the argument fails on some rows of r, some of which join nothing
    conf({**EVERYWHERE, **settings})
    q = (f"select d.k2 % 2, max(CAST({expr} AS STRING)), count(*) from r "
         f"join (select k as k2 from r where k > 5) d on r.k = d.k2 group by d.k2 % 2")
    _, _, on_plan, _ = both_ways(spark, q)
    assert not pre_aggregated(on_plan), on_plan


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_a_failing_join_condition_keeps_its_errors(spark, views, conf, expr, settings):
    conf({**EVERYWHERE, **settings})
    q = (f"select d.k2 % 2, sum(r.k), count(*) from r join (select k as k2 from r where k > 5) d "
         f"on r.k = d.k2 and CAST({expr} AS STRING) <> CAST(d.k2 AS STRING) group by d.k2 % 2")
    both_ways(spark, q)


@pytest.mark.parametrize("name", ["lc", "ci"])
def test_a_collated_key_is_not_grouped(spark, views, conf, name):
    # 'A' and 'a' join under UTF8_LCASE / UNICODE_CI: a pre-aggregate by the key would pick one
    conf(EVERYWHERE)
    spark.sql(f"create or replace temp view ca_{name}_lower as select lower(c) as c, n from ca_{name}")
    q = f"select b.n, count(*), sum(a.n), max(a.c) from ca_{name} a join ca_{name}_lower b on a.c = b.c group by b.n"
    _, _, on_plan, _ = both_ways(spark, q)
    assert not pre_aggregated(on_plan), on_plan


def test_a_binary_string_key_is_grouped(spark, views, conf):
    conf(EVERYWHERE)
    q = "select b.n, count(*), sum(a.n), max(a.c) from ca_bin a join ca_bin b on a.c = b.c group by b.n"
    _, _, on_plan, _ = both_ways(spark, q)
    assert pre_aggregated(on_plan), on_plan


def test_floating_point_keys_and_sums_are_not_split(spark, conf):
    conf(EVERYWHERE)
    spark.sql("create or replace temp view fl as select * from values (0.0D, 1.5D), (-0.0D, 2.25D), "
              "(cast('NaN' as double), 1.0D), (1.0D, 0.1D), (1.0D, 0.2D) as t(x, y)")
    spark.sql("create or replace temp view fl_dim as select * from values (0.0D, 'zero'), (cast('NaN' as double), 'nan'), "
              "(1.0D, 'one') as t(x, name)")
    for q in ("select d.name, count(*), max(f.y) from fl f join fl_dim d on f.x = d.x group by d.name",
              "select d.name, sum(f.y) from fl f join fl_dim d on f.x = d.x group by d.name",
              "select d.name, min(f.x) from fl f join (select x, name, try_cast(x as int) ix from fl_dim) d "
              "on try_cast(f.x as int) = d.ix group by d.name"):
        _, _, on_plan, _ = both_ways(spark, q)
        assert not pre_aggregated(on_plan), (q, on_plan)


@pytest.fixture(scope="module")
def avg_values(spark, tmp_path_factory):
    """`avgs`: INT values at both limits and DECIMAL(7,2) values at their precision in the group of
    key 1; key 2 has only NULLs; key 5 joins nothing in `small_dim`/`avg_dim` (keys 1 and 2)."""
    root = tmp_path_factory.mktemp("eager_avg")
    spark.sql("""select * from values
        (1, 2147483647, cast(99999.99 as decimal(7,2))), (1, 2147483647, cast(99999.99 as decimal(7,2))),
        (1, 2147483647, cast(-99999.99 as decimal(7,2))), (1, -2147483648, cast(0.01 as decimal(7,2))),
        (1, 7, cast(12345.67 as decimal(7,2))), (2, null, null),
        (5, 2147483647, cast(99999.99 as decimal(7,2))), (5, 2147483647, cast(99999.99 as decimal(7,2)))
        as t(k, i, d7)""").write.parquet(str(root / "avgs"))
    spark.read.parquet(str(root / "avgs")).createOrReplaceTempView("avgs")
    spark.sql("select * from values (1, 'one'), (1, 'uno'), (2, 'two') as t(k, name)").write.parquet(str(root / "avg_dim"))
    spark.read.parquet(str(root / "avg_dim")).createOrReplaceTempView("avg_dim")
    yield


def _exactly(on, off):
    # the split average must be the same bits (assert_same_both_ways compares them so too; counted here apart)
    from collections import Counter
    assert Counter(map(tuple, on.rows)) == Counter(map(tuple, off.rows)), (on.rows, off.rows)


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
def test_avg_of_int_and_small_decimal_is_split_to_the_same_bits(spark, avg_values, conf, ansi):
    # the DOUBLE mean of an exact sum: Spark's own while the group's sums stay within 2^53; a group of
    # NULLs averages NULL; a global average over the rows that join is NULL when none do
    conf({**EVERYWHERE, **ansi})
    for q in ("select d.name, avg(a.i), avg(a.d7), count(*) from avgs a join avg_dim d on a.k = d.k group by d.name",
              "select avg(a.i), avg(a.d7) from avgs a join avg_dim d on a.k = d.k where d.k = 2",
              "select avg(a.i), avg(a.d7) from avgs a join avg_dim d on a.k = d.k"):
        on, off, on_plan, _ = both_ways(spark, q)
        assert pre_aggregated(on_plan), (q, on_plan)
        _exactly(on, off)
    assert spark.sql("select avg(a.d7) v from avgs a join avg_dim d on a.k = d.k").schema["v"].dataType.simpleString() \
        == "decimal(11,6)"


def test_decimal_avg_is_not_split_where_decimal_aggregates_is_excluded(spark, avg_values, conf):
    # without Spark's DecimalAggregates a DECIMAL(7,2) average is exact, not a DOUBLE's
    conf({**EVERYWHERE, "spark.sql.optimizer.excludedRules": "org.apache.spark.sql.catalyst.optimizer.DecimalAggregates"})
    on, off, on_plan, _ = both_ways(spark, "select d.name, avg(a.d7) from avgs a join avg_dim d on a.k = d.k group by d.name")
    assert not pre_aggregated(on_plan), on_plan
    _exactly(on, off)


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
def test_both_sides_multiplied_sums_keep_their_results(spark, big_values, conf, ansi):
    # the other side aggregated too: each part times the other side's rows per key (key 5 twice in
    # dim_twice). DECIMAL(28,0) parts times counts stay exact in DECIMAL(38,0), as the original's sum;
    # BIGINT sums with ANSI off wrap the same; with ANSI on they are not split
    conf({**EVERYWHERE, **ansi, "spark.arrnf.EagerAggregation.otherSide": "always"})
    spark.sql("select * from values (1, 'one'), (1, 'uno'), (5, 'five'), (5, 'cinco') as t(k, name)") \
        .createOrReplaceTempView("dim_twice")
    for q in ("select d.k, sum(b.d28), count(*), avg(b.k), max(b.d38) from big b join dim_twice d on b.k = d.k group by d.k",
              "select sum(b.d28), count(b.v) from big b join dim_twice d on b.k = d.k",
              "select d.k, sum(b.v) from big b join dim_twice d on b.k = d.k group by d.k"):
        _, _, on_plan, _ = both_ways(spark, q)
        split = "sum(b.v)" not in q or ansi is ANSI_OFF
        assert pre_aggregated(on_plan) == split, (q, on_plan)
