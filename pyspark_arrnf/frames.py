"""What the entry points accept: a DataFrame, or a SQL text run in a session.

>>> df, spark = dataframe("select 1 as x", None, "so it cannot be measured")   # doctest: +SKIP
>>> dataframe("select nope", spark, "so it cannot be measured")                  # doctest: +SKIP
Traceback (most recent call last):
pyspark_arrnf.errors.ArrnfError: the query does not analyze, so it cannot be measured: [UNRESOLVED_COLUMN...
"""
from __future__ import annotations

from . import _jvm
from .errors import ArrnfError, ArrnfSetupError


def session_of(df_or_sql, spark):
    """The session a DataFrame or SQL text belongs to: ``spark`` when given, the DataFrame's, or the
    active one (an ArrnfError when there is none)."""
    if spark is not None:
        return spark
    if not isinstance(df_or_sql, str):
        return df_or_sql.sparkSession
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise ArrnfError("no active SparkSession: pass spark=..., or start one with pyspark_arrnf.session()")
    return spark


def dataframe(df_or_sql, spark, consequence: str):
    """``(DataFrame, SparkSession)`` of a DataFrame, or of a SQL text planned in ``spark`` (the active
    session when not given; a classic one: Spark Connect clients go through connect.py). A text that
    does not analyze raises one clear :class:`ArrnfError`: "the query does not analyze,
    <consequence>: <Spark's first line>"; a command (``DROP TABLE``, ``INSERT`` ...) is refused
    before it runs, where ``spark.sql`` would run it."""
    spark = session_of(df_or_sql, spark)
    if not isinstance(df_or_sql, str):
        return df_or_sql, spark
    # PySpark logs every failed analysis with its JVM stack trace (logger SQLQueryContextLogger);
    # the user gets one clear message instead.
    # Ask PySpark for it: a plain logging.getLogger would register a logger of the wrong class
    # under that name, and PySpark's own later calls (with errorClass=...) would then fail.
    from pyspark.logger import PySparkLogger

    quiet = PySparkLogger.getLogger("SQLQueryContextLogger")
    was = quiet.disabled
    quiet.disabled = True
    try:
        return _jvm.query_dataframe(spark, df_or_sql), spark
    except ArrnfSetupError:
        raise
    except Exception as e:  # noqa: BLE001 - AnalysisException, ParseException, a command: say it once
        message = _jvm.java_message(e)
        if "is a command" in message and "not a query" in message:
            raise ArrnfError(message.split(": ", 1)[-1] if message.startswith("arrnf: ") else message) from None
        raise ArrnfError(f"the query does not analyze, {consequence}: {message}") from None
    finally:
        quiet.disabled = was
