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
    is 178956970);
  - ``ra0``, ``ra1``, ``ra2``, ``rae``, ``ra1r`` (:data:`AGG_TABLES`): numeric tables for
    aggregates over joins, ``k, j, g, i, e INT, l BIGINT, d38 DECIMAL(38,2), d18 DECIMAL(18,2),
    d28 DECIMAL(28,0), x DOUBLE``: keys with duplicates and NULLs on every side, BIGINT and
    DECIMAL values near their limits (sums overflow depending on the join's multiplicities),
    ``e`` with 0 and 2147483647, doubles with NaN, infinities and -0.0.

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
  value terms (``x - x``, ``x * 0``, ``-(-x)``) over columns computed below them, and aggregates
  over joins (:mod:`.aggjoins`: what eager aggregation rewrites, and its near misses; one query
  in seven is one of them over the numeric tables, the domain ``agg``). Queries longer
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

The package, by job: :mod:`.tables` (the tables and :func:`create_tables`); the domains with their
expressions and failing expressions, :mod:`.integers`, :mod:`.strings` (collations) and
:mod:`.intervals`; the generator, :mod:`.context` (a query's drawing context, SQL helpers),
:mod:`.relations` (base relations, predicates, the dispatch over :data:`KINDS`) and the shapes it
dispatches to, :mod:`.selects`, :mod:`.joins`, :mod:`.setops`, :mod:`.aggregates`, :mod:`.aggjoins`;
:mod:`.strategy` (:class:`Case`, :func:`families`, :func:`cases`, :func:`queries`); :mod:`.compare`
(:func:`same_bag`). Everything public is imported here: ``import randomsql`` is all a test needs.

>>> from hypothesis import strategies as st
>>> sql = queries().example()   # doctest: +SKIP
>>> case = cases().example()    # doctest: +SKIP
>>> sql_of([("base", "rt0", ["k", "a"])])
'SELECT k AS c0, a AS c1 FROM rt0'
>>> for _, rows in TABLES.items(): assert all(len(r) == 3 for r in rows)
>>> len(TABLES["rte"]), len(TABLES["rt1r"])
(0, 1)
>>> len(AGG_TABLES["rae"]), len(AGG_TABLES["ra1r"]), max(r[5] or 0 for r in AGG_TABLES["ra0"]) == 2**63 - 1
(0, 1, True)
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

from . import selects  # noqa: F401  (registers its shapes: the other shape modules are imported below)
from .compare import norm, row_key, same_bag
from .integers import BIG, INT
from .joins import JOIN_TYPES
from .relations import KINDS, SEEDED_SAMPLES, SHAPE_FUNCS
from .setops import SET_OPS
from .strategy import DOMAINS, FAMILIES, SHAPES, Case, cases, families, queries, unseeded_sample
from .aggjoins import AGG_SHAPES, NUMERIC
from .tables import (
    AGG_TABLES, COLLATIONS, COLUMNS, DAY, DT_VALUES, INTERVAL_TABLES, STRING_TABLES, STRING_VALUES, TABLES, YM_VALUES,
    create_tables, sql_of,
)

# Every kind _rel may draw has its function (the unseeded-only and non-plain kinds included).
assert set(KINDS) - {"base"} | {"self_setop", "derived", "sampled"} | set(AGG_SHAPES) <= set(SHAPE_FUNCS), sorted(SHAPE_FUNCS)

__all__ = [
    "AGG_SHAPES", "AGG_TABLES", "BIG", "COLLATIONS", "COLUMNS", "DAY", "DOMAINS", "DT_VALUES", "FAMILIES", "INT", "INTERVAL_TABLES", "JOIN_TYPES",
    "KINDS", "NUMERIC", "SEEDED_SAMPLES", "SET_OPS", "SHAPES", "STRING_TABLES", "STRING_VALUES", "TABLES", "YM_VALUES", "Case",
    "cases", "create_tables", "families", "norm", "queries", "row_key", "same_bag", "sql_of", "unseeded_sample",
]
