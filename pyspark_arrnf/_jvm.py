"""Every call of the package into the JVM, all through one Scala object: ``arrnf.Api``.

Keeping the calls here makes the contract between the two halves one short list (see
``jvm-rules/src/main/scala/arrnf/Api.scala``), and turns a JVM failure into one clear Python error.
"""
from __future__ import annotations

from .errors import ArrnfError, ArrnfSetupError, first_line


def _api(jvm):
    """``arrnf.Api`` in this JVM, or a clear error when the session does not have it."""
    from py4j.java_gateway import JavaClass

    api = jvm.arrnf.Api
    if not isinstance(api, JavaClass):  # py4j answers a missing class with a JavaPackage
        raise ArrnfSetupError(
            "The JVM has no class arrnf.Api: the session was not started with the pyspark-arrnf jar "
            "(use pyspark_arrnf.session() or configure(builder) before getOrCreate()), or the jar is older "
            "than this package (rebuild it: 'bash dev/setup').")
    return api


def _java_message(e: BaseException) -> str:
    """The JVM exception's own first line: py4j's first line only names the call."""
    java = getattr(e, "java_exception", None)
    return first_line(str(java.toString())) if java is not None else first_line(e)


def program_json(spark, df, name: str) -> str:
    """The ArrNF program of ``df`` as the JVM's JSON (docs/arrnf-json.md)."""
    api = _api(spark._jvm)
    try:
        return api.json(df._jdf, name)
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not normalize the plan: {_java_message(e)}") from None


def run(spark, df) -> int:
    """Runs ``df`` on every partition without bringing rows to the driver; its row count. A failing
    query raises its own (PySpark-converted) exception: the caller records it."""
    return int(_api(spark._jvm).run(df._jdf))


def measured_json(spark, df, name: str, error: str | None, result_rows: int | None) -> str:
    """The measured report of ``df`` after it ran, or failed with ``error`` (docs/arrnf-measured.md).
    The JVM answers ``{"error": ...}`` instead of throwing."""
    api = _api(spark._jvm)
    try:
        return api.measuredJson(df._jdf, name, error, result_rows)
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not measure the plan: {_java_message(e)}") from None


def stream_json(query, name: str) -> str:
    """The measured report of a streaming query's last micro-batch (``{"error": ...}`` before one ran)."""
    from pyspark import SparkContext

    # A StreamingQuery does not name its session; the JVM of the running context is the one it uses.
    api = _api(SparkContext._jvm)
    try:
        return api.streamJson(query._jsq, name)
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not measure the stream: {_java_message(e)}") from None


def rule_failures(spark) -> dict[str, int]:
    """How often each rule (and the normalizer) failed and was skipped since the JVM started."""
    m = _api(spark._jvm).ruleFailures()
    return {str(k): int(m.get(k)) for k in m.keySet().toArray()}


def collect_statistics(spark, tables: list[str]) -> list[str]:
    """Runs the sketch pass over ``tables`` in ``spark``'s JVM: one line per table."""
    return [str(x) for x in _api(spark._jvm).collectStatistics(spark._jsparkSession, list(tables))]


def clear_statistics(spark) -> None:
    """Forgets every sketch taken in ``spark``'s JVM."""
    _api(spark._jvm).clearStatistics()
