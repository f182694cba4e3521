"""Random, valid Spark SQL over small random tables, for differential testing of the extension.

Three parts:

* :func:`create_tables` writes a few tiny Parquet tables and registers them as temporary views:

  - ``rt0``, ``rt1``, ``rt2``, ``rte``, ``rt1r`` (:data:`TABLES`): columns ``k INT, a INT, b INT``
    with NULLs, duplicates, a skewed key, an empty and a one-row table;
  - ``rs0``, ``rs1``, ``rse``, ``rs1r`` (:data:`STRING_TABLES`): collated strings that differ only
    by case or trailing spaces (``'a'``, ``'A'``, ``'a  '``, ``'x'``, ``'X '`` …). Every raw column
    ``k``, ``a``, ``b`` is stored three times, as ``l_k`` (``UTF8_LCASE``), ``u_k`` (``UNICODE_CI``)
    and ``r_k`` (``UTF8_BINARY_RTRIM``): the collation is part of the Parquet schema (it survives
    the round trip in Spark 4.3), so the plans read collated columns with no ``COLLATE`` in them;
  - ``ri0``, ``ri1``, ``rie`` (:data:`INTERVAL_TABLES`): day-time intervals ``k``, ``a``, ``b``
    (``INTERVAL '1' DAY``, ``INTERVAL '100000000' DAY`` — near the maximum, 106751991 days — two
    hours, …) and year-month intervals ``y_k``, ``y_a``, ``y_b`` (up to 170000000 years; the maximum
    is 178956970).

* :func:`cases` is a hypothesis strategy of :class:`Case`: a SQL text, the ANSI mode to run it in
  (``spark.sql.ansi.enabled``, drawn per query), whether broadcast joins stay on, and the families
  it belongs to (:func:`families`). Every relation it builds has the columns ``c0 … c{n-1}`` of one
  *domain*, drawn per query, so that any two relations of the same width can be combined by a set
  operation or joined:

  - ``int`` (half of the queries): integral columns of the ``rt*`` tables, and expressions of them
    that may turn into BIGINT, DOUBLE or ``DECIMAL(38, 0)`` (``CAST(c AS DECIMAL(38,0)) * 1234…456``,
    36 digits, also as a column of a base relation; ``-(-x)`` of it, which Spark rounds to 34
    digits; ``x - x``; sums), or use intervals inside (``EXTRACT(MONTH FROM CASE … END * 2)``);
  - ``UTF8_LCASE``, ``UNICODE_CI``, ``UTF8_BINARY_RTRIM``: collated strings of the ``rs*`` tables,
    as set-operation columns, join keys and grouping keys (rows are compared by their exact
    strings, so another representative, ``'A'`` for ``'a'``, is a difference);
  - ``dt`` / ``ym``: day-time / year-month intervals, from the ``ri*`` tables or computed from the
    integer tables (``CASE WHEN k < 3 THEN INTERVAL '1' DAY ELSE INTERVAL '100000000' DAY END``,
    ``make_dt_interval(k)``), with ``+ - *`` (interval arithmetic overflows whatever the ANSI mode)
    and sums. Year-month values are returned as strings (PySpark cannot collect them).

  The shapes favour what ring-law rules rewrite: ``UNION ALL`` of joins sharing an input (the same
  text in every branch, sometimes with the shared side on the right, another key or an outer join
  so that factorization must not fire, and branch columns computed over the other side: moved
  below the join, they would be evaluated on rows that never joined), ``EXCEPT ALL`` /
  ``INTERSECT ALL`` / ``EXCEPT`` / ``INTERSECT`` (also of a relation with itself, and
  ``(A UNION ALL B) EXCEPT ALL A``), joins with one-row relations (also semi and anti joins with
  them, with or without a condition), nested unions, aggregates over
  unions, outer, semi and anti joins, ``IN``/``EXISTS``/scalar subqueries, window aggregates, and
  value terms (``x - x``, ``x * 0``, ``-(-x)``) over columns computed below them. Queries longer
  than 2000 characters are left out (a few percent of the draws, but a third of the run time).

  About 40% of the queries may *fail*: one kind of failing expression per query, so that the
  error class does not depend on which row is evaluated first: ``10 DIV (c - 3)``, integer and
  long overflow (``c * 9223372036854775807``, ``-(-(c - 9223372036854775807 - 1))``), strings
  that do not parse as numbers, narrowing casts, ``raise_error``/``assert_true`` guarded by a CASE,
  interval ``+`` and ``*`` overflow, DECIMAL(38) overflow. They are placed in select lists,
  filters, join conditions, both sides of set operations (``Q EXCEPT ALL Q``, ``Q INTERSECT Q``
  with a failing Q) and in UNION ALL-of-joins branches. With ANSI off most of them return NULL or
  wrap instead; ``raise_error`` and interval overflow fail in both modes. Such queries keep
  broadcast joins off: a hash join whose build side is empty does not read its other side, so
  whether the error is raised would depend on the physical plan. The other queries keep them on
  one time in three (off, the factorization can fire at all: the tables are tiny, and it declines
  an input that would be broadcast in every branch anyway).

  Samples: ``TABLESAMPLE (50 PERCENT) REPEATABLE (7)`` over a view (deterministic), and the
  unseeded ``0 PERCENT`` / ``100 PERCENT`` (deterministic in their rows). About one query in ten
  draws unseeded samples of 30–70 percent, random even in vanilla Spark: :func:`unseeded_sample`
  tells the test to compare only errors and the number of ``Sample`` nodes for those; such
  queries have no failing expressions (a random sample would make the error random too).

* :func:`queries` is the plain strategy other tests use (SQL texts only): the integer domain, no
  failing expression, no sample — queries that must run, and give the same rows every time.

Nothing but the unseeded samples depends on row order or randomness, so the same query must give
the same bag of rows (or the same error class) however it is planned.

>>> from hypothesis import strategies as st
>>> sql = queries().example()   # doctest: +SKIP
>>> case = cases().example()    # doctest: +SKIP
>>> sql_of([("base", "rt0", ["k", "a"])])
'SELECT k AS c0, a AS c1 FROM rt0'
>>> for _, rows in TABLES.items(): assert all(len(r) == 3 for r in rows)
>>> len(TABLES["rte"]), len(TABLES["rt1r"])
(0, 1)
>>> sorted({v for rows in STRING_TABLES.values() for r in rows for v in r if v and v.lower().strip() == "a"})
['A', 'A ', 'a', 'a  ']
>>> unseeded_sample("SELECT * FROM rt0 TABLESAMPLE (50 PERCENT) q"), unseeded_sample("SELECT * FROM rt0 TABLESAMPLE (50 PERCENT) REPEATABLE (7)")
(True, False)
>>> unseeded_sample("SELECT * FROM rt0 TABLESAMPLE (100 PERCENT)"), unseeded_sample("SELECT * FROM rt0 TABLESAMPLE (0 PERCENT)")
(False, False)
>>> sorted(families("SELECT CAST(k AS DECIMAL(38,0)) AS c0 FROM rt0 TABLESAMPLE (30 PERCENT)"))
['decimal38', 'sample', 'unseeded']
>>> sorted(families("SELECT l_k AS c0 FROM rs0 WHERE l_k > 'a'", {"fail"}))
['collation', 'fail']
>>> Case("SELECT 1 AS c0", ansi=False, families=frozenset())
Case(ansi=False, broadcast=True, domain=int, fail_kind=None, families=[], sql='SELECT 1 AS c0')
"""
from __future__ import annotations

import decimal
import math
import random
import re
from dataclasses import dataclass

from hypothesis import strategies as st

COLUMNS = ("k", "a", "b")


def _table(rng: random.Random, n: int, null_rate: float, key_skew: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))  # an exact duplicate
            continue

        def v(hi):
            return None if rng.random() < null_rate else rng.randint(0, hi)

        k = 1 if rng.random() < key_skew else v(6)  # skew: most rows share key 1
        rows.append((k, v(4), v(9)))
    return rows


def _tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240801)
    return {
        "rt0": _table(rng, 40, 0.15, 0.5, 0.2),  # skewed key, some NULLs and duplicates
        "rt1": _table(rng, 12, 0.1, 0.0, 0.35),  # many duplicates
        "rt2": _table(rng, 8, 0.5, 0.0, 0.1),  # mostly NULLs
        "rte": [],  # empty
        "rt1r": [(1, 2, None)],  # one row
    }


TABLES = _tables()

# Strings equal under a case-insensitive or trailing-space-trimming collation, but not as bytes.
STRING_VALUES = ["a", "A", "a  ", "A ", "x", "X", "x ", "b", "B"]


def _string_table(rng: random.Random, n: int, null_rate: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))
            continue
        rows.append(tuple(None if rng.random() < null_rate else rng.choice(STRING_VALUES) for _ in COLUMNS))
    return rows


def _string_tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240802)
    return {
        "rs0": _string_table(rng, 30, 0.1, 0.2),
        "rs1": _string_table(rng, 10, 0.1, 0.3),
        "rse": [],
        "rs1r": [("A", "a  ", None)],
    }


STRING_TABLES = _string_tables()

COLLATIONS = {"UTF8_LCASE": "l", "UNICODE_CI": "u", "UTF8_BINARY_RTRIM": "r"}  # collation -> column prefix

DAY = 86400  # seconds
# Day-time values in seconds and year-month values in months; 100000000 days and 170000000 years
# are near the maximum of their types (106751991 days, 178956970 years): adding them overflows.
DT_VALUES = [DAY, 100000000 * DAY, -DAY, 2 * 3600, 0, 3 * DAY]
YM_VALUES = [1, 24, 170000000 * 12, -1, 0, 5]


def _interval_table(rng: random.Random, n: int, null_rate: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))
            continue
        dt = [None if rng.random() < null_rate else rng.choice(DT_VALUES) for _ in COLUMNS]
        ym = [None if rng.random() < null_rate else rng.choice(YM_VALUES) for _ in COLUMNS]
        rows.append(tuple(dt + ym))
    return rows


def _interval_tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240803)
    return {"ri0": _interval_table(rng, 16, 0.15, 0.2), "ri1": _interval_table(rng, 6, 0.1, 0.3), "rie": []}


INTERVAL_TABLES = _interval_tables()


def create_tables(spark, folder) -> list[str]:
    """Writes :data:`TABLES`, :data:`STRING_TABLES` and :data:`INTERVAL_TABLES` as Parquet under
    ``folder`` (one file each, a few writes at a time) and registers each as a temporary view.
    Returns the view names."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    schema = StructType([StructField(c, IntegerType(), True) for c in COLUMNS])
    s_schema = StructType(
        [StructField(f"{p}_{c}", StringType(coll), True) for coll, p in COLLATIONS.items() for c in COLUMNS]
    )
    i_schema = StructType(
        [StructField(f"s_{c}", LongType(), True) for c in COLUMNS] + [StructField(f"m_{c}", IntegerType(), True) for c in COLUMNS]
    )
    intervals = [f"make_dt_interval(CAST(s_{c} DIV {DAY} AS INT), 0, 0, s_{c} % {DAY}) AS {c}" for c in COLUMNS] + [
        f"make_ym_interval(0, m_{c}) AS y_{c}" for c in COLUMNS
    ]
    frames = {name: spark.createDataFrame(rows, schema) for name, rows in TABLES.items()}
    frames.update({name: spark.createDataFrame([r * len(COLLATIONS) for r in rows], s_schema) for name, rows in STRING_TABLES.items()})
    frames.update({name: spark.createDataFrame(rows, i_schema).selectExpr(*intervals) for name, rows in INTERVAL_TABLES.items()})

    def write(name):
        frames[name].coalesce(1).write.mode("overwrite").parquet(f"{folder}/{name}")

    with ThreadPoolExecutor(4) as pool:  # each write is a small job: mostly waiting
        list(pool.map(write, frames))
    for name in frames:
        spark.read.parquet(f"{folder}/{name}").createOrReplaceTempView(name)
    return list(frames)


def sql_of(parts) -> str:
    """Tiny helper for the doctest: a base relation's SQL."""
    (_, table, cols), = parts
    return "SELECT " + ", ".join(f"{c} AS c{i}" for i, c in enumerate(cols)) + f" FROM {table}"


# ---------------------------------------------------------------------------------------------
# What a query is, and which families it belongs to.


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


FAMILIES = ("fail", "collation", "sample", "unseeded", "interval", "decimal38")
# Shapes the generator tags as it draws them: a failing expression in a relation cancelled against
# itself, or in a UNION ALL-of-joins branch (its B side, condition or projection); a set operation
# of a relation with itself over collated strings; interval arithmetic in a branch projection.
SHAPES = ("fail in X-X", "fail in branch", "collated X-X", "interval in branch")


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


# ---------------------------------------------------------------------------------------------
# Domains: the type of every column of the relations of one query, with its tables, literals,
# expressions (safe and failing), aggregates and window functions.

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


INT = _Int()
DOMAINS = [INT] * 10 + [_Str(c) for c in COLLATIONS for _ in range(2)] + [_Interval("dt")] * 2 + [_Interval("ym")] * 2


# ---------------------------------------------------------------------------------------------
# The generator. Each function draws one relation of width ``n`` (columns c0..c{n-1}) as SQL.


class _Ctx:
    """One query's drawing context: fresh alias names, the domain, the kind of failing expression
    (or None), whether unseeded samples may be drawn, and the tags set while drawing."""

    def __init__(self, dom=INT, fail=None, unseeded=False, plain=False):
        self.i = 0
        self.dom, self.fail, self.unseeded, self.plain = dom, fail, unseeded, plain
        self.tags: set[str] = set()
        self.failing = 0  # failing expressions drawn so far

    @property
    def tags_now(self):
        return self.tags | ({"fail"} if self.failing else set())

    def __call__(self, prefix="q"):
        self.i += 1
        return f"{prefix}{self.i}"


def _cols(n):
    return [f"c{i}" for i in range(n)]


def _select(exprs) -> str:
    return ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))


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


def _width(draw):
    return draw(st.integers(1, 3))


KINDS = [
    "base", "filter", "project", "join", "union_of_joins", "union_of_joins", "setop",
    "self_setop", "unit_join", "aggregate", "agg_over_union", "nested_union", "distinct",
    "subquery", "window",
]


def _rel(draw, depth, n, cx) -> str:
    if depth <= 0:
        return _base(draw, n, cx)
    kinds = KINDS if cx.plain else KINDS + ["self_setop", "derived"] + (["sampled"] if cx.unseeded else [])
    kind = draw(st.sampled_from(kinds))
    return globals()["_" + kind](draw, depth, n, cx) if kind != "base" else _base(draw, n, cx)


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


def _filter(draw, depth, n, cx):
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    return f"SELECT * FROM ({inner}) {q} WHERE {_pred(draw, [f'{q}.{c}' for c in _cols(n)], cx)}"


def _project(draw, depth, n, cx):
    q, m = cx(), _width(draw)
    inner = _rel(draw, depth - 1, m, cx)
    cols = [f"{q}.{c}" for c in _cols(m)]
    return f"SELECT {_select([_expr(draw, cols, cx) for _ in range(n)])} FROM ({inner}) {q}"


def _derived(draw, depth, n, cx):
    """Value terms (``x - x``, ``x * 0``, ``-(-x)``) over columns computed below: failing,
    DECIMAL(38) or interval expressions, whose definitions must not be dropped with their errors."""
    q, r, m = cx(), cx(), _width(draw)
    inner = _rel(draw, depth - 1, m, cx)
    cols = [f"{q}.{c}" for c in _cols(m)]
    mid = [cx.dom.interesting(draw, cols, cx) for _ in range(m)]
    outs = [cx.dom.value_term(draw, f"{r}.c{draw(st.integers(0, m - 1))}") for _ in range(n)]
    return f"SELECT {_select(outs)} FROM (SELECT {_select(mid)} FROM ({inner}) {q}) {r}"


def _sampled(draw, depth, n, cx):
    """An unseeded sample over a subquery (only in queries that may hold unseeded samples)."""
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    return f"SELECT * FROM ({inner}) TABLESAMPLE ({draw(st.sampled_from([30, 50, 70]))} PERCENT) {q}"


JOIN_TYPES = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]


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


SET_OPS = ["UNION ALL", "UNION", "EXCEPT ALL", "EXCEPT", "INTERSECT ALL", "INTERSECT"]


def _setop(draw, depth, n, cx):
    left = _maybe_failing(draw, _rel(draw, depth - 1, n, cx), n, cx, one_in=4)
    right = _maybe_failing(draw, _rel(draw, depth - 1, n, cx), n, cx, one_in=4)
    return f"({left}) {draw(st.sampled_from(SET_OPS))} ({right})"


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


def _aggregate(draw, depth, n, cx):
    m = _width(draw)
    return _aggregate_over(draw, _rel(draw, depth - 1, m, cx), m, n, cx)


def _agg_over_union(draw, depth, n, cx):
    m = _width(draw)
    inner = draw(st.sampled_from([_union_of_joins, _setop, _nested_union]))(draw, depth, m, cx)
    return _aggregate_over(draw, inner, m, n, cx)


def _nested_union(draw, depth, n, cx):
    parts = [_rel(draw, depth - 1, n, cx) for _ in range(draw(st.integers(2, 3)))]
    inner = " UNION ALL ".join(f"({p})" for p in parts)
    q = cx()
    other = _rel(draw, depth - 1, n, cx)
    op = draw(st.sampled_from(["UNION ALL", "UNION ALL", "UNION", "EXCEPT ALL", "INTERSECT ALL"]))
    return f"(SELECT * FROM ({inner}) {q}) {op} ({other})"


def _distinct(draw, depth, n, cx):
    q = cx()
    return f"SELECT DISTINCT * FROM ({_rel(draw, depth - 1, n, cx)}) {q}"


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


def _window(draw, depth, n, cx):
    q = cx()
    inner = _rel(draw, depth - 1, n, cx)
    cols = [f"{q}.{c}" for c in _cols(n)]
    p = draw(st.sampled_from(cols))
    o = draw(st.sampled_from(cols))
    fn = draw(st.sampled_from(cx.dom.windows(cx))).format(p=p, o=o)
    cols[draw(st.integers(0, n - 1))] = fn
    return f"SELECT {_select(cols)} FROM ({inner}) {q}"


def _query(draw, cx, max_depth) -> str:
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


# ---------------------------------------------------------------------------------------------
# Comparing results as bags, with a tolerance for floating point.


def norm(v):
    """A sort key for a value: floats rounded (tolerance), NaN and None made comparable."""
    if v is None:
        return (0, "")
    if isinstance(v, float):
        if math.isnan(v):
            return (1, "nan")
        return (2, float(f"{v:.6g}"))
    if isinstance(v, (int, decimal.Decimal)):
        return (2, v)
    return (3, str(v))


def row_key(row):
    return tuple(norm(v) for v in row)


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def same_bag(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(sorted(a, key=row_key), sorted(b, key=row_key)):
        if len(x) != len(y) or not all(_same_value(u, v) for u, v in zip(x, y)):
            return False
    return True
