"""Program.to_sql() (sql.py): every ArrNF program as one runnable Spark SQL statement.

The round trip: for each of the 22 TPC-H and 103 TPC-DS queries, the SQL written from its ArrNF
program parses in Spark and returns the same rows as the query itself (order-insensitive; the
generated data is small). A summary at the end reports how many of the 125 round-trip and why the
others do not.
"""
from __future__ import annotations

import re
import warnings
from decimal import Decimal

import pytest
import sqlglot

from pyspark_arrnf import arrnf
from pyspark_arrnf.data import queries
from pyspark_arrnf.model import Program
from pyspark_arrnf.sql import ArrnfSqlWarning, sql_problems, to_sql

NCOLS = 21


def seed_l4_sql() -> str:
    cols = ", ".join(f"c{i}" for i in range(2, NCOLS))
    l2cols = ", ".join(f"l2.c{i}" for i in range(2, NCOLS))
    return (f"select {cols} from l1 union all select {cols} from l3 except all "
            f"select {l2cols} from l2 join (select distinct c0 from l3) d on l2.c0 = d.c0")

RESULTS: dict[str, str] = {}   # "tpch/q1" -> "ok" or why not

TPCH = sorted(queries("tpch"))
TPCDS = sorted(queries("tpcds"))


def _norm(v):
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, Decimal):
        return round(float(v), 6)
    return v


def _rows(rows) -> list:
    out = [tuple(_norm(v) for v in r) for r in rows]
    return sorted(out, key=lambda r: tuple((v is None, str(v)) for v in r))


def _error_class(e: Exception) -> str:
    m = re.search(r"\[([A-Z_]+)\]", str(e))
    return m.group(1) if m else type(e).__name__


def _round_trip(spark, kind: str, name: str) -> None:
    q = queries(kind)[name]
    key = f"{kind}/{name}"
    RESULTS[key] = "not run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ArrnfSqlWarning)
        try:
            text = arrnf(q, spark).to_sql()
        except ArrnfSqlWarning as w:
            RESULTS[key] = f"not expressible: {w}"
            raise
    try:
        want = spark.sql(q).collect()
    except Exception as e:  # noqa: BLE001 - the query itself fails (ANSI division by zero at this scale)
        want_error = _error_class(e)
        with pytest.raises(Exception) as got_error:
            spark.sql(text).collect()
        RESULTS[key] = "ok" if _error_class(got_error.value) == want_error else "a different error"
        assert _error_class(got_error.value) == want_error
        return
    try:
        got = spark.sql(text).collect()
    except Exception as e:  # noqa: BLE001 - recorded, then re-raised
        RESULTS[key] = "Spark rejects or fails the SQL: " + (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise
    if _rows(got) != _rows(want):
        RESULTS[key] = f"different rows ({len(got)} vs {len(want)})"
    assert _rows(got) == _rows(want), f"{key}: the SQL of the ArrNF program returns other rows\n{text}"
    RESULTS[key] = "ok"


@pytest.mark.parametrize("name", TPCH)
def test_tpch_round_trip(spark, tpch_db, use_db, name):
    use_db(tpch_db)
    _round_trip(spark, "tpch", name)


@pytest.mark.parametrize("name", TPCDS)
def test_tpcds_round_trip(spark, tpcds_db, use_db, name):
    use_db(tpcds_db)
    _round_trip(spark, "tpcds", name)


def test_round_trip_summary():
    """Runs after the round trips (file order): how many of the 125 round-trip, and why not."""
    ran = {k: v for k, v in RESULTS.items()}
    ok = sum(v == "ok" for v in ran.values())
    lines = [f"to_sql round trip: {ok}/{len(ran)} queries return the same rows"]
    lines += [f"  {k}: {v}" for k, v in sorted(ran.items()) if v != "ok"]
    print("\n" + "\n".join(lines))
    if len(ran) == len(TPCH) + len(TPCDS):
        assert ok == len(ran), "\n".join(lines)


# ---------------------------------------------------------------- the seed's l4


def test_seed_l4_sql_has_the_seeds_shape(spark, seed_tables):
    p = arrnf(seed_l4_sql(), spark, name="l4")
    text = p.to_sql()
    tree = sqlglot.parse_one(text, read="spark")
    ctes = [c.alias for c in tree.args.get("with_", tree.args.get("with")).expressions]
    # one CTE per block, dependency order; the Distinct block first, l4 last
    assert ctes == [b.name for b in p.blocks] and ctes[-1] == "l4"
    distinct = [b for b in p.blocks if b.head is not None and b.head.kind == "Distinct"][0]
    cte = [c for c in tree.args.get("with_", tree.args.get("with")).expressions if c.alias == distinct.name][0]
    assert "GROUP BY" in cte.this.sql(dialect="spark").upper()
    # l4: UNION ALL of l1 and l3, EXCEPT ALL the join last
    l4 = [c for c in tree.args.get("with_", tree.args.get("with")).expressions if c.alias == "l4"][0].this
    assert isinstance(l4, sqlglot.exp.Except) and not l4.args.get("distinct")
    assert isinstance(l4.this, sqlglot.exp.Union) and not l4.this.args.get("distinct")
    assert l4.expression.find(sqlglot.exp.Join) is not None
    assert {t.name for t in l4.this.find_all(sqlglot.exp.Table)} == {"l1", "l3"}
    assert _rows(spark.sql(text).collect()) == _rows(spark.sql(seed_l4_sql()).collect())


def test_columns_quoted_and_finishing_order_at_the_end(spark):
    sql = ("select `a b`, count(*) as `count(*)` from values (1, 'x'), (2, 'y'), (1, 'z') as t(`a b`, s) "
           "group by `a b` order by `a b` desc limit 1")
    text = arrnf(sql, spark).to_sql()
    assert "`a b`" in text
    tree = sqlglot.parse_one(text, read="spark")
    assert tree.args.get("order") is not None and tree.args.get("limit") is not None
    assert [tuple(r) for r in spark.sql(text).collect()] == [(2, 1)]


ROLLUPS = {
    # a ROLLUP written out by hand: a UNION ALL of aggregates with CAST(NULL AS STRING) columns; the
    # finishing ORDER BY qualified by the FROM alias made Spark 4.3 refuse the statement
    # (PLAN_VALIDATION_FAILED_RULE_IN_BATCH in RemoveRedundantAliases), without the extension too
    "by_hand": """with y as (select i, b, avg(v) a, sum(c) s from ru group by i, b)
        select i, b, a, s from y
        union all select i, cast(null as string), avg(a), sum(s) from y group by i
        union all select cast(null as string), cast(null as string), avg(a), sum(s) from y
        order by i, b limit 100""",
    "rollup": "select i, b, sum(v) s, grouping_id() g from ru group by rollup(i, b) order by i, b, g",
    "renamed": "select b as i, i as b, sum(v) s from ru group by i, b order by i desc, b",
}


@pytest.mark.parametrize("name", sorted(ROLLUPS))
def test_rollup_shapes_round_trip_with_their_finishing_order(spark, name):
    spark.sql("create or replace temp view ru as select cast(id % 3 as string) as i, cast(id % 2 as string) as b, "
              "id as v, id % 5 as c from range(20)")
    q = ROLLUPS[name]
    text = arrnf(q, spark).to_sql()
    assert "ORDER BY" in text
    assert [tuple(r) for r in spark.sql(text).collect()] == [tuple(r) for r in spark.sql(q).collect()]


TOP_K = {
    # column pruning puts a projection between the LIMIT and its ORDER BY: the order still decides
    # which rows are kept (it was dropped as "a sort inside the query": any 10 rows, in SQL too)
    "pruned": "select t.k, d.n from (select k, g from tk order by v desc limit 10) t "
              "join (select id as g, id * 2 as n from range(50)) d on t.g = d.g",
    "kept_then_pruned": "select t.k, d.n from (select k, g, v from tk order by v desc limit 10) t "
                        "join (select id as g, id * 2 as n from range(50)) d on t.g = d.g",
    "computed": "select t.k2, t.g from (select k + 1 as k2, g from tk order by v, k limit 7) t where t.g > 3",
}


@pytest.mark.parametrize("name", sorted(TOP_K))
def test_a_limit_keeps_the_order_under_a_projection(spark, name):
    spark.sql("create or replace temp view tk as select id as k, id % 50 as g, (id * 7919) % 1000 as v from range(1000)")
    q = TOP_K[name]
    p = arrnf(q, spark)
    top = [b for b in p.blocks if b.head is not None and b.head.kind == "TopK"]
    assert len(top) == 1 and top[0].head.order and "a sort inside the query" not in str(p), str(p)
    text = p.to_sql()
    assert "ORDER BY" in text and "LIMIT" in text, text
    assert _rows(spark.sql(text).collect()) == _rows(spark.sql(q).collect()), text


def test_other_dialects_are_marked_best_effort(spark, tpch_db, use_db):
    use_db(tpch_db)
    p = arrnf(queries("tpch")["q3"], spark)
    for d in ("duckdb", "postgres"):
        text = p.to_sql(dialect=d)
        assert "BEST EFFORT" in text
        sqlglot.parse_one(text, read=d)
    with pytest.raises(ValueError):
        p.to_sql(dialect="oracle")


def test_json_round_trip_keeps_sql_forms(spark, tpch_db, use_db):
    use_db(tpch_db)
    p = arrnf(queries("tpch")["q18"], spark)
    again = Program.from_json(p.to_json())
    assert again.to_dict() == p.to_dict()
    assert again.to_sql() == p.to_sql()
    assert any(b.head is not None and b.head.sql and b.head.sql["kind"] == "aggregate" for b in p.blocks)


# ---------------------------------------------------------------- bad input: not expressible


def test_not_expressible_block_is_marked_and_warned(spark):
    df = spark.range(20).toDF("k").sample(withReplacement=False, fraction=0.5, seed=3)
    p = arrnf(df)
    with pytest.warns(ArrnfSqlWarning, match="Sample"):
        text = p.to_sql()
    assert "NOT EXPRESSIBLE IN SQL" in text and "raise_error" in text.lower()
    assert sql_problems(p)
    # never silently different rows: running it fails, loudly
    with pytest.raises(Exception, match="cannot be written in SQL"):
        spark.sql(text).collect()


def test_opaque_leaf_is_marked(spark):
    df = spark.range(10).toDF("k").mapInPandas(lambda it: it, "k long")
    p = arrnf(df)
    assert p.opaque >= 1
    with pytest.warns(ArrnfSqlWarning):
        text = to_sql(p)
    assert "NOT EXPRESSIBLE IN SQL" in text


def test_expressible_program_gives_no_warning(spark):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ArrnfSqlWarning)
        text = arrnf("select id % 3 as k, sum(id) as s from range(10) group by id % 3", spark).to_sql()
    assert sorted(tuple(r) for r in spark.sql(text).collect()) == [(0, 18), (1, 12), (2, 15)]
