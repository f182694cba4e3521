"""Random, valid Spark SQL over small random tables, for differential testing of the extension.

Two parts:

* :func:`create_tables` writes a few tiny Parquet tables (NULLs, duplicates, a skewed key, an empty
  table, a one-row table) and registers them as temporary views ``rt0``, ``rt1``, ``rt2``, ``rte``,
  ``rt1r``, all with the columns ``k INT, a INT, b INT``.
* :func:`queries` is a hypothesis strategy of SQL texts over those views. Every relation it builds
  has the integer columns ``c0 … c{n-1}``, so any two relations of the same width can be combined
  by a set operation. It favours the shapes ring-law rules rewrite: ``UNION ALL`` of joins sharing
  an input (the same text in every branch, sometimes with the shared side on the right, sometimes
  with a different key or an outer join so that factorization must not fire), ``EXCEPT ALL`` /
  ``INTERSECT ALL`` (also of a relation with itself), joins with one-row relations, nested unions,
  aggregates over unions, outer, semi and anti joins beside inner ones, ``IN``/``EXISTS``/scalar
  subqueries and window aggregates. Nothing it generates depends on row order or randomness, so
  the same query must return the same bag of rows however it is planned.

>>> from hypothesis import strategies as st
>>> sql = queries().example()   # doctest: +SKIP
>>> sql_of([("base", "rt0", ["k", "a"])])
'SELECT k AS c0, a AS c1 FROM rt0'
>>> for _, rows in TABLES.items(): assert all(len(r) == 3 for r in rows)
>>> len(TABLES["rte"]), len(TABLES["rt1r"])
(0, 1)
"""
from __future__ import annotations

import decimal
import math
import random

from hypothesis import strategies as st

COLUMNS = ("k", "a", "b")


def _table(rng: random.Random, n: int, null_rate: float, key_skew: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))  # an exact duplicate
            continue

        def v(hi):
            return None if rng.random() < null_rate else rng.randint(0, hi)

        k = 1 if rng.random() < key_skew else v(6)  # skew: most rows share key 1
        rows.append((k, v(4), v(9)))
    return rows


def _tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240801)
    return {
        "rt0": _table(rng, 40, 0.15, 0.5, 0.2),  # skewed key, some NULLs and duplicates
        "rt1": _table(rng, 12, 0.1, 0.0, 0.35),  # many duplicates
        "rt2": _table(rng, 8, 0.5, 0.0, 0.1),  # mostly NULLs
        "rte": [],  # empty
        "rt1r": [(1, 2, None)],  # one row
    }


TABLES = _tables()


def create_tables(spark, folder) -> list[str]:
    """Writes :data:`TABLES` as Parquet under ``folder`` and registers each as a temporary view."""
    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = StructType([StructField(c, IntegerType(), True) for c in COLUMNS])
    for name, rows in TABLES.items():
        path = f"{folder}/{name}"
        spark.createDataFrame(rows, schema).coalesce(1).write.mode("overwrite").parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(name)
    return list(TABLES)


def sql_of(parts) -> str:
    """Tiny helper for the doctest: a base relation's SQL."""
    (_, table, cols), = parts
    return "SELECT " + ", ".join(f"{c} AS c{i}" for i, c in enumerate(cols)) + f" FROM {table}"


# ---------------------------------------------------------------------------------------------
# The generator. Each function draws one relation of width ``n`` (columns c0..c{n-1}) as SQL.


class _Names:
    """Fresh alias names within one query."""

    def __init__(self):
        self.i = 0

    def __call__(self, prefix="q"):
        self.i += 1
        return f"{prefix}{self.i}"


def _cols(n):
    return [f"c{i}" for i in range(n)]


def _select(exprs) -> str:
    return ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))


def _lit(draw):
    return str(draw(st.integers(0, 6)))


def _pred(draw, cols, depth=1):
    """A predicate over ``cols`` (qualified column names)."""
    c = draw(st.sampled_from(cols))
    kind = draw(st.integers(0, 9 if depth > 0 else 6))
    if kind == 0:
        return f"{c} > {_lit(draw)}"
    if kind == 1:
        return f"{c} IS NULL"
    if kind == 2:
        return f"{c} IS NOT NULL"
    if kind == 3:
        return f"{c} = {draw(st.sampled_from(cols))}"
    if kind == 4:
        return f"{c} IN ({_lit(draw)}, {_lit(draw)})"
    if kind == 5:
        return f"coalesce({c}, 0) <= {_lit(draw)}"
    if kind == 6:
        return f"{c} <=> {draw(st.sampled_from(cols))}"
    if kind == 7:
        return f"NOT ({_pred(draw, cols, depth - 1)})"
    if kind == 8:
        return f"({_pred(draw, cols, depth - 1)} AND {_pred(draw, cols, depth - 1)})"
    return f"({_pred(draw, cols, depth - 1)} OR {_pred(draw, cols, depth - 1)})"


def _expr(draw, cols):
    c = draw(st.sampled_from(cols))
    kind = draw(st.integers(0, 6))
    return [
        c,
        f"{c} + {_lit(draw)}",
        f"coalesce({c}, {_lit(draw)})",
        f"CASE WHEN {c} > {_lit(draw)} THEN {c} ELSE {_lit(draw)} END",
        f"{c} * 2",
        _lit(draw),
        "CAST(NULL AS INT)",
    ][kind]


def _base(draw, n, names):
    table = draw(st.sampled_from(["rt0", "rt1", "rt2", "rte", "rt1r"]))
    cols = [draw(st.sampled_from(COLUMNS)) for _ in range(n)]
    sql = f"SELECT {_select(cols)} FROM {table}"
    if draw(st.integers(0, 3)) == 0:
        sql += f" WHERE {_pred(draw, list(COLUMNS), 0)}"
    return sql


def _unit(draw, names):
    """A one-row relation: literals (the unit of the join) or, rarely, a one-row aggregate."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return "SELECT 1 AS c0, 2 AS c1", 2
    if kind == 1:
        return "SELECT 3 AS c0", 1
    if kind == 2:
        return "SELECT CAST(NULL AS INT) AS c0, 0 AS c1", 2
    return "SELECT count(*) AS c0, max(k) AS c1 FROM rt1", 2  # one row, but not literals


def _width(draw):
    return draw(st.integers(1, 3))


def _rel(draw, depth, n, names) -> str:
    if depth <= 0:
        return _base(draw, n, names)
    kind = draw(
        st.sampled_from(
            [
                "base", "filter", "project", "join", "union_of_joins", "union_of_joins", "setop",
                "self_setop", "unit_join", "aggregate", "agg_over_union", "nested_union", "distinct",
                "subquery", "window",
            ]
        )
    )
    return globals()["_" + kind](draw, depth, n, names) if kind != "base" else _base(draw, n, names)


def _filter(draw, depth, n, names):
    q = names()
    inner = _rel(draw, depth - 1, n, names)
    return f"SELECT * FROM ({inner}) {q} WHERE {_pred(draw, [f'{q}.{c}' for c in _cols(n)])}"


def _project(draw, depth, n, names):
    q, m = names(), _width(draw)
    inner = _rel(draw, depth - 1, m, names)
    cols = [f"{q}.{c}" for c in _cols(m)]
    return f"SELECT {_select([_expr(draw, cols) for _ in range(n)])} FROM ({inner}) {q}"


JOIN_TYPES = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]


def _join(draw, depth, n, names):
    left_alias, right_alias = names("l"), names("r")
    ml, mr = _width(draw), _width(draw)
    left, right = _rel(draw, depth - 1, ml, names), _rel(draw, depth - 1, mr, names)
    jt = draw(st.sampled_from(JOIN_TYPES))
    lc = [f"{left_alias}.{c}" for c in _cols(ml)]
    rc = [f"{right_alias}.{c}" for c in _cols(mr)]
    on = ""
    if jt != "CROSS JOIN":
        on = f" ON {draw(st.sampled_from(lc))} {draw(st.sampled_from(['=', '=', '<=>']))} {draw(st.sampled_from(rc))}"
        if draw(st.integers(0, 3)) == 0:
            on += f" AND {_pred(draw, lc + rc, 0)}"
    visible = lc if "SEMI" in jt or "ANTI" in jt else lc + rc
    outs = [draw(st.sampled_from(visible)) for _ in range(n)]
    return f"SELECT {_select(outs)} FROM ({left}) {left_alias} {jt} ({right}) {right_alias}{on}"


def _union_of_joins(draw, depth, n, names):
    """(A ⋈ B1) ∪ … ∪ (A ⋈ Bk) with the same A text, mostly inner equi-joins on the same key."""
    ma = _width(draw)
    shared = _rel(draw, max(depth - 2, 0), ma, names)
    key_a = draw(st.integers(0, ma - 1))
    n_a = draw(st.integers(0, n))  # how many output columns come from A (at the same positions)
    a_pos = [draw(st.integers(0, ma - 1)) for _ in range(n_a)]
    a_right = draw(st.integers(0, 3)) == 0  # the mirror form: A on the right
    branches = []
    for _ in range(draw(st.integers(2, 4))):
        a, b = names("a"), names("b")
        mb = _width(draw)
        other = _rel(draw, max(depth - 2, 0), mb, names)
        ka = key_a if draw(st.integers(0, 5)) else draw(st.integers(0, ma - 1))  # sometimes another key
        jt = "JOIN" if draw(st.integers(0, 5)) else draw(st.sampled_from(["LEFT JOIN", "RIGHT JOIN", "LEFT SEMI JOIN", "FULL JOIN"]))
        cond = f"{a}.c{ka} = {b}.c{draw(st.integers(0, mb - 1))}"
        if draw(st.integers(0, 4)) == 0:
            cond += f" AND {_pred(draw, [f'{b}.{c}' for c in _cols(mb)], 0)}"
        if jt == "LEFT SEMI JOIN" and a_right:
            jt = "JOIN"
        b_cols = [f"{a}.c{p}" for p in range(ma)] if jt == "LEFT SEMI JOIN" else [f"{b}.{c}" for c in _cols(mb)]
        outs = [f"{a}.c{p}" for p in a_pos] + [draw(st.sampled_from(b_cols)) for _ in range(n - n_a)]
        if a_right:
            frm = f"({other}) {b} {jt} ({shared}) {a} ON {cond}"
        else:
            frm = f"({shared}) {a} {jt} ({other}) {b} ON {cond}"
        where = f" WHERE {_pred(draw, [f'{b}.{c}' for c in _cols(mb)], 0)}" if jt == "JOIN" and draw(st.integers(0, 3)) == 0 else ""
        branches.append(f"SELECT {_select(outs)} FROM {frm}{where}")
    op = "UNION ALL" if draw(st.integers(0, 4)) else "UNION"
    return f" {op} ".join(f"({b})" for b in branches)


SET_OPS = ["UNION ALL", "UNION", "EXCEPT ALL", "EXCEPT", "INTERSECT ALL", "INTERSECT"]


def _setop(draw, depth, n, names):
    left, right = _rel(draw, depth - 1, n, names), _rel(draw, depth - 1, n, names)
    return f"({left}) {draw(st.sampled_from(SET_OPS))} ({right})"


def _self_setop(draw, depth, n, names):
    """Negation and cancellation shapes: X − X, (X + Y) − X, X − (X + Y), X ∩ X, and near misses."""
    x = _rel(draw, depth - 1, n, names)
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return f"({x}) EXCEPT ALL ({x})"
    if kind == 1:
        return f"({x}) INTERSECT ALL ({x})"
    y = _rel(draw, depth - 1, n, names)
    if kind == 2:
        return f"(({x}) UNION ALL ({y})) EXCEPT ALL ({x})"
    if kind == 3:
        return f"({x}) EXCEPT ALL (({x}) UNION ALL ({y}))"
    if kind == 4:
        return f"(({x}) EXCEPT ALL ({x})) UNION ALL ({y})"
    if kind == 5:  # a near miss: X minus a filtered X does not cancel
        q = names()
        return f"({x}) EXCEPT ALL (SELECT * FROM ({x}) {q} WHERE {_pred(draw, [f'{q}.{c}' for c in _cols(n)], 0)})"
    return f"({x}) EXCEPT ({x})"


def _unit_join(draw, depth, n, names):
    la, ua = names("l"), names("u")
    m = _width(draw)
    other = _rel(draw, depth - 1, m, names)
    unit, mu = _unit(draw, names)
    jt = draw(st.sampled_from(["CROSS JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "JOIN"]))
    on = "" if jt == "CROSS JOIN" else f" ON {la}.c{draw(st.integers(0, m - 1))} >= {ua}.c{draw(st.integers(0, mu - 1))}"
    if jt == "JOIN" and draw(st.booleans()):
        on = " ON true"
    visible = [f"{la}.{c}" for c in _cols(m)] + [f"{ua}.{c}" for c in _cols(mu)]
    outs = [draw(st.sampled_from(visible)) for _ in range(n)]
    if draw(st.booleans()):
        return f"SELECT {_select(outs)} FROM ({other}) {la} {jt} ({unit}) {ua}{on}"
    return f"SELECT {_select(outs)} FROM ({unit}) {ua} {jt} ({other}) {la}{on}"


AGGS = ["count(*)", "count({c})", "sum({c})", "min({c})", "max({c})", "count(DISTINCT {c})", "sum(DISTINCT {c})"]


def _aggregate_over(draw, inner, m, n, names):
    q = names()
    cols = [f"{q}.{c}" for c in _cols(m)]
    n_keys = draw(st.integers(0, n))
    keys = [draw(st.sampled_from(cols)) for _ in range(n_keys)]
    aggs = [draw(st.sampled_from(AGGS)).format(c=draw(st.sampled_from(cols))) for _ in range(n - n_keys)]
    sql = f"SELECT {_select(keys + aggs)} FROM ({inner}) {q}"
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
    if aggs and draw(st.integers(0, 3)) == 0:
        sql += f" HAVING count(*) > {draw(st.integers(0, 2))}"
    return sql


def _aggregate(draw, depth, n, names):
    m = _width(draw)
    return _aggregate_over(draw, _rel(draw, depth - 1, m, names), m, n, names)


def _agg_over_union(draw, depth, n, names):
    m = _width(draw)
    inner = draw(st.sampled_from([_union_of_joins, _setop, _nested_union]))(draw, depth, m, names)
    return _aggregate_over(draw, inner, m, n, names)


def _nested_union(draw, depth, n, names):
    parts = [_rel(draw, depth - 1, n, names) for _ in range(draw(st.integers(2, 3)))]
    inner = " UNION ALL ".join(f"({p})" for p in parts)
    q = names()
    other = _rel(draw, depth - 1, n, names)
    op = draw(st.sampled_from(["UNION ALL", "UNION ALL", "UNION", "EXCEPT ALL", "INTERSECT ALL"]))
    return f"(SELECT * FROM ({inner}) {q}) {op} ({other})"


def _distinct(draw, depth, n, names):
    q = names()
    return f"SELECT DISTINCT * FROM ({_rel(draw, depth - 1, n, names)}) {q}"


def _subquery(draw, depth, n, names):
    q, s = names(), names("s")
    outer = _rel(draw, depth - 1, n, names)
    m = _width(draw)
    inner = _rel(draw, depth - 1, m, names)
    c = f"{q}.c{draw(st.integers(0, n - 1))}"
    kind = draw(st.integers(0, 5))
    if kind == 0:
        cond = f"{c} IN (SELECT {s}.c0 FROM ({inner}) {s})"
    elif kind == 1:
        cond = f"{c} NOT IN (SELECT {s}.c0 FROM ({inner}) {s})"
    elif kind == 2:
        cond = f"EXISTS (SELECT 1 FROM ({inner}) {s} WHERE {s}.c{draw(st.integers(0, m - 1))} = {c})"
    elif kind == 3:
        cond = f"NOT EXISTS (SELECT 1 FROM ({inner}) {s} WHERE {s}.c0 = {c})"
    elif kind == 4:
        cond = f"{c} >= (SELECT max({s}.c0) FROM ({inner}) {s})"
    else:
        cols = [f"{q}.c{i}" for i in range(n)]
        cols[draw(st.integers(0, n - 1))] = f"(SELECT count(*) FROM ({inner}) {s} WHERE {s}.c0 = {c})"
        return f"SELECT {_select(cols)} FROM ({outer}) {q}"
    return f"SELECT * FROM ({outer}) {q} WHERE {cond}"


def _window(draw, depth, n, names):
    q = names()
    inner = _rel(draw, depth - 1, n, names)
    cols = [f"{q}.{c}" for c in _cols(n)]
    p = draw(st.sampled_from(cols))
    o = draw(st.sampled_from(cols))
    fn = draw(
        st.sampled_from(
            [
                f"sum({o}) OVER (PARTITION BY {p})",
                f"count(*) OVER (PARTITION BY {p})",
                f"rank() OVER (PARTITION BY {p} ORDER BY {o})",
                f"max({o}) OVER (PARTITION BY {p} ORDER BY {o})",
            ]
        )
    )
    cols[draw(st.integers(0, n - 1))] = fn
    return f"SELECT {_select(cols)} FROM ({inner}) {q}"


@st.composite
def queries(draw, max_depth: int = 3) -> str:
    """A hypothesis strategy of random SQL queries over the :data:`TABLES` views."""
    names = _Names()
    n = _width(draw)
    depth = draw(st.integers(1, max_depth))
    body = _rel(draw, depth, n, names)
    if draw(st.integers(0, 4)) == 0:  # sometimes an aggregate on top of everything
        return _aggregate_over(draw, body, n, _width(draw), names)
    return body


# ---------------------------------------------------------------------------------------------
# Comparing results as bags, with a tolerance for floating point.


def norm(v):
    """A sort key for a value: floats rounded (tolerance), NaN and None made comparable."""
    if v is None:
        return (0, "")
    if isinstance(v, float):
        if math.isnan(v):
            return (1, "nan")
        return (2, float(f"{v:.6g}"))
    if isinstance(v, (int, decimal.Decimal)):
        return (2, v)
    return (3, str(v))


def row_key(row):
    return tuple(norm(v) for v in row)


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def same_bag(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(sorted(a, key=row_key), sorted(b, key=row_key)):
        if len(x) != len(y) or not all(_same_value(u, v) for u, v in zip(x, y)):
            return False
    return True
