"""The sketch pass: column statistics that make ArrNF's size estimates possible, taken only when asked.

Without it, rows are known only where metadata states them (Parquet footers, catalog statistics,
cached data); above a filter on columns without statistics they are ``unknown``. The pass runs one
aggregate job per table (row count; per column a HyperLogLog distinct count, NULL count, and
min/max of numbers and dates) and one sampling job (2,000 rows drawn uniformly, every row of a smaller
table, for filters: those Spark's estimation does not cover such as ``LIKE``, and those keeping
enough sampled rows to count; and for the combinations of columns a query groups by), kept in the
JVM for the files it read, ignored once they change.
After it, blocks read ``rows≈… (estimate: file metadata, sketch)`` (``…, sample)`` where a filter's
rows come from the sample).

>>> statistics(spark, ["nation", "region"])               # doctest: +SKIP
['nation: 25 rows, 4 columns sketched, 25 rows sampled (1 files)', 'region: 5 rows, 3 columns sketched, 5 rows sampled (1 files)']
>>> print(arrnf(query, spark))                            # doctest: +SKIP
"""
from __future__ import annotations

from . import _jvm
from .errors import _check_live


def statistics(spark, tables) -> list[str]:
    """Takes the sketch of each table (or view over files) in ``tables``; one line per table saying
    what was sketched or why not (a table that reads no files, or several).

    A DataFrame keeps the plan Spark first made of it (as after ``ANALYZE TABLE``): one already
    explained, run or asked for its ``inputFiles()`` is planned with the sketches once built again."""
    _check_live(spark, "statistics()", "register the tables in it")
    if isinstance(tables, str):
        tables = [tables]
    return _jvm.collect_statistics(spark, list(tables))


def forget_statistics(spark) -> None:
    """Forgets every sketch taken in this Spark session's JVM."""
    _jvm.clear_statistics(spark)
