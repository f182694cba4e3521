"""The interval domains, day-time (``dt``) and year-month (``ym``): columns of the ``ri*`` tables or
intervals computed from the integer tables, some near the maximum of their type, with ``+ - *``
(interval arithmetic overflows whatever the ANSI mode) and sums."""
from __future__ import annotations

from hypothesis import strategies as st

from .context import _select
from .integers import _Int
from .tables import COLUMNS


class _Interval:
    """Day-time (``dt``) or year-month (``ym``) intervals, some near the maximum of their type."""

    tables = ("ri0", "ri1", "rie")
    fail_kinds = ("iv_add", "iv_mul", "raise")

    def __init__(self, unit):
        self.name = unit
        self.dt = unit == "dt"
        if self.dt:
            self.small = ["INTERVAL '1' DAY", "INTERVAL '2' HOUR", "INTERVAL '0' DAY", "INTERVAL '-3' DAY"]
            self.big = "INTERVAL '100000000' DAY"
            self.bump = "INTERVAL '10000000' DAY"
            self.null = "CAST(NULL AS INTERVAL DAY TO SECOND)"
            self.made = ["make_dt_interval({c})", "make_dt_interval(0, {c})"]
        else:
            self.small = ["INTERVAL '1' MONTH", "INTERVAL '2' YEAR", "INTERVAL '0' MONTH", "INTERVAL '-3' MONTH"]
            self.big = "INTERVAL '170000000' YEAR"
            self.bump = "INTERVAL '10000000' YEAR"
            self.null = "CAST(NULL AS INTERVAL YEAR TO MONTH)"
            self.made = ["make_ym_interval(0, {c})", "make_ym_interval({c})"]

    def columns(self):
        return list(COLUMNS) if self.dt else [f"y_{c}" for c in COLUMNS]

    def computed_base(self, draw, n):
        """Intervals computed from an integer table: ``CASE WHEN k < 3 THEN 1 day ELSE 10^8 days END`` …"""
        table = draw(st.sampled_from(_Int.tables))
        one = self.small[0]
        exprs = []
        for _ in range(n):
            c = draw(st.sampled_from(COLUMNS))
            exprs.append(draw(st.sampled_from(
                [f"CASE WHEN {c} < 3 THEN {one} ELSE {self.big} END"] + [m.format(c=c) for m in self.made]
            )))
        return table, exprs

    def lit(self, draw):
        return draw(st.sampled_from(self.small + [self.big]))

    cmp_lit = lit

    def units(self):
        a, b = self.small[0], self.small[1]
        return [
            (f"SELECT {a} AS c0, {b} AS c1", 2),
            (f"SELECT {self.big} AS c0", 1),
            (f"SELECT {self.null} AS c0, {a} AS c1", 2),
            (f"SELECT max({self.columns()[0]}) AS c0, min({self.columns()[1]}) AS c1 FROM ri1", 2),
        ]

    def from_count(self, e):
        return f"make_dt_interval(CAST({e} AS INT))" if self.dt else f"make_ym_interval(0, CAST({e} AS INT))"

    def expr(self, draw, cols, cx):
        c = draw(st.sampled_from(cols))
        if cx.fail and draw(st.integers(0, 4)) == 0:
            return self.failing(draw, cols, cx)
        small = draw(st.sampled_from(self.small))
        return draw(st.sampled_from([
            c, c, f"-{c}", f"{c} + {small}", f"{c} - {small}", f"coalesce({c}, {small})",
            f"CASE WHEN {c} > {small} THEN {c} ELSE {self.lit(draw)} END", self.lit(draw), self.null,
            f"{c} / 2", f"{c} * 0", f"{c} - {c}",
        ]))

    def interesting(self, draw, cols, cx):
        return self.expr(draw, cols, cx)

    def value_term(self, draw, c):
        return draw(st.sampled_from([c, f"{c} - {c}", f"{c} * 0", f"-(-({c}))", f"{c} + {self.small[0]}"]))

    def failing(self, draw, cols, cx):
        cx.failing += 1
        c = draw(st.sampled_from(cols))
        return draw(st.sampled_from({
            "iv_add": [f"{c} + {c}", f"{c} + {self.bump}", f"{c} - (-{self.bump})"],
            "iv_mul": [f"{c} * 2", f"3 * {c}"],
            "raise": [f"CASE WHEN {c} > {self.small[0]} THEN raise_error('boom') ELSE {c} END"],
        }[cx.fail]))

    def aggs(self, cx):
        out = ["min({c})", "max({c})", self.from_count("count({c})"), self.from_count("count(*)")]
        # A sum of intervals overflows like `+` (INTERVAL_ARITHMETIC_OVERFLOW): not beside another kind.
        return out + ["sum({c})"] if cx.fail in (None, "iv_add") else out

    def windows(self, cx):
        out = [
            "max({o}) OVER (PARTITION BY {p})",
            self.from_count("count(*) OVER (PARTITION BY {p})"),
            self.from_count("rank() OVER (PARTITION BY {p} ORDER BY {o})"),
        ]
        return out + ["sum({o}) OVER (PARTITION BY {p})"] if cx.fail in (None, "iv_add") else out

    def top(self, sql, n):
        if self.dt:
            return sql
        # PySpark cannot collect year-month intervals: compare their text.
        return f"SELECT {_select([f'CAST(top.c{i} AS STRING)' for i in range(n)])} FROM ({sql}) top"
