"""The generator's core. Each function draws one relation of width ``n`` (columns ``c0..c{n-1}``) as
SQL: :func:`_rel` draws a kind of :data:`KINDS` and calls the function registered for it with
:func:`shape` (in :mod:`.selects`, :mod:`.joins`, :mod:`.setops`, :mod:`.aggregates`,
:mod:`.aggjoins`); here are
the base relations (a table, maybe sampled and filtered), one-row relations, predicates, and a
failing expression put over a relation."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _cols, _Ctx, _select
from .integers import INT, _Int
from .intervals import _Interval
from .tables import COLUMNS


SHAPE_FUNCS: dict = {}  # kind of :data:`KINDS` -> the function drawing it, filled by @shape in the shape modules


def shape(kind: str):
    """Registers the decorated function as the one :func:`_rel` calls for ``kind``."""

    def register(f):
        SHAPE_FUNCS[kind] = f
        return f

    return register


def _pred(draw, cols, cx, depth=1):
    """A predicate over ``cols`` (qualified column names)."""
    dom = cx.dom
    c = draw(st.sampled_from(cols))
    kind = draw(st.integers(0, 9 if depth > 0 else 6))
    if cx.fail and draw(st.integers(0, 7)) == 0:
        return f"{dom.failing(draw, cols, cx)} {draw(st.sampled_from(['>', '=', '<=']))} {dom.cmp_lit(draw)}"
    if kind == 0:
        return f"{c} > {dom.cmp_lit(draw)}"
    if kind == 1:
        return f"{c} IS NULL"
    if kind == 2:
        return f"{c} IS NOT NULL"
    if kind == 3:
        return f"{c} = {draw(st.sampled_from(cols))}"
    if kind == 4:
        return f"{c} IN ({dom.cmp_lit(draw)}, {dom.cmp_lit(draw)})"
    if kind == 5:
        return f"coalesce({c}, {dom.cmp_lit(draw)}) <= {dom.cmp_lit(draw)}"
    if kind == 6:
        return f"{c} <=> {draw(st.sampled_from(cols))}"
    if kind == 7:
        return f"NOT ({_pred(draw, cols, cx, depth - 1)})"
    if kind == 8:
        return f"({_pred(draw, cols, cx, depth - 1)} AND {_pred(draw, cols, cx, depth - 1)})"
    return f"({_pred(draw, cols, cx, depth - 1)} OR {_pred(draw, cols, cx, depth - 1)})"


def _expr(draw, cols, cx):
    return cx.dom.expr(draw, cols, cx)


SEEDED_SAMPLES = [
    " TABLESAMPLE (50 PERCENT) REPEATABLE (7)",
    " TABLESAMPLE (30 PERCENT) REPEATABLE (42)",
    " TABLESAMPLE (0 PERCENT)",  # unseeded, but no row either way
    " TABLESAMPLE (100 PERCENT)",  # unseeded, but every row
]


def _sample(draw, cx) -> str:
    if cx.plain:
        return ""
    if cx.unseeded and draw(st.integers(0, 2)) == 0:
        return f" TABLESAMPLE ({draw(st.sampled_from([30, 50, 70]))} PERCENT)"
    if draw(st.integers(0, 39)) == 0:
        return draw(st.sampled_from(SEEDED_SAMPLES))
    return ""


def _base(draw, n, cx):
    dom = cx.dom
    if isinstance(dom, _Interval) and draw(st.integers(0, 2)) == 0:
        table, exprs = dom.computed_base(draw, n)
        cols = list(COLUMNS)
    else:
        table = draw(st.sampled_from(dom.tables))
        cols = dom.columns()
        exprs = [draw(st.sampled_from(cols)) for _ in range(n)]
        if dom is INT and not cx.plain and cx.fail in (None, "decimal") and draw(st.integers(0, 7)) == 0:
            i = draw(st.integers(0, n - 1))  # a DECIMAL(38, 0) column near the precision
            exprs[i] = draw(st.sampled_from(INT.decimals(exprs[i])))
    sql = f"SELECT {_select(exprs)} FROM {table}{_sample(draw, cx)}"
    if draw(st.integers(0, 3)) == 0:
        sub = _Ctx(INT if table in _Int.tables else dom, cx.fail, cx.unseeded, cx.plain)
        sql += f" WHERE {_pred(draw, cols, sub, 0)}"
        cx.failing += sub.failing
    return sql


def _unit(draw, cx):
    """A one-row relation: literals (the unit of the join) or, rarely, a one-row aggregate."""
    return draw(st.sampled_from(cx.dom.units()))


KINDS = [
    "base", "filter", "project", "join", "union_of_joins", "union_of_joins", "setop",
    "self_setop", "unit_join", "aggregate", "agg_over_union", "nested_union", "distinct",
    "subquery", "window", "aggjoin",
]


def _rel(draw, depth, n, cx) -> str:
    if depth <= 0:
        return _base(draw, n, cx)
    kinds = KINDS if cx.plain else KINDS + ["self_setop", "derived"] + (["sampled"] if cx.unseeded else [])
    kind = draw(st.sampled_from(kinds))
    return SHAPE_FUNCS[kind](draw, depth, n, cx) if kind != "base" else _base(draw, n, cx)


def _failing_over(draw, inner, n, cx):
    """``inner`` under a projection with at least one failing expression."""
    q = cx()
    cols = [f"{q}.{c}" for c in _cols(n)]
    exprs = [draw(st.sampled_from(cols + [_expr(draw, cols, cx)])) for _ in range(n)]
    exprs[draw(st.integers(0, n - 1))] = cx.dom.failing(draw, cols, cx)
    return f"SELECT {_select(exprs)} FROM ({inner}) {q}"


def _maybe_failing(draw, rel, n, cx, one_in=2):
    if cx.fail and draw(st.integers(1, one_in)) == 1:
        return _failing_over(draw, rel, n, cx)
    return rel
