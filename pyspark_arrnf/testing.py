"""DataFrame-equality checks for the extension: the same query with the rewrites on and off.

Each side is planned *and* collected under its own setting (Spark plans lazily, so a DataFrame
built with the rewrites on but collected with them off would compare nothing). Rows are then
compared with chispa, ignoring row order unless asked, exactly: floating-point values by their
digits (``-0.0`` is not ``0.0``; NaN equals NaN), since no rule regroups floating-point arithmetic;
``precision=`` allows an absolute tolerance instead. An error of Spark's counts as a result: both
sides must raise the same error class, or neither; any other error (a mistake in the test) is raised.

    >>> from pyspark_arrnf.testing import assert_same_both_ways   # doctest: +SKIP
    >>> assert_same_both_ways(spark, "select * from t join (select 1) u")  # doctest: +SKIP
"""
from __future__ import annotations

import re

from dataclasses import dataclass

from ._jvm import error_text
from .compare import arrnf_enabled, optimized_plan
from .errors import _check_live, _is_session, _is_spark_error
from .session import ENABLED


@dataclass
class Side:
    """One run of a query: its optimized plan and rows, or the error it raised."""

    plan: str | None
    rows: list | None
    schema: object | None
    error: Exception | None
    frame: object = None  # the DataFrame the query gave (None: it raised)


def run_side(spark, query, enabled: bool) -> Side:
    """Plans and collects ``query`` with the rewrites on or off. Spark's errors are the side's result;
    anything else (a mistake in the test's own function, a function that returns no DataFrame, or
    one built in another session than ``spark``, whose setting is not switched) is raised: compared
    as a result, the same mistake on both sides would pass without testing anything."""
    with arrnf_enabled(spark, enabled):
        try:
            df = spark.sql(query) if isinstance(query, str) else query()
        except Exception as e:  # noqa: BLE001 - Spark's errors are a result to compare
            if not _is_spark_error(e):
                raise
            return Side(None, None, None, e)
        _check_dataframe(df, enabled)
        try:
            plan = optimized_plan(df)
            return Side(plan, df.collect(), df.schema, None, df)
        except AttributeError:  # a broken test or client, not a result: equal on both sides, it would pass
            raise
        except Exception as e:  # noqa: BLE001 - an error running the query (or converting its rows) is a result
            return Side(None, None, None, e, df)


def _check_arguments(spark, query, ordered, precision) -> None:
    """One clear message for arguments that are not what :func:`assert_same_both_ways` compares."""
    from pyspark.sql import DataFrame

    if not _is_session(spark):
        raise TypeError(f"assert_same_both_ways() takes the SparkSession first, not {type(spark).__name__}")
    _check_live(spark, "assert_same_both_ways()", "pass that one")
    if isinstance(query, DataFrame):
        raise TypeError("assert_same_both_ways() takes SQL text or a function returning a DataFrame, not a "
                        "DataFrame: a DataFrame keeps the plan it was first given, so both sides would run one "
                        "plan. Pass lambda: <the code that builds it>")
    if isinstance(query, str) and not query.strip():
        raise ValueError("assert_same_both_ways() was given empty SQL text")
    if not isinstance(query, str) and not callable(query):
        raise TypeError(f"assert_same_both_ways() takes SQL text or a function returning a DataFrame, "
                        f"not {type(query).__name__}")
    if not isinstance(ordered, bool):
        raise TypeError(f"ordered= takes True or False, not {ordered!r}")
    if isinstance(precision, bool) or not isinstance(precision, (int, float)) or not precision >= 0:
        raise ValueError(f"precision= takes a number at least 0, not {precision!r}")


def _check_dataframe(df, enabled: bool) -> None:
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"the query function returned {type(df).__name__}, not a DataFrame")
    if df.isStreaming:
        raise TypeError("the query reads a stream: assert_same_both_ways() compares batch queries")
    if df.sparkSession.conf.get(ENABLED, "true") != ("true" if enabled else "false"):
        raise ValueError("the query's DataFrame belongs to another Spark session than the one given, whose "
                         "spark.arrnf.enabled is not switched: build it from the session passed in")


# Errors that only carry others: a task's failure seen through the driver, several stages failing
# at once under adaptive execution, a broadcast built in another thread.
WRAPPER_CONDITIONS = {"STAGE_MATERIALIZATION_MULTIPLE_FAILURES"}
WRAPPER_JAVA = {"org.apache.spark.SparkException", "java.util.concurrent.ExecutionException"}
_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\]")
_JAVA = re.compile(r"\b((?:[a-z]\w*\.)+[A-Z][\w$]*(?:Exception|Error)): ")


def error_classes(e: Exception) -> frozenset:
    """The error classes an exception carries: Spark's error condition, or, when it only wraps
    others (a task failure seen from the driver, ``STAGE_MATERIALIZATION_MULTIPLE_FAILURES``), the
    conditions it wraps, or the Java classes of causes without a condition (a bare
    ``java.lang.ArithmeticException`` from interval multiplication). Which wrapper the same error
    comes in depends on the plan's stages, so wrappers are not compared."""
    getter = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    try:
        cond = getter() if getter else None
    except Exception:  # noqa: BLE001
        cond = None
    if cond and cond not in WRAPPER_CONDITIONS:
        return frozenset([cond])
    text = str(e)
    found = {c for c in _CONDITION.findall(text) if c not in WRAPPER_CONDITIONS}
    if not found:
        found = {j for j in _JAVA.findall(text) if j not in WRAPPER_JAVA}
    return frozenset(found or [type(e).__name__])


def assert_same_both_ways(spark, query, ordered: bool = False, precision: float = 0.0):
    """Runs ``query`` (SQL text, or a function returning a DataFrame) with the rewrites on and off
    and asserts equal results (an ``AssertionError`` saying which side is which): exactly, or with
    an absolute tolerance ``precision`` for numbers. Returns ``(on, off)`` :class:`Side` objects for
    further checks."""
    from chispa import assert_approx_df_equality, assert_df_equality

    _check_arguments(spark, query, ordered, precision)
    on, off = run_side(spark, query, True), run_side(spark, query, False)
    if on.frame is not None and on.frame is off.frame:
        raise TypeError("the query function returned the same DataFrame both times: a DataFrame keeps the plan "
                        "it was first given, so both sides ran one plan. Build the DataFrame inside the function")
    if on.error or off.error:
        assert on.error is not None and off.error is not None, (
            f"only one side raised.\nwith the extension: {_said(on.error)}\nwithout: {_said(off.error)}\nquery: {query}"
        )
        assert error_classes(on.error) & error_classes(off.error), (
            f"different errors: {sorted(error_classes(on.error))} with the extension, "
            f"{sorted(error_classes(off.error))} without.\nquery: {query}")
        return on, off
    # (compared by position below: the names are compared here)
    assert on.schema.names == off.schema.names, (
        f"different column names: {on.schema.names} with the extension, {off.schema.names} without.\nquery: {query}")
    left, right = (_comparable(spark.createDataFrame(s.rows, s.schema), exact=not precision) for s in (on, off))
    try:
        if precision:
            assert_approx_df_equality(
                left, right, precision, ignore_row_order=not ordered, ignore_nullable=True, allow_nan_equality=True)
        else:
            assert_df_equality(left, right, ignore_row_order=not ordered, ignore_nullable=True)
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001 - chispa's own DataFramesNotEqualError and the like
        if _is_spark_error(e):
            raise
        text = _ANSI.sub("", str(e))
        raise AssertionError(f"different results: df1 is with the extension, df2 without.\n{text}\nquery: {query}") from None
    return on, off


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _said(e: Exception | None) -> str:
    """An error as one line, as a measured report says it (class and first line), or "no error"."""
    return "no error" if e is None else error_text(e)


def _comparable(df, exact: bool = True):
    """``df`` with columns chispa can sort and name: by position (repeated names, names with dots),
    a MAP as its entries sorted by key (a map has no order Spark can sort by); ``exact``: a
    FLOAT/DOUBLE (at any depth) as its digits, so that ``-0.0`` is not ``0.0`` and NaN is NaN; a
    VARIANT as its JSON text. A MAP inside an ARRAY or STRUCT has no such form: said in one line."""
    from pyspark.sql.types import ArrayType, DoubleType, FloatType, MapType, StructType

    def has(t, kinds) -> bool:
        if isinstance(t, kinds):
            return True
        if isinstance(t, ArrayType):
            return has(t.elementType, kinds)
        if isinstance(t, MapType):
            return has(t.keyType, kinds) or has(t.valueType, kinds)
        if isinstance(t, StructType):
            return any(has(f.dataType, kinds) for f in t.fields)
        return False

    # (SQL text: pyspark.sql.functions makes classic columns, which a Spark Connect DataFrame refuses)
    named = df.toDF(*[f"c{i}" for i in range(len(df.columns))])
    exprs = []
    for f, name in zip(named.schema.fields, df.columns):
        t = f.dataType
        if isinstance(t, MapType):  # a map of maps
            nested = has(t.keyType, MapType) or has(t.valueType, MapType)
        else:  # a map in an array or struct
            nested = has(t, MapType)
        if nested:
            raise TypeError(f"assert_same_both_ways() cannot compare column {name!r} of type {t.simpleString()}: "
                            "a MAP inside another type has no order to compare by. Select it as something "
                            "comparable (its map_entries, sorted) in the query")
        if type(t).__name__ == "VariantType":
            e = f"to_json({f.name})"
        else:
            e = f"array_sort(map_entries({f.name}))" if isinstance(t, MapType) else f.name
            if exact and has(t, (FloatType, DoubleType)):
                e = f"CAST({e} AS STRING)"
        exprs.append(f"{e} AS {f.name}")
    return named.selectExpr(*exprs)
