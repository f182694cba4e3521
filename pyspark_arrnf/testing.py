"""DataFrame-equality checks for the extension: the same query with the rewrites on and off.

Each side is planned *and* collected under its own setting (Spark plans lazily, so a DataFrame
built with the rewrites on but collected with them off would compare nothing). Rows are then
compared with chispa, ignoring row order unless asked, with a small tolerance for floating point
(a rewrite may add doubles in another order). An error counts as a result: both sides must raise
the same error class, or neither.

    >>> from pyspark_arrnf.testing import assert_same_both_ways   # doctest: +SKIP
    >>> assert_same_both_ways(spark, "select * from t join (select 1) u")  # doctest: +SKIP
"""
from __future__ import annotations

import re

from dataclasses import dataclass

from .compare import arrnf_enabled, optimized_plan


@dataclass
class Side:
    """One run of a query: its optimized plan and rows, or the error it raised."""

    plan: str | None
    rows: list | None
    schema: object | None
    error: Exception | None


def run_side(spark, query, enabled: bool) -> Side:
    with arrnf_enabled(spark, enabled):
        try:
            df = spark.sql(query) if isinstance(query, str) else query()
            plan = optimized_plan(df)
            return Side(plan, df.collect(), df.schema, None)
        except AttributeError:  # a broken test or client, not a result: equal on both sides, it would pass
            raise
        except Exception as e:  # noqa: BLE001 - an error is a result to compare
            return Side(None, None, None, e)


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


def assert_same_both_ways(spark, query, ordered: bool = False, precision: float = 1e-6):
    """Runs ``query`` (SQL text, or a function returning a DataFrame) with the rewrites on and off
    and asserts equal results. Returns ``(on, off)`` :class:`Side` objects for further checks."""
    from chispa import assert_approx_df_equality

    on, off = run_side(spark, query, True), run_side(spark, query, False)
    if on.error or off.error:
        assert on.error is not None and off.error is not None, (
            f"only one side raised.\nwith the extension: {on.error!r}\nwithout: {off.error!r}\nquery: {query}"
        )
        assert error_classes(on.error) & error_classes(off.error), (
            f"different errors: {sorted(error_classes(on.error))} with the extension, "
            f"{sorted(error_classes(off.error))} without.\nquery: {query}")
        return on, off
    left = spark.createDataFrame(on.rows, on.schema)
    right = spark.createDataFrame(off.rows, off.schema)
    assert_approx_df_equality(
        left, right, precision, ignore_row_order=not ordered, ignore_nullable=True, allow_nan_equality=True
    )
    return on, off
