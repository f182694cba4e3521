"""Eager aggregation (issue 20): an aggregate over inner joins pre-aggregates the side its functions
read, by that side's join keys and grouping columns, and combines the parts after the join.

Every case runs with the rewrites on and off (``assert_same_both_ways``: equal rows, or the same
error class on both sides) over small views with duplicate and NULL keys on both sides, and reads
from the optimized plan whether the rule fired: where the law holds it must fire (with
``minReduction=0``: these views have no statistics), where it does not hold it must not.
``TestCostGuard`` writes Parquet tables, takes the sketch pass and checks the rule's choice by its
estimates, with the default setting, and what the explain section and the ArrNF program say.
See ``test_soundness_eager_aggregation.py`` for errors, overflow, collations and floating point.
"""
from __future__ import annotations

import os
import sys

import pytest

import pyspark_arrnf as pa
from pyspark_arrnf.compare import arrnf_enabled

sys.path.insert(0, os.path.dirname(__file__))
from soundness import ANSI_OFF, ANSI_ON, both_ways, inside_a_join  # noqa: E402

EVERYWHERE = {"spark.arrnf.EagerAggregation.minReduction": "0"}
SHUFFLE = {"spark.sql.autoBroadcastJoinThreshold": "-1"}


def pre_aggregated(plan: str) -> bool:
    """Whether an Aggregate lies below a Join in the optimized plan text: the rule's pre-aggregate."""
    return inside_a_join(plan, r"Aggregate \[")


def reasons(spark) -> list[str]:
    return [str(r) for r in spark._jvm.arrnf.Api.eagerReasons()]


@pytest.fixture(scope="module")
def eager_views(spark, tmp_path_factory):
    # f: the fact side (duplicate rows, NULL keys, NULL values, a key no dimension has);
    # c, d: dimensions with duplicate and NULL keys (c: a duplicate row too, so that its aggregate counts 2); e: empty.
    spark.sql("""create or replace temp view ef as select * from values
        (1, 10, cast(1.50 as decimal(7,2)), 1, 'x'), (1, 10, cast(1.50 as decimal(7,2)), 1, 'x'),
        (1, 20, cast(2.25 as decimal(7,2)), 2, 'y'), (2, 20, cast(3.00 as decimal(7,2)), 2, null),
        (null, 10, cast(4.00 as decimal(7,2)), 1, 'z'), (3, 30, null, null, 'w'), (9, 30, 5.00, 7, 'v')
        as t(ck, dk, price, q, s)""")
    spark.sql("""create or replace temp view ec as select * from values
        (1, 'a'), (1, 'a'), (1, 'a2'), (2, 'b'), (null, 'n'), (3, 'c'), (4, 'd') as t(ck, name)""")
    spark.sql("create or replace temp view ed as select * from values (10, 2001), (20, 2002), (30, 2001), (30, 2003) as t(dk, yr)")
    # empty, from a file: Spark cannot see it is empty while optimizing (it would drop the join)
    empty = str(tmp_path_factory.mktemp("eager_empty") / "e")
    spark.sql("select * from ec where ck > 100").write.parquet(empty)
    spark.read.parquet(empty).createOrReplaceTempView("ee")
    spark.sql("select * from ef").write.parquet(str(tmp_path_factory.mktemp("eager_fact") / "f"))
    spark.read.parquet(str(tmp_path_factory.getbasetemp() / "eager_fact0" / "f")).createOrReplaceTempView("efp")
    yield


LAW_HOLDS = {
    "sum_count_min_max": "select c.name, sum(f.price), count(*), count(f.q), min(f.q), max(f.price), min(f.s) "
                         "from ef f join ec c on f.ck = c.ck group by c.name",
    "decimal_expression": "select c.name, sum(f.price - f.price / 2) from ef f join ec c on f.ck = c.ck group by c.name",
    "global": "select sum(f.price), count(*), max(f.s) from ef f join ec c on f.ck = c.ck",
    "global_over_empty": "select sum(f.price), count(*), count(f.q), min(f.q) from ef f join ee c on f.ck = c.ck",
    "grouped_over_empty": "select c.name, sum(f.price), count(*) from ef f join ee c on f.ck = c.ck group by c.name",
    "star_two_dimensions": "select c.name, d.yr, sum(f.price), count(*) from ef f join ec c on f.ck = c.ck "
                           "join ed d on f.dk = d.dk group by c.name, d.yr",
    "grouping_by_fact_column": "select f.s, c.name, sum(f.q) from ef f join ec c on f.ck = c.ck group by f.s, c.name",
    "filter_between": "select name, total from (select c.name, sum(f.q) total from ef f join ec c on f.ck = c.ck "
                      "where c.name <> 'b' and f.q < 5 group by c.name) where total > 0",
    "null_safe_key": "select c.name, sum(f.q), count(*) from ef f join ec c on f.ck <=> c.ck group by c.name",
    "distinct": "select distinct c.name from ef f join ec c on f.ck = c.ck",
    "aggregate_of_aggregates": "select c.name, sum(f.q) + count(*) * 2, max(f.q) - min(f.q) from ef f "
                               "join ec c on f.ck = c.ck group by c.name",
    "avg_int_and_decimal": "select c.name, avg(f.q), avg(f.price), avg(f.dk), count(*) from ef f join ec c "
                           "on f.ck = c.ck group by c.name",
    "avg_global_over_empty": "select avg(f.q), avg(f.price) from ef f join ee c on f.ck = c.ck",
    "avg_star": "select d.yr, avg(f.price) from ef f join ec c on f.ck = c.ck join ed d on f.dk = d.dk group by d.yr",
    "distinct_aggregates": "select c.name, count(distinct f.q), sum(distinct f.dk), avg(distinct f.price), "
                           "sum(f.price) from ef f join ec c on f.ck = c.ck group by c.name",
    "distinct_of_the_other_side": "select f.s, count(distinct c.name), count(distinct c.name, f.q) from ef f "
                                  "join ec c on f.ck = c.ck group by f.s",
    "residual_condition": "select c.name, sum(f.q) from ef f join ec c on f.ck = c.ck and f.q <= c.ck "
                          "group by c.name",
}


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
@pytest.mark.parametrize("name", sorted(LAW_HOLDS))
def test_fires_where_the_law_holds(spark, eager_views, conf, name, ansi):
    conf({**EVERYWHERE, **SHUFFLE, **ansi})
    _, _, on_plan, off_plan = both_ways(spark, LAW_HOLDS[name])
    assert pre_aggregated(on_plan), on_plan
    assert not pre_aggregated(off_plan), off_plan


@pytest.mark.parametrize("ansi", [ANSI_ON, ANSI_OFF], ids=["ansi_on", "ansi_off"])
@pytest.mark.parametrize("name", sorted(LAW_HOLDS))
def test_both_sides_aggregated_where_the_law_holds(spark, eager_views, conf, name, ansi):
    # otherSide=always: the other side (ec's duplicate keys 1, 'a' and 'a2') aggregated too, by its
    # keys and grouping columns, every sum and count part multiplied by its row count
    conf({**EVERYWHERE, **SHUFFLE, **ansi, "spark.arrnf.EagerAggregation.otherSide": "always"})
    spark._jvm.arrnf.Api.resetEagerStatus()
    _, _, on_plan, _ = both_ways(spark, LAW_HOLDS[name])
    assert pre_aggregated(on_plan), on_plan
    fired = [r for r in reasons(spark) if r.startswith("fired")]
    assert fired and all("counting its rows" in r for r in fired), fired


def test_result_types_and_nullability_are_kept(spark, eager_views, conf):
    conf(EVERYWHERE)
    q = LAW_HOLDS["sum_count_min_max"]
    with arrnf_enabled(spark, True):
        on = spark.sql(q).schema
        plan = spark.sql(q)._jdf.queryExecution().optimizedPlan().treeString()
    with arrnf_enabled(spark, False):
        off = spark.sql(q).schema
    assert pre_aggregated(plan), plan
    assert [(f.name, f.dataType, f.nullable) for f in on] == [(f.name, f.dataType, f.nullable) for f in off]


# (query, what the rule says when it declines; None where the plan is not an aggregate over inner
# joins for it at all: outer and semi joins, ROLLUP's Expand, a hint)
LAW_DOES_NOT_HOLD = {
    "avg_double": ("select c.name, avg(cast(f.q as double)) from ef f join ec c on f.ck = c.ck group by c.name",
                   "averages double"),
    "avg_bigint": ("select c.name, avg(cast(f.q as bigint)) from ef f join ec c on f.ck = c.ck group by c.name",
                   "averages bigint"),
    "avg_wide_decimal": ("select c.name, avg(cast(f.price as decimal(12,2))) from ef f join ec c on f.ck = c.ck "
                         "group by c.name", "averages decimal(12,2) (split only over INT and DECIMAL of at most 8 digits"),
    "try_avg": ("select c.name, try_avg(f.q) from ef f join ec c on f.ck = c.ck group by c.name", "is try_avg"),
    "sum_distinct_double": ("select c.name, sum(distinct cast(f.q as double)) from ef f join ec c on f.ck = c.ck "
                            "group by c.name", "is DISTINCT (sum of double)"),
    "distinct_with_filter": ("select c.name, count(distinct f.q) filter (where f.q > 1) from ef f join ec c "
                             "on f.ck = c.ck group by c.name", "has a FILTER"),
    "filter_clause": ("select c.name, sum(f.q) filter (where f.q > 1) from ef f join ec c on f.ck = c.ck "
                      "group by c.name", "has a FILTER"),
    "double_sum": ("select c.name, sum(cast(f.q as double) / 3) from ef f join ec c on f.ck = c.ck group by c.name",
                   "sums double"),
    "try_sum": ("select c.name, try_sum(f.q) from ef f join ec c on f.ck = c.ck group by c.name", "is try_sum"),
    "collect_list": ("select c.name, size(collect_list(f.q)) from ef f join ec c on f.ck = c.ck group by c.name",
                     "collect_list is not split"),
    "int_arithmetic_ansi": ("select c.name, sum(f.q * 2 + 1) from ef f join ec c on f.ck = c.ck group by c.name",
                            "may fail"),
    "left_outer": ("select c.name, sum(f.q) from ec c left join ef f on f.ck = c.ck group by c.name", None),
    "full_outer": ("select c.name, sum(f.q) from ec c full join ef f on f.ck = c.ck group by c.name", None),
    "semi": ("select f.s, sum(f.q) from ef f left semi join ec c on f.ck = c.ck group by f.s", None),
    "varying_input": ("select c.name, sum(f.q) from (select *, rand(1) r from efp) f join ec c on f.ck = c.ck "
                      "where f.r < 2 group by c.name", "may give other rows"),
    "rollup": ("select c.name, f.s, sum(f.q) from ef f join ec c on f.ck = c.ck group by rollup(c.name, f.s)", None),
    "broadcast_hint": ("select /*+ BROADCAST(c) */ c.name, sum(f.q) from ef f join ec c on f.ck = c.ck "
                       "group by c.name", None),
}


@pytest.mark.parametrize("name", sorted(LAW_DOES_NOT_HOLD))
def test_stays_off_where_the_law_does_not_hold(spark, eager_views, conf, name):
    conf({**EVERYWHERE, **SHUFFLE, **ANSI_ON})
    sql, why = LAW_DOES_NOT_HOLD[name]
    spark._jvm.arrnf.Api.resetEagerStatus()
    _, _, on_plan, _ = both_ways(spark, sql)
    assert not pre_aggregated(on_plan), on_plan
    said = reasons(spark)
    assert not any(r.startswith("fired") for r in said), said
    if why:
        assert any(why in r for r in said), said


def test_a_set_operation_gets_no_reason(spark, eager_views, conf):
    """INTERSECT and EXCEPT are a DISTINCT over a semi or anti join in Spark's plan, with nothing to
    push: the explain section said "EagerAggregation declined: its join is a left semi join", of a
    join the user never wrote (a tester). A SUM over a semi join the user wrote still says why."""
    conf({**EVERYWHERE, **SHUFFLE})
    for q in ("select ck from ef intersect select ck from ec", "select ck from ef except select ck from ec"):
        assert not [r for r in pa.arrnf(spark.sql(q)).rules if r.startswith("EagerAggregation")], q
    said = pa.arrnf(spark.sql(LAW_DOES_NOT_HOLD["semi"][0])).rules
    assert any("left semi join (the law is for inner joins)" in r for r in said), said


def test_switch_turns_it_off(spark, eager_views, conf):
    conf({**EVERYWHERE, **SHUFFLE, "spark.arrnf.EagerAggregation.enabled": "false"})
    _, _, on_plan, _ = both_ways(spark, LAW_HOLDS["sum_count_min_max"])
    assert not pre_aggregated(on_plan), on_plan


def test_a_bad_setting_is_refused_in_one_line(spark):
    with pytest.raises(Exception) as e:
        spark.conf.set("spark.arrnf.EagerAggregation.minReduction", "0.5")
    assert "spark.arrnf.EagerAggregation.minReduction" in str(e.value)
    assert "0 (fire wherever the law holds) or a finite factor of 1 or more" in str(e.value)
    with pytest.raises(Exception, match="finite factor"):  # a factor no estimate can reach: the rule switched off unsaid
        spark.conf.set("spark.arrnf.EagerAggregation.minReduction", "Infinity")


def test_tpcds_year_totals_fire_and_agree(spark, tpcds_db, use_db, conf):
    """TPC-DS q4, q11 and q74 (the customer year totals): pre-aggregated below the customer join."""
    from pyspark_arrnf.data import query
    use_db(tpcds_db)
    conf({**EVERYWHERE, **SHUFFLE})
    for name in ("q4", "q11", "q74"):
        _, _, on_plan, _ = both_ways(spark, query("tpcds", name))
        assert pre_aggregated(on_plan), (name, on_plan)


# --- the cost guard, with statistics ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sized_tables(spark, tmp_path_factory):
    """Parquet tables: sales (20,000 rows over 100 customers, and a `uniq` key with 20,000 values), customers (100)."""
    root = tmp_path_factory.mktemp("eager")
    spark.range(20000).selectExpr("id % 100 AS ck", "id AS uniq", "cast(id % 7 AS int) AS q") \
        .write.parquet(str(root / "sales"))
    spark.range(20000).selectExpr("id AS ck", "concat('c', id) AS name").write.parquet(str(root / "customers"))
    spark.read.parquet(str(root / "sales")).createOrReplaceTempView("sized_sales")
    spark.read.parquet(str(root / "customers")).createOrReplaceTempView("sized_customers")
    yield root
    pa.forget_statistics(spark)


FEW_GROUPS = "select c.name, sum(s.q), count(*) from sized_sales s join sized_customers c on s.ck = c.ck group by c.name"
NO_REDUCTION = "select c.name, sum(s.q) from sized_sales s join sized_customers c on s.uniq = c.ck group by c.name"


def _explain(spark, q) -> str:
    return spark._jvm.PythonSQLUtils.explainString(spark.sql(q)._jdf.queryExecution(), "extended")


def test_without_statistics_it_does_not_fire_and_says_why(spark, sized_tables, conf):
    pa.forget_statistics(spark)
    conf(SHUFFLE)
    text = _explain(spark, FEW_GROUPS)
    assert "EagerAggregation declined: the pre-aggregate's rows are unknown" in text, text
    assert not pre_aggregated(spark.sql(FEW_GROUPS)._jdf.queryExecution().optimizedPlan().treeString())


def test_with_statistics_it_fires_where_the_reduction_pays(spark, sized_tables, conf):
    pa.statistics(spark, ["sized_sales", "sized_customers"])
    conf(SHUFFLE)
    text = _explain(spark, FEW_GROUPS)
    assert "EagerAggregation fired: pre-aggregating sales by [ck]: estimated rows 20000 → " in text, text
    _, _, on_plan, _ = both_ways(spark, FEW_GROUPS)
    assert pre_aggregated(on_plan), on_plan
    # the ArrNF program shows the pre-aggregate as its own, smaller Reduce block
    def reduces(enabled):
        with arrnf_enabled(spark, enabled):
            return [b for b in pa.arrnf(spark.sql(FEW_GROUPS)).blocks if b.head and b.head.kind == "Reduce"]
    on, off = reduces(True), reduces(False)
    assert len(on) == len(off) + 1, (on, off)
    assert any("{ck}" in str(b.head.keys) for b in on), [b.head.keys for b in on]


def test_the_program_carries_why_the_rule_fired_or_declined(spark, sized_tables, conf, tmp_path, capsys):
    """``arrnf(df).rules``, the notebook view and ``arrnf analyze`` say what the explain section says
    above the program: why EagerAggregation fired or declined."""
    import html

    from pyspark_arrnf import cli

    pa.statistics(spark, ["sized_sales", "sized_customers"])
    conf(SHUFFLE)
    for q, said in ((FEW_GROUPS, "EagerAggregation fired: pre-aggregating sales by [ck]: estimated rows 20000 → "),
                    (NO_REDUCTION, "EagerAggregation declined: pre-aggregating sales by [uniq]: estimated rows 20000 → ")):
        p = pa.arrnf(spark.sql(q))
        assert len(p.rules) == 1 and p.rules[0].startswith(said), p.rules
        assert p.rules == [line for line in _explain(spark, q).splitlines() if line.startswith("EagerAggregation ")]
        assert html.escape(p.rules[0]) in p._repr_html_()
        m = pa.measure(spark.sql(q))
        assert m.rules == p.rules and pa.Program.from_json(m.to_json()).rules == p.rules
    with arrnf_enabled(spark, False):
        assert pa.arrnf(spark.sql(FEW_GROUPS)).rules == []
    # the command line's measured report prints them after the program
    (tmp_path / "q.sql").write_text(FEW_GROUPS.replace("sized_sales", "sales").replace("sized_customers", "customers"))
    capsys.readouterr()
    assert cli.main(["analyze", str(tmp_path / "q.sql"), "--tables", str(sized_tables), "--stats"]) == 0
    out = capsys.readouterr().out
    assert "== Why the rules fired, or declined ==\nEagerAggregation fired: pre-aggregating sales by [ck]" in out, out


def test_with_statistics_it_declines_where_nothing_is_saved(spark, sized_tables, conf):
    pa.statistics(spark, ["sized_sales", "sized_customers"])
    conf(SHUFFLE)
    text = _explain(spark, NO_REDUCTION)
    assert "EagerAggregation declined: pre-aggregating sales by [uniq]: estimated rows 20000 → " in text, text
    assert "below spark.arrnf.EagerAggregation.minReduction (3.0)" in text, text
    assert not pre_aggregated(spark.sql(NO_REDUCTION)._jdf.queryExecution().optimizedPlan().treeString())


def test_with_default_broadcast_it_declines_where_every_join_is_broadcast(spark, sized_tables, conf):
    """Spark would broadcast the customers (a small Parquet table): the join runs in the sales scan's
    stage, where Spark aggregates partially; a pre-aggregate would only add a shuffle."""
    pa.statistics(spark, ["sized_sales", "sized_customers"])
    conf({"spark.sql.autoBroadcastJoinThreshold": "10485760"})
    text = _explain(spark, FEW_GROUPS)
    assert "EagerAggregation declined: Spark broadcasts one side of every join below the aggregate " \
           "(spark.sql.autoBroadcastJoinThreshold, 10485760 bytes)" in text, text
    assert not pre_aggregated(spark.sql(FEW_GROUPS)._jdf.queryExecution().optimizedPlan().treeString())


@pytest.fixture(scope="module")
def filtered_tables(spark, tmp_path_factory):
    """Parquet tables: fsales (20,000 rows: 100 customers, 10 days, each customer on one day), fdays
    (10 days, two of them in 2001), fcust (100 customers)."""
    root = tmp_path_factory.mktemp("eager_filtered")
    spark.range(20000).selectExpr("id % 100 AS ck", "id % 10 AS dk", "cast(id % 7 AS int) AS q") \
        .write.parquet(str(root / "fsales"))
    spark.range(10).selectExpr("id AS dk", "2000 + id % 5 AS yr").write.parquet(str(root / "fdays"))
    spark.range(100).selectExpr("id AS ck", "concat('c', id) AS name").write.parquet(str(root / "fcust"))
    for t in ("fsales", "fdays", "fcust"):
        spark.read.parquet(str(root / t)).createOrReplaceTempView(t)
    pa.statistics(spark, ["fsales", "fdays", "fcust"])
    yield
    pa.forget_statistics(spark)


# the day filter keeps a fifth of the sales rows, the customer join keeps them all
FILTERED = ("select c.name, sum(s.q), count(*) from fsales s join fdays d on s.dk = d.dk "
            "join fcust c on s.ck = c.ck where d.yr = 2001 group by c.name")


def _size(spark, table) -> int:
    return int(str(spark.table(table)._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))


def test_with_every_join_shuffled_it_pre_aggregates_all_of_the_filtered_side(spark, filtered_tables, conf):
    """The day join keeps a fifth of fsales' rows, but shuffled it reads them all: fsales is
    pre-aggregated alone, by its day and customer keys, before both joins (its rows read and made
    are the fewest), and the results are the same."""
    conf(SHUFFLE)
    text = _explain(spark, FILTERED)
    assert "EagerAggregation fired: pre-aggregating fsales by [" in text, text
    assert "before joining fdays ⋈ fcust" in text, text
    _, _, on_plan, _ = both_ways(spark, FILTERED)
    assert pre_aggregated(on_plan), on_plan


def test_where_spark_would_broadcast_the_filtering_join_it_does_not_pre_aggregate_all_of_that_side(
        spark, filtered_tables, conf):
    """fdays within the broadcast threshold, fcust and fsales not: the broadcast day join filters
    fsales in its scan's stage, so fsales alone (whose rows the joins keep a fifth of) is not
    pre-aggregated; fsales ⋈ fdays by customer is, before the customer join. Same results."""
    days, cust = _size(spark, "fdays"), _size(spark, "fcust")
    assert days < cust < _size(spark, "fsales"), (days, cust)
    conf({"spark.sql.autoBroadcastJoinThreshold": str(days)})
    text = _explain(spark, FILTERED)
    assert "EagerAggregation fired: pre-aggregating fsales ⋈ fdays by [ck]" in text, text
    _, _, on_plan, _ = both_ways(spark, FILTERED)
    assert pre_aggregated(on_plan), on_plan
