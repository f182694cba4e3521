"""The collated-string domains (``UTF8_LCASE``, ``UNICODE_CI``, ``UTF8_BINARY_RTRIM``): columns of the
``rs*`` tables, values that differ only by case or trailing spaces, and their failing expressions."""
from __future__ import annotations

from hypothesis import strategies as st

from .tables import COLLATIONS, COLUMNS


class _Str:
    """Strings of one collation: values that differ only by case or trailing spaces."""

    tables = ("rs0", "rs1", "rse", "rs1r")
    fail_kinds = ("raise", "cast")
    literals = ["'a'", "'A'", "'a  '", "'x'", "'X '", "'b'"]

    def __init__(self, collation):
        self.name = self.collation = collation
        self.prefix = COLLATIONS[collation]
        self.null = f"CAST(NULL AS STRING) COLLATE {collation}"

    def columns(self):
        return [f"{self.prefix}_{c}" for c in COLUMNS]

    def cmp_lit(self, draw):
        return draw(st.sampled_from(self.literals))

    def lit(self, draw):  # a column of its own must carry the collation, or set operations fail
        return f"{self.cmp_lit(draw)} COLLATE {self.collation}"

    def units(self):
        c = self.collation
        return [
            (f"SELECT 'a' COLLATE {c} AS c0, 'X ' COLLATE {c} AS c1", 2),
            (f"SELECT 'A' COLLATE {c} AS c0", 1),
            (f"SELECT CAST(NULL AS STRING) COLLATE {c} AS c0, 'x' COLLATE {c} AS c1", 2),
            (f"SELECT max({self.prefix}_k) AS c0, min({self.prefix}_a) AS c1 FROM rs1", 2),
        ]

    def from_count(self, e):
        return f"CAST({e} AS STRING) COLLATE {self.collation}"

    def expr(self, draw, cols, cx):
        c = draw(st.sampled_from(cols))
        if cx.fail and draw(st.integers(0, 4)) == 0:
            return self.failing(draw, cols, cx)
        return draw(st.sampled_from([
            c, c, f"upper({c})", f"lower({c})", f"rtrim({c})", f"coalesce({c}, {self.cmp_lit(draw)})",
            f"CASE WHEN {c} = {self.cmp_lit(draw)} THEN {c} ELSE {self.lit(draw)} END", self.lit(draw), self.null,
        ]))

    def interesting(self, draw, cols, cx):
        return self.expr(draw, cols, cx)

    def value_term(self, draw, c):
        return draw(st.sampled_from([c, f"upper({c})", f"coalesce({c}, 'a')"]))

    def failing(self, draw, cols, cx):
        cx.failing += 1
        c = draw(st.sampled_from(cols))
        if cx.fail == "raise":
            return f"CASE WHEN {c} = 'x' THEN raise_error('boom') ELSE {c} END"
        return f"CASE WHEN {c} = 'b' THEN CAST(CAST({c} AS INT) AS STRING) COLLATE {self.collation} ELSE {c} END"

    def aggs(self, cx):
        return ["min({c})", "max({c})", self.from_count("count({c})"), self.from_count("count(*)"),
                self.from_count("count(DISTINCT {c})")]

    def windows(self, cx):
        return [
            "max({o}) OVER (PARTITION BY {p})",
            self.from_count("count(*) OVER (PARTITION BY {p})"),
            self.from_count("rank() OVER (PARTITION BY {p} ORDER BY {o})"),
            "min({o}) OVER (PARTITION BY {p} ORDER BY {o})",
        ]

    def top(self, sql, n):
        return sql
