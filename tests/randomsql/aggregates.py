"""Aggregate shapes: ``GROUP BY`` (with ``HAVING``) over a relation or over a union, and window aggregates."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _cols, _select, _width
from .joins import _union_of_joins
from .relations import _rel, shape
from .setops import _nested_union, _setop


def _aggregate_over(draw, inner, m, n, cx):
    q = cx()
    cols = [f"{q}.{c}" for c in _cols(m)]
    n_keys = draw(st.integers(0, n))
    keys = [draw(st.sampled_from(cols)) for _ in range(n_keys)]
    aggs = [draw(st.sampled_from(cx.dom.aggs(cx))).format(c=draw(st.sampled_from(cols))) for _ in range(n - n_keys)]
    sql = f"SELECT {_select(keys + aggs)} FROM ({inner}) {q}"
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
    if aggs and draw(st.integers(0, 3)) == 0:
        sql += f" HAVING count(*) > {draw(st.integers(0, 2))}"
    return sql


@shape("aggregate")
def _aggregate(draw, depth, n, cx):
    m = _width(draw)
    return _aggregate_over(draw, _rel(draw, depth - 1, m, cx), m, n, cx)


@shape("agg_over_union")
def _agg_over_union(draw, depth, n, cx):
    m = _width(draw)
    inner = draw(st.sampled_from([_union_of_joins, _setop, _nested_union]))(draw, depth, m, cx)
    return _aggregate_over(draw, inner, m, n, cx)


@shape("window")
def _window(draw, depth, n, cx):
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    cols = [f"{q}.{c}" for c in _cols(n)]
    p = draw(st.sampled_from(cols))
    o = draw(st.sampled_from(cols))
    fn = draw(st.sampled_from(cx.dom.windows(cx))).format(p=p, o=o)
    cols[draw(st.integers(0, n - 1))] = fn
    return f"SELECT {_select(cols)} FROM ({inner}) {q}"
