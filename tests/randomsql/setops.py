"""Set-operation shapes: ``UNION`` / ``EXCEPT`` / ``INTERSECT`` (``ALL`` or not) of two relations, the
negation and cancellation shapes of a relation with itself (``X - X``, ``(X + Y) - X`` … and near
misses), and nested unions."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _cols
from .relations import _maybe_failing, _pred, _rel, shape
from .strings import _Str


SET_OPS = ["UNION ALL", "UNION", "EXCEPT ALL", "EXCEPT", "INTERSECT ALL", "INTERSECT"]


@shape("setop")
def _setop(draw, depth, n, cx):
    left = _maybe_failing(draw, _rel(draw, depth - 1, n, cx), n, cx, one_in=4)
    right = _maybe_failing(draw, _rel(draw, depth - 1, n, cx), n, cx, one_in=4)
    return f"({left}) {draw(st.sampled_from(SET_OPS))} ({right})"


@shape("self_setop")
def _self_setop(draw, depth, n, cx):
    """Negation and cancellation shapes: X − X, (X + Y) − X, X − (X + Y), X ∩ X, and near misses.
    In queries that may fail, X often computes a failing expression: cancelling X must keep the error."""
    before = cx.failing
    x = _maybe_failing(draw, _rel(draw, depth - 1, n, cx), n, cx)
    if cx.failing > before:
        cx.tags.add("fail in X-X")
    if isinstance(cx.dom, _Str):
        cx.tags.add("collated X-X")
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return f"({x}) EXCEPT ALL ({x})"
    if kind == 1:
        return f"({x}) INTERSECT ALL ({x})"
    if kind == 7:
        return f"({x}) INTERSECT ({x})"
    if kind == 8 and not cx.plain:
        return f"(SELECT DISTINCT * FROM ({x}) {cx()}) EXCEPT ({x})"
    y = _rel(draw, depth - 1, n, cx)
    if kind == 2:
        return f"(({x}) UNION ALL ({y})) EXCEPT ALL ({x})"
    if kind == 3:
        return f"({x}) EXCEPT ALL (({x}) UNION ALL ({y}))"
    if kind == 4:
        return f"(({x}) EXCEPT ALL ({x})) UNION ALL ({y})"
    if kind == 5:  # a near miss: X minus a filtered X does not cancel
        q = cx()
        return f"({x}) EXCEPT ALL (SELECT * FROM ({x}) {q} WHERE {_pred(draw, [f'{q}.{c}' for c in _cols(n)], cx, 0)})"
    return f"({x}) EXCEPT ({x})"


@shape("nested_union")
def _nested_union(draw, depth, n, cx):
    parts = [_rel(draw, depth - 1, n, cx) for _ in range(draw(st.integers(2, 3)))]
    inner = " UNION ALL ".join(f"({p})" for p in parts)
    q = cx()
    other = _rel(draw, depth - 1, n, cx)
    op = draw(st.sampled_from(["UNION ALL", "UNION ALL", "UNION", "EXCEPT ALL", "INTERSECT ALL"]))
    return f"(SELECT * FROM ({inner}) {q}) {op} ({other})"
