"""Join shapes: joins of every type, ``UNION ALL`` of joins sharing an input (what
``FactorizeUnionOfJoins`` rewrites, and its near misses), and joins with one-row relations."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _cols, _select, _width
from .integers import INT
from .intervals import _Interval
from .relations import _expr, _maybe_failing, _pred, _rel, _unit, shape


JOIN_TYPES = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]


@shape("join")
def _join(draw, depth, n, cx):
    left_alias, right_alias = cx("l"), cx("r")
    ml, mr = _width(draw), _width(draw)
    left, right = _rel(draw, depth - 1, ml, cx), _rel(draw, depth - 1, mr, cx)
    jt = draw(st.sampled_from(JOIN_TYPES))
    lc = [f"{left_alias}.{c}" for c in _cols(ml)]
    rc = [f"{right_alias}.{c}" for c in _cols(mr)]
    on = ""
    if jt != "CROSS JOIN":
        on = f" ON {draw(st.sampled_from(lc))} {draw(st.sampled_from(['=', '=', '<=>']))} {draw(st.sampled_from(rc))}"
        if draw(st.integers(0, 3)) == 0:
            on += f" AND {_pred(draw, lc + rc, cx, 0)}"
    visible = lc if "SEMI" in jt or "ANTI" in jt else lc + rc
    outs = [draw(st.sampled_from(visible)) for _ in range(n)]
    return f"SELECT {_select(outs)} FROM ({left}) {left_alias} {jt} ({right}) {right_alias}{on}"


@shape("union_of_joins")
def _union_of_joins(draw, depth, n, cx):
    """(A ⋈ B1) ∪ … ∪ (A ⋈ Bk) with the same A text, mostly inner equi-joins on the same key.
    Branch columns over B are sometimes computed (``b.c0 + 1``, a failing or an interval
    expression): factorization moves them below the join, onto B rows that may never join."""
    ma = _width(draw)
    shared = _rel(draw, max(depth - 2, 0), ma, cx)
    key_a = draw(st.integers(0, ma - 1))
    n_a = draw(st.integers(0, n))  # how many output columns come from A (at the same positions)
    # A's output columns: the same text in every branch (@A@ stands for the branch's alias of A).
    a_template = [f"@A@.c{p}" for p in range(ma)]
    a_outs = [
        _expr(draw, a_template, cx) if not cx.plain and draw(st.integers(0, 5)) == 0 else draw(st.sampled_from(a_template))
        for _ in range(n_a)
    ]
    a_right = draw(st.integers(0, 3)) == 0  # the mirror form: A on the right
    branches = []
    before = cx.failing
    for _ in range(draw(st.integers(2, 4))):
        a, b = cx("a"), cx("b")
        mb = _width(draw)
        other = _maybe_failing(draw, _rel(draw, max(depth - 2, 0), mb, cx), mb, cx, one_in=4)
        ka = key_a if draw(st.integers(0, 5)) else draw(st.integers(0, ma - 1))  # sometimes another key
        jt = "JOIN" if draw(st.integers(0, 5)) else draw(st.sampled_from(["LEFT JOIN", "RIGHT JOIN", "LEFT SEMI JOIN", "FULL JOIN"]))
        cond = f"{a}.c{ka} = {b}.c{draw(st.integers(0, mb - 1))}"
        if draw(st.integers(0, 4)) == 0:
            cond += f" AND {_pred(draw, [f'{b}.{c}' for c in _cols(mb)], cx, 0)}"
        if jt == "LEFT SEMI JOIN" and a_right:
            jt = "JOIN"
        b_cols = [f"{a}.c{p}" for p in range(ma)] if jt == "LEFT SEMI JOIN" else [f"{b}.{c}" for c in _cols(mb)]

        def b_out():
            if cx.plain or draw(st.integers(0, 2)):
                return draw(st.sampled_from(b_cols))
            if cx.fail and draw(st.booleans()):
                return cx.dom.failing(draw, b_cols, cx)
            if cx.dom is INT and cx.fail in (None, "iv_add", "iv_mul", "raise") and draw(st.booleans()):
                return draw(st.sampled_from(INT.intervals(draw(st.sampled_from(b_cols)))))  # interval arithmetic
            return _expr(draw, b_cols, cx)

        outs = [e.replace("@A@", a) for e in a_outs] + [b_out() for _ in range(n - n_a)]
        computed = [e for e in outs[n_a:] if e not in b_cols]
        if any("INTERVAL" in e for e in computed) or (isinstance(cx.dom, _Interval) and computed):
            cx.tags.add("interval in branch")
        if a_right:
            frm = f"({other}) {b} {jt} ({shared}) {a} ON {cond}"
        else:
            frm = f"({shared}) {a} {jt} ({other}) {b} ON {cond}"
        where = f" WHERE {_pred(draw, [f'{b}.{c}' for c in _cols(mb)], cx, 0)}" if jt == "JOIN" and draw(st.integers(0, 3)) == 0 else ""
        branches.append(f"SELECT {_select(outs)} FROM {frm}{where}")
    if cx.failing > before:
        cx.tags.add("fail in branch")
    op = "UNION ALL" if draw(st.integers(0, 4)) else "UNION"
    return f" {op} ".join(f"({b})" for b in branches)


@shape("unit_join")
def _unit_join(draw, depth, n, cx):
    la, ua = cx("l"), cx("u")
    m = _width(draw)
    other = _rel(draw, depth - 1, m, cx)
    unit, mu = _unit(draw, cx)
    if not cx.plain and draw(st.integers(0, 3)) == 0:
        # Q ⋉ 1 and Q ▷ 1, with or without a condition: without one, Q ▷ 1 is empty — but Q must
        # still be evaluated where it may fail.
        other = _maybe_failing(draw, other, m, cx)
        jt = draw(st.sampled_from(["LEFT SEMI JOIN", "LEFT ANTI JOIN"]))
        on = draw(st.sampled_from(["", f" ON {la}.c{draw(st.integers(0, m - 1))} >= {ua}.c{draw(st.integers(0, mu - 1))}"]))
        outs = [f"{la}.c{draw(st.integers(0, m - 1))}" for _ in range(n)]
        return f"SELECT {_select(outs)} FROM ({other}) {la} {jt} ({unit}) {ua}{on}"
    jt = draw(st.sampled_from(["CROSS JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "JOIN"]))
    on = "" if jt == "CROSS JOIN" else f" ON {la}.c{draw(st.integers(0, m - 1))} >= {ua}.c{draw(st.integers(0, mu - 1))}"
    if jt == "JOIN" and draw(st.booleans()):
        on = " ON true"
    visible = [f"{la}.{c}" for c in _cols(m)] + [f"{ua}.{c}" for c in _cols(mu)]
    outs = [draw(st.sampled_from(visible)) for _ in range(n)]
    if draw(st.booleans()):
        return f"SELECT {_select(outs)} FROM ({other}) {la} {jt} ({unit}) {ua}{on}"
    return f"SELECT {_select(outs)} FROM ({unit}) {ua} {jt} ({other}) {la}{on}"
