"""What the entry points accept: a DataFrame, or a SQL text run in a session.

>>> df, spark = dataframe("select 1 as x", None, "so it cannot be measured")   # doctest: +SKIP
>>> dataframe("select nope", spark, "so it cannot be measured")                  # doctest: +SKIP
Traceback (most recent call last):
pyspark_arrnf.errors.ArrnfError: the query does not analyze, so it cannot be measured: [UNRESOLVED_COLUMN...
"""
from __future__ import annotations

from .errors import ArrnfError, first_line


def dataframe(df_or_sql, spark, consequence: str):
    """``(DataFrame, SparkSession)`` of a DataFrame, or of a SQL text run in ``spark`` (the active
    session when not given). A text that does not analyze raises one clear :class:`ArrnfError`:
    "the query does not analyze, <consequence>: <Spark's first line>"."""
    if not isinstance(df_or_sql, str):
        return df_or_sql, spark or df_or_sql.sparkSession
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            raise ArrnfError("no active SparkSession: pass spark=..., or start one with pyspark_arrnf.session()")
    # PySpark logs every failed analysis with its JVM stack trace (logger SQLQueryContextLogger);
    # the user gets one clear message instead.
    # Ask PySpark for it: a plain logging.getLogger would register a logger of the wrong class
    # under that name, and PySpark's own later calls (with errorClass=...) would then fail.
    from pyspark.logger import PySparkLogger

    quiet = PySparkLogger.getLogger("SQLQueryContextLogger")
    was = quiet.disabled
    quiet.disabled = True
    try:
        return spark.sql(df_or_sql), spark
    except Exception as e:  # noqa: BLE001 - AnalysisException, ParseException: say it once, clearly
        raise ArrnfError(f"the query does not analyze, {consequence}: {first_line(e)}") from None
    finally:
        quiet.disabled = was
