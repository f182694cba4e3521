"""The extension's rewrites switched on or off for a block of code, and the plan they give.

>>> from pyspark_arrnf.compare import arrnf_enabled, optimized_plan   # doctest: +SKIP
>>> with arrnf_enabled(spark, False):                                 # doctest: +SKIP
...     print(optimized_plan(spark.sql("select 1")))
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


def optimized_plan(df) -> str:
    """Catalyst's optimized logical plan of ``df`` as text (on Spark Connect, the server's, from the
    extended explain text)."""
    from .connect import is_connect

    if is_connect(df):
        text = df._explain_string(mode="extended")
        start, end = "== Optimized Logical Plan ==\n", "\n\n== Physical Plan =="
        return text[text.index(start) + len(start):text.index(end)]
    return df._jdf.queryExecution().optimizedPlan().toString()
