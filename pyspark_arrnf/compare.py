"""Run one query with the extension's rewrites on and off, for DataFrame-equality tests.

>>> from pyspark_arrnf.compare import both_ways  # doctest: +SKIP
>>> on, off = both_ways(spark, "select 1")        # doctest: +SKIP
"""
from __future__ import annotations

from contextlib import contextmanager

from .session import ENABLED


@contextmanager
def arrnf_enabled(spark, enabled: bool):
    """Sets ``spark.arrnf.enabled`` for the block and restores what was there."""
    before = spark.conf.get(ENABLED, "true")
    spark.conf.set(ENABLED, "true" if enabled else "false")
    try:
        yield
    finally:
        spark.conf.set(ENABLED, before)


def both_ways(spark, query: str):
    """The collected rows of ``query`` with the rewrites on, then off (each a fresh plan)."""
    with arrnf_enabled(spark, True):
        on = spark.sql(query)
        on_rows = on.collect()
    with arrnf_enabled(spark, False):
        off = spark.sql(query)
        off_rows = off.collect()
    return on, on_rows, off, off_rows


def optimized_plan(df) -> str:
    """Catalyst's optimized logical plan of ``df`` as text."""
    return df._jdf.queryExecution().optimizedPlan().toString()
