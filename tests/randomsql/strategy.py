"""What a query is (:class:`Case`, :func:`families`) and the hypothesis strategies that draw them:
:func:`cases` (every domain and family) and :func:`queries` (plain integer queries)."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from hypothesis import strategies as st

from .aggjoins import NUMERIC, numeric_query
from .aggregates import _aggregate_over
from .context import _Ctx, _width
from .integers import INT
from .intervals import _Interval
from .relations import _failing_over, _rel
from .strings import _Str
from .tables import COLLATIONS


@dataclass(frozen=True)
class Case:
    """One generated query: its SQL, the ANSI mode it runs in, and its families (see :func:`families`)."""

    sql: str
    ansi: bool | None
    families: frozenset
    domain: str = "int"
    fail_kind: str | None = None
    broadcast: bool = True  # False: run with spark.sql.autoBroadcastJoinThreshold=-1

    def __repr__(self):
        return (f"Case(ansi={self.ansi}, broadcast={self.broadcast}, domain={self.domain}, "
                f"fail_kind={self.fail_kind}, families={sorted(self.families)}, sql={self.sql!r})")


_UNSEEDED = re.compile(r"TABLESAMPLE \(\s*(\d+(?:\.\d+)?)\s+PERCENT\s*\)(?!\s*REPEATABLE)", re.IGNORECASE)


def unseeded_sample(sql: str) -> bool:
    """Whether ``sql`` samples a fraction strictly between 0 and 100 percent without a seed: its
    rows are random even in vanilla Spark."""
    return any(0 < float(p) < 100 for p in _UNSEEDED.findall(sql))


FAMILIES = ("fail", "collation", "sample", "unseeded", "interval", "decimal38", "aggjoin")


# Shapes the generator tags as it draws them: a failing expression in a relation cancelled against
# itself, or in a UNION ALL-of-joins branch (its B side, condition or projection); a set operation
# of a relation with itself over collated strings; interval arithmetic in a branch projection; the
# aggregates over joins of :mod:`.aggjoins` (family ``aggjoin``), and those of them in the numeric
# domain (the tables near the limits of their types).
SHAPES = ("fail in X-X", "fail in branch", "collated X-X", "interval in branch", "aggjoin: inner", "aggjoin: star",
          "aggjoin: projected", "aggjoin: near miss", "aggjoin: numeric")


def families(sql: str, tags=()) -> frozenset:
    """The families of a query: ``tags`` the generator set (``fail``: a failing expression; the
    :data:`SHAPES`) and what the text shows (collated strings, samples, unseeded samples,
    intervals, DECIMAL(38))."""
    found = set(tags)
    if re.search(r"\bCOLLATE\b|\brs(0|1|e|1r)\b", sql):
        found.add("collation")
    if "TABLESAMPLE" in sql:
        found.add("sample")
    if unseeded_sample(sql):
        found.add("unseeded")
    if re.search(r"\bINTERVAL\b|make_dt_interval|make_ym_interval|\bri(0|1|e)\b", sql):
        found.add("interval")
    if "DECIMAL(38" in sql:
        found.add("decimal38")
    return frozenset(found)


DOMAINS = [INT] * 10 + [_Str(c) for c in COLLATIONS for _ in range(2)] + [_Interval("dt")] * 2 + [_Interval("ym")] * 2
DOMAINS += [NUMERIC] * 4  # aggregates over joins of tables near the limits of their types


def _query(draw, cx, max_depth) -> str:
    if cx.dom is NUMERIC:
        cx.tags.add("aggjoin: numeric")
        return numeric_query(draw, cx)
    n = _width(draw)
    depth = draw(st.integers(1, max_depth))
    body = _rel(draw, depth, n, cx)
    if cx.fail and not cx.failing:  # the kind was drawn, but no failing expression yet
        body = _failing_over(draw, body, n, cx)
    if draw(st.integers(0, 4)) == 0:  # sometimes an aggregate on top of everything
        m = _width(draw)
        return cx.dom.top(_aggregate_over(draw, body, n, m, cx), m)
    return cx.dom.top(body, n)


def cases(max_depth: int = 3, max_length: int | None = 2000):
    """A hypothesis strategy of :class:`Case`: random SQL over the tables of :func:`create_tables`,
    with the ANSI mode to run it in and its families. Queries longer than ``max_length``
    characters are left out: the few that are take seconds to run (dozens of shuffles) and a third
    of a batch's time, and shrink to short ones anyway when they find something."""
    strategy = _cases(max_depth)
    return strategy if max_length is None else strategy.filter(lambda case: len(case.sql) <= max_length)


@st.composite
def _cases(draw, max_depth: int) -> Case:
    # The query's setting, drawn near-uniformly: hypothesis' first draws lean to 0 and to their bounds.
    rng = random.Random(repr([draw(st.integers(0, 2**32 - 1)) for _ in range(3)]))
    dom = rng.choice(DOMAINS)
    ansi = rng.random() < 0.5
    unseeded = rng.random() < 1 / 10
    fail = None if unseeded or rng.random() >= 0.45 else rng.choice(dom.fail_kinds)
    # The tables are tiny: with broadcast joins on, the factorization declines every shared input
    # (broadcast in every branch anyway, nothing to save). Mostly off, so that it fires; and off
    # where an expression may fail: a hash join with an empty build side does not read its other
    # side, so whether an error is raised would depend on the physical plan.
    broadcast = fail is None and rng.random() < 1 / 3
    cx = _Ctx(dom, fail, unseeded)
    sql = _query(draw, cx, max_depth)
    return Case(sql, ansi, families(sql, cx.tags_now), dom.name, fail, broadcast)


@st.composite
def queries(draw, max_depth: int = 3) -> str:
    """A hypothesis strategy of plain random SQL texts over the integer :data:`TABLES` views: no
    failing expression, no sample, nothing that depends on the ANSI mode."""
    return _query(draw, _Ctx(plain=True), max_depth)
