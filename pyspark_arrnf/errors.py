"""The package's exception and warning types, each saying what is wrong and what to do.

>>> first_line(ValueError("\\n  the query failed  \\n  at line 3"))
'the query failed'
>>> first_line(KeyError())
'KeyError'
>>> _check_query(123, "arrnf()")
Traceback (most recent call last):
TypeError: arrnf() takes a Spark DataFrame or SQL text, not int
"""


class ArrnfSetupError(RuntimeError):
    """Java, Spark or the extension jar is not as the package needs it."""


class ArrnfError(Exception):
    """A query that cannot be normalized or measured (it does not analyze, or the JVM side failed)."""


class ArrnfPlanningError(ArrnfError):
    """A query Spark failed while planning it (under ANSI, a division by zero in a constant it folds):
    nothing ran, so there is no plan to measure. ``cause`` is Spark's error."""

    def __init__(self, message: str, cause: BaseException):
        super().__init__(message)
        self.cause = cause


class ArrnfSqlWarning(UserWarning):
    """A block of the program has no SQL form: its CTE fails when run (sql.py)."""


def first_line(e: BaseException) -> str:
    """The first non-blank line of an exception's message (its class name when it has none): Spark's
    messages go on with JVM stack traces, which a one-line error should not carry."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


def _is_spark_error(e: BaseException) -> bool:
    """An error raised by Spark or the bridge to its JVM (analysis, parsing, execution, settings)."""
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError:
        return False
    return isinstance(e, (PySparkException, Py4JError))


def _is_session(x) -> bool:
    """Whether ``x`` is a SparkSession, classic or Spark Connect (which share no base class)."""
    return hasattr(x, "sql") and hasattr(x, "conf")


def _check_call(df_or_sql, spark, name, function: str) -> None:
    """One clear message for the other arguments of ``arrnf()`` and ``measure()``: ``spark`` a
    session (not the query's name given in its place), ``name`` text, and the session not stopped
    (a stopped one gave a program without Spark's realization, or Spark's INTERNAL_ERROR)."""
    if spark is not None and not _is_session(spark):
        raise TypeError(f"{function} takes spark=<a SparkSession>, not {type(spark).__name__}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"{function} takes name=<the result block's name, non-empty text>, not {name!r}")
    _check_live(spark if spark is not None else getattr(df_or_sql, "sparkSession", None), function)


def _check_live(session, function: str, what: str = "build the query in it") -> None:
    """One clear message where ``session`` (classic or Spark Connect) was stopped: Spark's own is a Java
    NullPointerException's text, an AttributeError or Connect's NO_ACTIVE_SESSION, which reads as the
    query's fault."""
    context = getattr(session, "_sc", None)
    if context is not None and getattr(context, "_jsc", None) is None:
        raise ArrnfError(f"{function}: the Spark session is stopped; start one (pyspark_arrnf.session()) and {what}")
    if context is None and getattr(session, "is_stopped", False) is True:  # a Spark Connect client's
        raise ArrnfError(f"{function}: the Spark Connect session is stopped; connect again "
                         f"(SparkSession.builder.remote(...).getOrCreate()) and {what}")


def _check_query(df_or_sql, function: str) -> None:
    """A TypeError naming the type given, unless ``df_or_sql`` is SQL text or a Spark DataFrame (classic
    or Connect): anything else would fail deep inside, as "'int' object has no attribute '_jdf'"."""
    if isinstance(df_or_sql, str):
        return
    from pyspark.sql import DataFrame  # the base of the classic and the Connect DataFrame

    if isinstance(df_or_sql, DataFrame):
        return
    kind = type(df_or_sql)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    hint = ": make it a Spark DataFrame with spark.createDataFrame(...)" if kind.__module__.startswith("pandas") else ""
    raise TypeError(f"{function} takes a Spark DataFrame or SQL text, not {name}{hint}")
