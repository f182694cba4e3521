"""The integer domain: integral columns of the ``rt*`` tables and expressions of them (BIGINT, DOUBLE,
``DECIMAL(38, 0)`` near its precision, value terms, interval arithmetic inside), with the failing
expressions of every kind (``10 DIV (c - 3)``, overflow, casts, ``raise_error``, interval and
DECIMAL(38) overflow), aggregates and window functions.

A domain is the type of every column of the relations of one query, with its tables, literals,
expressions (safe and failing), aggregates and window functions; the other domains are in
:mod:`.strings` and :mod:`.intervals`."""
from __future__ import annotations

from hypothesis import strategies as st

from .tables import COLUMNS


BIG = "CAST(123456789012345678901234567890123456 AS DECIMAL(38,0))"  # 36 digits


class _Int:
    name = "int"
    tables = ("rt0", "rt1", "rt2", "rte", "rt1r")
    fail_kinds = ("div0", "overflow", "cast", "narrow", "raise", "iv_add", "iv_mul", "decimal")
    null = "CAST(NULL AS INT)"

    def columns(self):
        return list(COLUMNS)

    def lit(self, draw):
        return str(draw(st.integers(0, 6)))

    cmp_lit = lit

    def units(self):
        return [
            ("SELECT 1 AS c0, 2 AS c1", 2),
            ("SELECT 3 AS c0", 1),
            ("SELECT CAST(NULL AS INT) AS c0, 0 AS c1", 2),
            ("SELECT count(*) AS c0, max(k) AS c1 FROM rt1", 2),  # one row, but not literals
        ]

    def from_count(self, e):
        return e

    def expr(self, draw, cols, cx):
        c = draw(st.sampled_from(cols))
        plain = [
            c,
            f"{c} + {self.lit(draw)}",
            f"coalesce({c}, {self.lit(draw)})",
            f"CASE WHEN {c} > {self.lit(draw)} THEN {c} ELSE {self.lit(draw)} END",
            f"{c} * 2",
            self.lit(draw),
            self.null,
        ]
        if cx.plain:
            return draw(st.sampled_from(plain))
        kind = draw(st.integers(0, 9))
        if kind < 2 and cx.fail:
            return self.failing(draw, cols, cx)
        if kind == 2 and cx.fail in (None, "decimal"):
            return draw(st.sampled_from(self.decimals(c)))
        if kind == 3 and cx.fail in (None, "iv_add", "iv_mul", "raise"):
            return draw(st.sampled_from(self.intervals(c)))
        if kind < 5:
            return draw(st.sampled_from([f"{c} - {c}", f"{c} * 0", f"-(-({c}))"]))
        return draw(st.sampled_from(plain))

    def decimals(self, c):
        return [f"CAST({c} AS DECIMAL(38,0)) * {BIG}", f"-(-(CAST({c} AS DECIMAL(38,0)) * {BIG}))",
                f"CAST({c} AS DECIMAL(38,0)) * {BIG} - CAST({c} AS DECIMAL(38,0)) * {BIG}"]

    def intervals(self, c):
        # Interval arithmetic that cannot overflow here, but that no rule may treat as safe.
        return [
            f"EXTRACT(DAY FROM CASE WHEN {c} < 3 THEN INTERVAL '1' DAY ELSE INTERVAL '2' DAY END - INTERVAL '1' DAY)",
            f"EXTRACT(MONTH FROM CASE WHEN {c} > 2 THEN INTERVAL '1' MONTH ELSE INTERVAL '5' MONTH END * 2)",
        ]

    def interesting(self, draw, cols, cx):
        """A computed column for value terms to fold over: failing, DECIMAL(38) or interval."""
        c = draw(st.sampled_from(cols))
        kind = draw(st.integers(0, 3))
        if kind == 0 and cx.fail:
            return self.failing(draw, cols, cx)
        if kind <= 1 and cx.fail in (None, "decimal"):
            return draw(st.sampled_from(self.decimals(c)))
        if kind == 2 and cx.fail in (None, "iv_add", "iv_mul", "raise"):
            return draw(st.sampled_from(self.intervals(c)))
        return self.expr(draw, cols, cx)

    def value_term(self, draw, c):
        return draw(st.sampled_from([f"{c} - {c}", f"{c} * 0", f"0 * {c}", f"-(-({c}))", c, f"{c} + 1"]))

    def failing(self, draw, cols, cx):
        """An expression of ``cx.fail``'s kind that raises on some of the tables' values (most only
        with ANSI on)."""
        cx.failing += 1
        c = draw(st.sampled_from(cols))
        return draw(st.sampled_from({
            "div0": [f"10 DIV ({c} - 3)", f"{c} / ({c} - 1)", f"CASE WHEN {c} > 2 THEN 100 DIV ({c} - 5) ELSE 0 END"],
            "overflow": [f"{c} * 9223372036854775807", f"{c} + 2147483647", f"{c} * 1000000000",
                         f"-(-({c} - 9223372036854775807 - 1))"],
            "cast": [f"CAST(CASE WHEN {c} = 5 THEN 'five' ELSE CAST({c} AS STRING) END AS INT)",
                     f"CAST(concat(CAST({c} AS STRING), CASE WHEN {c} > 3 THEN 'x' ELSE '' END) AS INT)"],
            "narrow": [f"CAST({c} * 100 AS TINYINT)", f"CAST({c} * 20000 AS SMALLINT)"],
            "raise": [f"CASE WHEN {c} = 4 THEN raise_error('boom') ELSE {c} END",
                      f"CASE WHEN {c} > 5 THEN CAST(assert_true({c} < 7) AS INT) ELSE {c} END"],
            "iv_add": [f"EXTRACT(DAY FROM CASE WHEN {c} < 3 THEN INTERVAL '1' DAY ELSE INTERVAL '100000000' DAY END + INTERVAL '10000000' DAY)",
                       f"EXTRACT(YEAR FROM CASE WHEN {c} < 3 THEN INTERVAL '1' YEAR ELSE INTERVAL '100000000' YEAR END + INTERVAL '100000000' YEAR)",
                       f"EXTRACT(DAY FROM CASE WHEN {c} > 4 THEN INTERVAL '-100000000' DAY ELSE INTERVAL '0' DAY END - INTERVAL '10000000' DAY)"],
            "iv_mul": [f"EXTRACT(DAY FROM INTERVAL '30000000' DAY * {c})", f"EXTRACT(YEAR FROM INTERVAL '100000000' YEAR * {c})"],
            "decimal": [f"CAST({c} AS DECIMAL(38,0)) * {BIG} * 1000", f"CAST({c} AS DECIMAL(38,2)) * {BIG}",
                        f"CAST({c} AS DECIMAL(38,0)) * {BIG} * ({c} * 100)"],
        }[cx.fail]))

    def aggs(self, cx):
        return ["count(*)", "count({c})", "sum({c})", "min({c})", "max({c})", "count(DISTINCT {c})", "sum(DISTINCT {c})"]

    def windows(self, cx):
        return [
            "sum({o}) OVER (PARTITION BY {p})",
            "count(*) OVER (PARTITION BY {p})",
            "rank() OVER (PARTITION BY {p} ORDER BY {o})",
            "max({o}) OVER (PARTITION BY {p} ORDER BY {o})",
        ]

    def top(self, sql, n):
        return sql


INT = _Int()
