"""Shapes over one relation: a filter, a projection, value terms (``x - x``, ``x * 0``, ``-(-x)``) over
columns computed below them, an unseeded sample, ``DISTINCT``, and ``IN`` / ``EXISTS`` / scalar
subqueries."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _cols, _select, _width
from .relations import _expr, _pred, _rel, shape


@shape("filter")
def _filter(draw, depth, n, cx):
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    return f"SELECT * FROM ({inner}) {q} WHERE {_pred(draw, [f'{q}.{c}' for c in _cols(n)], cx)}"


@shape("project")
def _project(draw, depth, n, cx):
    q, m = cx(), _width(draw)
    inner = _rel(draw, depth - 1, m, cx)
    cols = [f"{q}.{c}" for c in _cols(m)]
    return f"SELECT {_select([_expr(draw, cols, cx) for _ in range(n)])} FROM ({inner}) {q}"


@shape("derived")
def _derived(draw, depth, n, cx):
    """Value terms (``x - x``, ``x * 0``, ``-(-x)``) over columns computed below: failing,
    DECIMAL(38) or interval expressions, whose definitions must not be dropped with their errors."""
    q, r, m = cx(), cx(), _width(draw)
    inner = _rel(draw, depth - 1, m, cx)
    cols = [f"{q}.{c}" for c in _cols(m)]
    mid = [cx.dom.interesting(draw, cols, cx) for _ in range(m)]
    outs = [cx.dom.value_term(draw, f"{r}.c{draw(st.integers(0, m - 1))}") for _ in range(n)]
    return f"SELECT {_select(outs)} FROM (SELECT {_select(mid)} FROM ({inner}) {q}) {r}"


@shape("sampled")
def _sampled(draw, depth, n, cx):
    """An unseeded sample over a subquery (only in queries that may hold unseeded samples)."""
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    return f"SELECT * FROM ({inner}) TABLESAMPLE ({draw(st.sampled_from([30, 50, 70]))} PERCENT) {q}"


@shape("distinct")
def _distinct(draw, depth, n, cx):
    q = cx()
    return f"SELECT DISTINCT * FROM ({_rel(draw, depth - 1, n, cx)}) {q}"


@shape("subquery")
def _subquery(draw, depth, n, cx):
    q, s = cx(), cx("s")
    outer = _rel(draw, depth - 1, n, cx)
    m = _width(draw)
    inner = _rel(draw, depth - 1, m, cx)
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
        count = cx.dom.from_count(f"(SELECT count(*) FROM ({inner}) {s} WHERE {s}.c0 = {c})")
        cols[draw(st.integers(0, n - 1))] = count
        return f"SELECT {_select(cols)} FROM ({outer}) {q}"
    return f"SELECT * FROM ({outer}) {q} WHERE {cond}"
