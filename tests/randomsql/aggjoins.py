"""Aggregates over joins: what eager aggregation (``EagerAggregation``) rewrites, and its near misses.

``SELECT g…, agg(…) FROM A JOIN B ON A.k = B.k [JOIN C ON …] [WHERE …] GROUP BY g…``: grouping
columns from either side or both, or none (a global aggregate); ``sum``, ``count(*)``,
``count(col)``, ``min``, ``max``, ``avg``, ``count(DISTINCT col)``, ``sum(DISTINCT col)``, some
with ``FILTER (WHERE …)``; arguments over one side or over both; a projection and a filter
between the join and the aggregate; chains and stars of two or three inner joins. Near misses,
where the law does not hold or must be checked: outer, semi and anti joins, ``GROUPING SETS`` /
``ROLLUP`` / ``CUBE``, a non-deterministic filter between the join and the aggregate (``rand(1)
< 2``: always true; Spark refuses ``rand`` in an aggregate's argument), null-safe and double keys,
extra join conditions over both sides.

Four shapes, registered with :func:`~.relations.shape` and drawn together through the kind
``aggjoin`` (:func:`_aggjoin`): ``agg_join`` (two inner-joined inputs), ``agg_star`` (three),
``agg_projected`` (a projection and filter in between), ``agg_near`` (the near misses). In any
domain (:mod:`.integers`, :mod:`.strings`, :mod:`.intervals`) each side is a relation the
generator draws, its columns ``c0…`` of the domain: collated join and grouping keys come from
there. In the numeric domain :data:`NUMERIC` (a query of its own, :func:`numeric_query`) the
sides are the tables of :data:`~.tables.AGG_TABLES`, read by name, whose columns reach the limits
of their types: BIGINT and DECIMAL(38,2) sums overflow (the join's multiplicities decide where),
``e + 1`` overflows and ``10 DIV e`` divides by zero, on rows that may or may not find a partner.

Errors. A query may raise one class of error only, or which one is raised would depend on the
order the plan evaluates things in: the numeric domain's failing kinds are ``overflow``
(``ARITHMETIC_OVERFLOW``: BIGINT and DECIMAL sums, ``e + 1``, ``l * 2``), ``range``
(``NUMERIC_VALUE_OUT_OF_RANGE``: ``d38 * 2`` under count, min and max only) and ``div0``
(``DIVIDE_BY_ZERO``). Without a kind every argument is safe for the aggregates it is given to
(``count(l)``, ``max(d38)``, never ``sum(l)``). ``avg`` of a DECIMAL(38) raises either class
(its sum, or its division) and is never drawn; in the integer domain ``avg`` is left out for the
same reason (its columns may be DECIMAL(38,0) expressions), and with the ``decimal`` kind its
aggregates are only counts, ``min`` and ``max``.

Mostly the functions the rule splits are drawn (:data:`WEIGHTS`: ``FILTER`` makes it decline for
the whole aggregate; ``avg`` of an integer or small decimal splits into a sum and a count, a DISTINCT
aggregate stays above the join), and half the numeric projections list plain columns
(``SELECT f1.g, d2.i …``): the rule looks through those, not through renaming ones (``f1.g AS
c0``), which stay as near misses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

from .context import _cols, _select, _width
from .integers import INT
from .relations import SHAPE_FUNCS, _expr, _pred, _rel, shape


# ---------------------------------------------------------------------------------------------
# Aggregate functions and their arguments

ALL_AGGS = ("sum", "count", "count(*)", "min", "max", "avg", "count DISTINCT", "sum DISTINCT")
COUNTS = ("count", "count(*)", "count DISTINCT")
ORDER = ("count", "count(*)", "min", "max", "count DISTINCT")  # never add: no sum, no avg


def _call(func: str, arg: str, flt: str = "") -> str:
    """The SQL of aggregate ``func`` over ``arg``, with ``flt`` (`` FILTER (WHERE …)``) or not."""
    if func == "count(*)":
        return f"count(*){flt}"
    name, _, distinct = func.partition(" ")
    return f"{name}({'DISTINCT ' if distinct else ''}{arg}){flt}"


@dataclass(frozen=True)
class _Arg:
    """An aggregate's argument, the aggregate functions it may be given to, and those under which
    it may fail (see the module doc)."""

    sql: str
    funcs: tuple = ALL_AGGS
    fails: tuple = ()


# ---------------------------------------------------------------------------------------------
# The numeric domain: the AGG_TABLES, read by name


SAFE_ONE = ["{s}.i", "{s}.g", "{s}.k", "{s}.j", "{s}.e", "{s}.d18", "{s}.d28", "{s}.x", "coalesce({s}.i, 0)",
            "{s}.i * 2", "CASE WHEN {s}.g > 0 THEN {s}.i ELSE {s}.j END", "{s}.d18 * 100", "{s}.x * 2", "{s}.i - {s}.i",
            "CAST({s}.i AS DECIMAL(8,2))"]  # Spark sums a DECIMAL(8) as its unscaled LONG (DecimalAggregates)
SAFE_BOTH = ["{a}.i + {b}.i", "{a}.i * {b}.g", "CASE WHEN {a}.g = {b}.g THEN {a}.i ELSE {b}.i END",
             "coalesce({a}.x, {b}.x)", "{a}.d18 + {b}.d18", "greatest({a}.i, {b}.j)", "{a}.d28 - {b}.d28"]
NO_AVG = tuple(f for f in ALL_AGGS if f != "avg")
SUMS = ("sum", "sum DISTINCT")
# Columns near the limits: safe under counts, min and max; their sums overflow (kind ``overflow``).
BOUNDED_ONE = ["{s}.l", "{s}.d38", "{s}.d28 * 1000000000", "{s}.l DIV 2"]
# Per kind: arguments over one side and over two, as (template, functions, functions that may fail).
FAILING = {
    "overflow": ([("{s}.l", ALL_AGGS, SUMS), ("{s}.d38", NO_AVG, SUMS), ("{s}.d28 * 1000000000", NO_AVG, SUMS),
                  ("{s}.l DIV 2", ALL_AGGS, SUMS), ("{s}.e + 1", ALL_AGGS, ALL_AGGS), ("{s}.e * 2", ALL_AGGS, ALL_AGGS),
                  ("{s}.l * 2", ALL_AGGS, ALL_AGGS)],
                 [("{a}.l + {b}.l", ALL_AGGS, ALL_AGGS), ("{a}.e + {b}.e", ALL_AGGS, ALL_AGGS),
                  ("{a}.l * {b}.g", ALL_AGGS, ALL_AGGS)]),
    "range": ([("{s}.d38 * 2", ORDER, ORDER), ("{s}.d38 + 1", ORDER, ORDER)], [("{a}.d38 + {b}.d38", ORDER, ORDER)]),
    "div0": ([("10 DIV {s}.e", ALL_AGGS, ALL_AGGS), ("{s}.i / {s}.e", ALL_AGGS, ALL_AGGS),
              ("{s}.d18 / {s}.e", ALL_AGGS, ALL_AGGS)],
             [("10 DIV ({a}.e - {b}.e)", ALL_AGGS, ALL_AGGS), ("{a}.i / {b}.e", ALL_AGGS, ALL_AGGS)]),
}
FAILING_PRED = {
    "overflow": ["{s}.e + 1 > 0", "{s}.l * 2 >= 0"],
    "range": ["{s}.d38 * 2 > 0"],
    "div0": ["10 DIV {s}.e > 0", "{s}.i / {s}.e < 2"],
}
GROUPS = ["{s}.g", "{s}.g", "{s}.k", "{s}.j", "{s}.i", "{s}.x", "{s}.d18", "{s}.l", "{s}.d38"]


class _Numeric:
    """The numeric domain of aggregates over joins: the sides are tables of
    :data:`~.tables.AGG_TABLES` (INT keys, BIGINT, DECIMAL(38,2), DECIMAL(18,2), DECIMAL(28,0),
    DOUBLE), read by name; its queries are drawn by :func:`numeric_query` only."""

    name = "agg"
    fact_tables = ("ra0", "ra0", "ra0", "ra1", "ra2", "rae", "ra1r")
    dim_tables = ("ra1", "ra1", "ra2", "ra0", "ra1r", "rae")
    fail_kinds = ("overflow", "overflow", "range", "div0")

    def top(self, sql, n):
        return sql


NUMERIC = _Numeric()


@dataclass
class _Side:
    """One input of the join: its FROM item (with its alias), its alias, and for a relation the
    generator drew its width (its columns ``c0…``); ``width`` is None for a numeric table."""

    frm: str
    alias: str
    width: int | None = None
    cols: list = field(default_factory=list)


def _num_pred_one(draw, s, cx):
    """A predicate over one numeric side, failing (of the query's kind) once in eight."""
    if cx.fail and draw(st.integers(0, 7)) == 0:
        cx.failing += 1
        return draw(st.sampled_from(FAILING_PRED[cx.fail])).format(s=s)
    return draw(st.sampled_from([
        "{s}.g > 0", "{s}.i IS NULL", "{s}.i IS NOT NULL", "{s}.x > 0.2", "{s}.d18 > 2", "coalesce({s}.i, 0) <= 3",
        "{s}.k IN (1, 2)", "NOT ({s}.j = 0)", "{s}.l < 100", "{s}.k IS NULL",
    ])).format(s=s)


def _num_pred(draw, aliases, cx):
    """A predicate over the numeric sides ``aliases``: over one, over two, or a disjunction."""
    kind = draw(st.integers(0, 5))
    if kind <= 2 or len(aliases) < 2:
        return _num_pred_one(draw, draw(st.sampled_from(aliases)), cx)
    a, b = draw(st.permutations(aliases))[:2]
    if kind == 3:
        return draw(st.sampled_from(["{a}.i > {b}.i", "{a}.g = {b}.g", "{a}.j <=> {b}.j"])).format(a=a, b=b)
    return f"({_num_pred_one(draw, a, cx)} OR {_num_pred_one(draw, b, cx)})"


def _num_side(draw, cx, fact: bool) -> _Side:
    """A numeric table under a fresh alias: mostly by name, sometimes filtered or doubled by a
    ``UNION ALL`` (every row twice: duplicates)."""
    alias = cx("f" if fact else "d")
    table = draw(st.sampled_from(NUMERIC.fact_tables if fact else NUMERIC.dim_tables))
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return _Side(f"(SELECT * FROM {table} {alias} WHERE {_num_pred_one(draw, alias, cx)}) {alias}", alias)
    if kind == 1:
        other = draw(st.sampled_from(NUMERIC.dim_tables))
        return _Side(f"(SELECT * FROM {table} UNION ALL SELECT * FROM {other}) {alias}", alias)
    return _Side(f"{table} {alias}", alias)


def _num_key(draw, x: str, y: str, neighbour: bool) -> str:
    """An equi-join condition between numeric sides ``x`` and ``y``; near misses when ``neighbour``."""
    keys = ["{x}.k = {y}.k"] * 4 + ["{x}.j = {y}.k", "{x}.k = {y}.j", "{x}.k = {y}.k AND {x}.g = {y}.g", "{x}.k + 0 = {y}.k"]
    if neighbour:
        keys += ["{x}.k <=> {y}.k", "{x}.x = {y}.x", "{x}.k = {y}.k AND {x}.i > {y}.i", "{x}.d18 = {y}.d18"]
    return draw(st.sampled_from(keys)).format(x=x, y=y)


def _num_args(draw, sides, cx) -> list:
    """Candidate aggregate arguments over numeric ``sides`` (aliases): safe ones over one side and
    over two, the bounded columns under counts, min and max, and the failing ones of the query's kind."""
    out = []
    for _ in range(3):
        s = draw(st.sampled_from(sides))
        out.append(_Arg(draw(st.sampled_from(SAFE_ONE)).format(s=s)))
        out.append(_Arg(draw(st.sampled_from(BOUNDED_ONE)).format(s=s), ORDER))
    if len(sides) > 1:
        a, b = draw(st.permutations(sides))[:2]
        out.append(_Arg(draw(st.sampled_from(SAFE_BOTH)).format(a=a, b=b)))
    if cx.fail:
        one, both = FAILING[cx.fail]
        s = draw(st.sampled_from(sides))
        t, funcs, fails = draw(st.sampled_from(one))
        out += [_Arg(t.format(s=s), funcs, fails)] * 2
        if len(sides) > 1:
            a, b = draw(st.permutations(sides))[:2]
            t, funcs, fails = draw(st.sampled_from(both))
            out.append(_Arg(t.format(a=a, b=b), funcs, fails))
    return out


def _num_funcs(e: str, args) -> _Arg:
    """A numeric expression as an argument: as drawn among ``args``, or a grouping column (the
    bounded ``l`` and ``d38`` only under counts, min and max)."""
    for a in args:
        if a.sql == e:
            return a
    return _Arg(e, ORDER) if re.search(r"\.(l|d38)$", e) else _Arg(e)


# ---------------------------------------------------------------------------------------------
# Any other domain: sides are relations the generator draws


def _rel_side(draw, depth, cx) -> _Side:
    m = _width(draw)
    alias = cx("j")
    return _Side(f"({_rel(draw, max(depth, 0), m, cx)}) {alias}", alias, m, [f"{alias}.{c}" for c in _cols(m)])


def _dom_funcs(cx) -> tuple:
    """The aggregate functions of the query's domain (without ``avg``: see the module doc)."""
    if cx.dom is INT:
        return ORDER if cx.fail == "decimal" else NO_AVG
    return ("count", "count(*)", "min", "max", "count DISTINCT") + (
        ("sum",) if "sum({c})" in cx.dom.aggs(cx) else ())


def _dom_wrap(cx, func: str, call: str) -> str:
    """A count as the domain's type (a collated string, an interval); anything else as it is."""
    return cx.dom.from_count(call) if func in COUNTS else call


def _dom_both(draw, a: str, b: str, cx) -> str:
    """An argument over two columns of two sides, of the domain's type."""
    forms = ["coalesce({a}, {b})", "CASE WHEN {a} > {b} THEN {a} ELSE {b} END"]
    if cx.dom is INT:
        forms += ["{a} + {b}", "{a} - {b}"]
    return draw(st.sampled_from(forms)).format(a=a, b=b)


def _dom_args(draw, sides, cx) -> list:
    cols = [c for s in sides for c in s.cols]
    out = [_Arg(draw(st.sampled_from(cols))) for _ in range(3)]
    s = draw(st.sampled_from(sides))
    out.append(_Arg(_expr(draw, s.cols, cx)))
    if len(sides) > 1:
        x, y = draw(st.permutations(sides))[:2]
        out.append(_Arg(_dom_both(draw, draw(st.sampled_from(x.cols)), draw(st.sampled_from(y.cols)), cx)))
    return out


# ---------------------------------------------------------------------------------------------
# The shapes


def _sides(draw, depth, cx, count) -> list:
    if cx.dom is NUMERIC:
        return [_num_side(draw, cx, fact=i == 0) for i in range(count)]
    return [_rel_side(draw, depth - count + 1, cx) for _ in range(count)]


def _on(draw, x: _Side, y: _Side, cx, neighbour=False) -> str:
    if cx.dom is NUMERIC:
        return _num_key(draw, x.alias, y.alias, neighbour)
    op = "<=>" if neighbour and draw(st.integers(0, 3)) == 0 else "="
    on = f"{draw(st.sampled_from(x.cols))} {op} {draw(st.sampled_from(y.cols))}"
    if neighbour and draw(st.integers(0, 3)) == 0:
        on += f" AND {draw(st.sampled_from(x.cols))} > {draw(st.sampled_from(y.cols))}"
    return on


def _from(draw, sides, cx, join_types, star: bool, near_keys=False) -> tuple[str, list]:
    """The FROM clause joining ``sides`` left to right, and the sides whose columns stay visible.
    Each next side joins the first (a star around a fact table) or, if not ``star``, one before
    it (a chain). Outer, semi and anti joins, and inner ones if ``near_keys``, may have null-safe,
    double or extra conditions."""
    frm, visible = sides[0].frm, [sides[0]]
    for i, side in enumerate(sides[1:], 1):
        jt = join_types[i - 1]
        partner = sides[0] if star or len(visible) == 1 else draw(st.sampled_from(visible))
        frm += f" {jt} {side.frm} ON {_on(draw, partner, side, cx, neighbour=near_keys or jt != 'JOIN')}"
        if "SEMI" not in jt and "ANTI" not in jt:
            visible.append(side)
    return frm, visible


def _where(draw, visible, cx, one_in=3) -> str:
    if draw(st.integers(1, one_in)) != 1:
        return ""
    if cx.dom is NUMERIC:
        return f" WHERE {_num_pred(draw, [s.alias for s in visible], cx)}"
    return f" WHERE {_pred(draw, [c for s in visible for c in s.cols], cx, 0)}"


def _filter(draw, visible, cx) -> str:
    """Sometimes a ``FILTER (WHERE …)`` clause for an aggregate."""
    if draw(st.integers(0, 7)):
        return ""
    if cx.dom is NUMERIC:
        return f" FILTER (WHERE {_num_pred(draw, [s.alias for s in visible], cx)})"
    return f" FILTER (WHERE {_pred(draw, [c for s in visible for c in s.cols], cx, 0)})"


def _groups(draw, visible, cx) -> list:
    if cx.dom is NUMERIC:
        return [draw(st.sampled_from(GROUPS)).format(s=draw(st.sampled_from(visible)).alias) for _ in range(3)]
    return [c for s in visible for c in s.cols]


# How often each function is drawn: mostly those eager aggregation splits (a FILTER makes it
# decline for the whole aggregate: a near miss, but not most of the time).
WEIGHTS = {"sum": 4, "count": 2, "count(*)": 2, "min": 2, "max": 2, "avg": 2, "count DISTINCT": 2, "sum DISTINCT": 1}


def _func(draw, funcs) -> str:
    """One of ``funcs``, drawn by :data:`WEIGHTS`."""
    return draw(st.sampled_from([f for f in funcs for _ in range(WEIGHTS[f])]))


def _aggregates(draw, count, args, visible, cx) -> list:
    """``count`` aggregate calls over ``args`` (each given a function it allows)."""
    allowed = ALL_AGGS if cx.dom is NUMERIC else _dom_funcs(cx)
    out = []
    for _ in range(count):
        arg = draw(st.sampled_from(args))
        funcs = [f for f in arg.funcs if f in allowed] or ["count(*)"]
        func = _func(draw, funcs)
        if func in arg.fails:
            cx.failing += 1
        call = _call(func, arg.sql, _filter(draw, visible, cx))
        out.append(call if cx.dom is NUMERIC else _dom_wrap(cx, func, call))
    return out


def _args(draw, visible, cx) -> list:
    if cx.dom is NUMERIC:
        return _num_args(draw, [s.alias for s in visible], cx)
    return _dom_args(draw, visible, cx)


def _grouped(draw, n, frm, visible, cx, grouping="plain", where="") -> str:
    """``SELECT keys…, aggs… FROM frm [WHERE] GROUP BY …``: ``n`` columns, between none and all but
    one of them grouping keys (none: a global aggregate). ``grouping``: ``plain``, or ``sets``
    for ``ROLLUP`` / ``CUBE`` / ``GROUPING SETS`` (at least one key: ``n`` is 2 or more)."""
    n_keys = draw(st.integers(0 if grouping == "plain" else 1, n - 1))
    keys = [draw(st.sampled_from(_groups(draw, visible, cx))) for _ in range(n_keys)]
    aggs = _aggregates(draw, n - n_keys, _args(draw, visible, cx), visible, cx)
    sql = f"SELECT {_select(keys + aggs)} FROM {frm}{where}"
    if keys:
        sql += " GROUP BY " + _group_by(draw, keys, grouping)
    if draw(st.integers(0, 5)) == 0:
        sql += f" HAVING count(*) > {draw(st.integers(0, 2))}"
    return sql


def _group_by(draw, keys, grouping) -> str:
    if grouping == "plain":
        return ", ".join(keys)
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return f"ROLLUP({', '.join(keys)})"
    if kind == 1:
        return f"CUBE({', '.join(keys)})"
    return f"GROUPING SETS (({', '.join(keys)}), ({keys[0]}), ())"


@shape("agg_join")
def _agg_join(draw, depth, n, cx):
    """Two inner-joined inputs, grouped by columns of either or both (or not at all)."""
    cx.tags.add("aggjoin: inner")
    sides = _sides(draw, depth, cx, 2)
    frm, visible = _from(draw, sides, cx, ["JOIN"], star=True)
    return _grouped(draw, n, frm, visible, cx, where=_where(draw, visible, cx))


@shape("agg_star")
def _agg_star(draw, depth, n, cx):
    """Three inner-joined inputs: a fact table joined to two dimensions (a star) or a chain."""
    cx.tags.add("aggjoin: star")
    sides = _sides(draw, depth, cx, 3)
    frm, visible = _from(draw, sides, cx, ["JOIN", "JOIN"], star=draw(st.booleans()))
    return _grouped(draw, n, frm, visible, cx, where=_where(draw, visible, cx))


@shape("agg_projected")
def _agg_projected(draw, depth, n, cx):
    """A projection (and a filter) between the join and the aggregate: the aggregate reads
    columns computed over one side or both."""
    cx.tags.add("aggjoin: projected")
    sides = _sides(draw, depth, cx, draw(st.sampled_from([2, 2, 3])))
    frm, visible = _from(draw, sides, cx, ["JOIN", "JOIN"], star=True)
    q = cx()
    if cx.dom is NUMERIC and draw(st.booleans()):
        return _projected_columns(draw, n, frm, visible, q, cx)
    m = draw(st.integers(2, 4))
    inner_args = _args(draw, visible, cx)
    inner_groups = _groups(draw, visible, cx)
    mid = [draw(st.sampled_from(inner_groups)) if i == 0 or draw(st.booleans()) else draw(st.sampled_from(inner_args)).sql
           for i in range(m)]
    inner = f"SELECT {_select(mid)} FROM {frm}{_where(draw, visible, cx)}"
    # What the outer aggregates may do with each column: what they could do with its expression.
    args = {f"{q}.c{i}": _num_funcs(e, inner_args) if cx.dom is NUMERIC else _Arg(e) for i, e in enumerate(mid)}
    side = _Side(f"({inner}) {q}", q, m, list(args))
    where = f" WHERE {_pred(draw, side.cols, cx, 0)}" if cx.dom is not NUMERIC and draw(st.integers(0, 2)) == 0 else ""
    return _projected_select(draw, n, side, args, cx, where)


NUMERIC_COLUMNS = ("k", "j", "g", "i", "e", "l", "d38", "d18", "d28", "x")


def _projected_columns(draw, n, frm, visible, q, cx) -> str:
    """The projection lists columns of the joined tables under their own names (``SELECT f1.g,
    d2.i …``): Spark keeps it as a projection of attributes between the aggregate and the join, which
    eager aggregation looks through (it does not look through renaming ones, ``f1.g AS c0``)."""
    names = draw(st.lists(st.sampled_from(NUMERIC_COLUMNS), min_size=2, max_size=4, unique=True))
    mid = [f"{draw(st.sampled_from(visible)).alias}.{c}" for c in names]
    inner = f"SELECT {', '.join(mid)} FROM {frm}{_where(draw, visible, cx)}"
    args = {f"{q}.{c}": _Arg(f"{q}.{c}", ORDER) if c in ("l", "d38") else _Arg(f"{q}.{c}") for c in names}
    return _projected_select(draw, n, _Side(f"({inner}) {q}", q, len(names), list(args)), args, cx, "")


def _projected_select(draw, n, side: _Side, args: dict, cx, where: str) -> str:
    """The aggregate over the projection ``side``: grouped by some of its columns, aggregating others."""
    n_keys = draw(st.integers(0, n - 1))
    keys = [draw(st.sampled_from(side.cols)) for _ in range(n_keys)]
    allowed = ALL_AGGS if cx.dom is NUMERIC else _dom_funcs(cx)
    aggs = []
    for _ in range(n - n_keys):
        c = draw(st.sampled_from(side.cols))
        options = [f for f in args[c].funcs if f in allowed] or ["count(*)"]
        func = _func(draw, options)
        if func in args[c].fails:
            cx.failing += 1
        flt = f" FILTER (WHERE {c} IS NOT NULL)" if draw(st.integers(0, 7)) == 0 else ""
        call = _call(func, c, flt)
        aggs.append(call if cx.dom is NUMERIC else _dom_wrap(cx, func, call))
    sql = f"SELECT {_select(keys + aggs)} FROM {side.frm}{where}"
    return sql + (" GROUP BY " + ", ".join(keys) if keys else "")


NEAR_JOINS = ["LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]


@shape("agg_near")
def _agg_near(draw, depth, n, cx):
    """Near misses: an outer, semi or anti join; ``ROLLUP`` / ``CUBE`` / ``GROUPING SETS``; a
    ``rand(1)`` between join and aggregate; null-safe, double or extra join conditions."""
    cx.tags.add("aggjoin: near miss")
    kind = draw(st.integers(0, 3))
    count = draw(st.sampled_from([2, 2, 3]))
    sides = _sides(draw, depth, cx, count)
    if kind == 0:  # an outer, semi or anti join among inner ones
        jts = ["JOIN"] * (count - 1)
        jts[draw(st.integers(0, count - 2))] = draw(st.sampled_from(NEAR_JOINS))
        frm, visible = _from(draw, sides, cx, jts, star=True)
        return _grouped(draw, n, frm, visible, cx, where=_where(draw, visible, cx))
    frm, visible = _from(draw, sides, cx, ["JOIN"] * (count - 1), star=True, near_keys=kind == 3)
    if kind == 1:
        return _grouped(draw, max(n, 2), frm, visible, cx, grouping="sets", where=_where(draw, visible, cx)) \
            if cx.dom is NUMERIC else _grouped(draw, n, frm, visible, cx, grouping="sets" if n > 1 else "plain")
    if kind == 2 and not cx.plain:  # non-deterministic, and always true (Spark refuses rand in an aggregate's argument)
        return _grouped(draw, n, frm, visible, cx, where=" WHERE rand(1) < 2")
    return _grouped(draw, n, frm, visible, cx, where=_where(draw, visible, cx, one_in=2))


AGG_SHAPES = ["agg_join", "agg_join", "agg_star", "agg_projected", "agg_near"]


@shape("aggjoin")
def _aggjoin(draw, depth, n, cx):
    """One of the aggregate-over-join shapes (the kind other shapes draw: see ``KINDS``)."""
    cx.tags.add("aggjoin")
    return SHAPE_FUNCS[draw(st.sampled_from(AGG_SHAPES))](draw, depth, n, cx)


def numeric_query(draw, cx) -> str:
    """A query of the numeric domain: an aggregate over joins of the AGG_TABLES, with one to four
    output columns."""
    return _aggjoin(draw, 1, draw(st.integers(1, 4)), cx)
