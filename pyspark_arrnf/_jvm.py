"""Every call of the package into the JVM, all through one Scala object: ``arrnf.Api``.

Keeping the calls here makes the contract between the two halves one short list (see
``jvm-rules/src/main/scala/arrnf/Api.scala``), and turns a JVM failure into one clear Python error.
"""
from __future__ import annotations

import re
import zlib

from .connect import is_connect, needs_classic
from .errors import ArrnfError, ArrnfPlanningError, ArrnfSetupError, first_line

MEASURE_ON_CONNECT = (
    "Spark Connect does not give its clients the SQL metrics of a query's executed plan, which measuring "
    "reads. Here arrnf(df) works (the program with estimated sizes, as does SELECT * FROM "
    "arrnf_blocks('...') from any client); to measure, call pyspark_arrnf.measure in a classic session "
    "on the driver.")
STATISTICS_ON_CONNECT = (
    "Sketches live in the server's JVM, where statistics() takes them (SELECT * FROM arrnf_statistics('t', ...) "
    "from any client) and a pass taken again replaces them; forgetting them all needs the driver's JVM.")


def process_jvm_has_api() -> bool | None:
    """Whether the Spark JVM of this Python process can load ``arrnf.Api`` (the jar is on its class
    path); None when no JVM was started yet. PySpark keeps one JVM per process, across stop()."""
    from py4j.java_gateway import JavaClass
    from pyspark import SparkContext

    if SparkContext._gateway is None or SparkContext._jvm is None:
        return None
    try:
        return isinstance(SparkContext._jvm.arrnf.Api, JavaClass)
    except Exception:  # noqa: BLE001 - a JVM that is gone
        return False


def _api(jvm):
    """``arrnf.Api`` in this JVM, or a clear error when the session does not have it."""
    from py4j.java_gateway import JavaClass

    api = jvm.arrnf.Api
    if not isinstance(api, JavaClass):  # py4j answers a missing class with a JavaPackage
        raise ArrnfSetupError(
            "The JVM has no class arrnf.Api: this Python process's Spark started without the pyspark-arrnf "
            "jar, or with one older than this package (rebuild it: 'bash dev/setup'). Restart the Python "
            "process (in a notebook: the kernel) and call pyspark_arrnf.session(), or "
            "configure(builder) before getOrCreate(), before any other Spark call.")
    return api


def _joined(pieces) -> str:
    """The text the JVM sent deflated, in pieces (``Api.jsonPieces``: one socket write each, so that
    no reply waits for TCP's delayed acknowledgement)."""
    return zlib.decompress(b"".join(bytes(p) for p in pieces)).decode("utf-8")


def java_message(e: BaseException) -> str:
    """The JVM exception's own first line: py4j's first line only names the call."""
    java = getattr(e, "java_exception", None)
    return first_line(str(java.toString())) if java is not None else first_line(e)


def error_text(e: BaseException) -> str:
    """An error as a measured report says it, class and first line: ``SparkRuntimeException: [...]``.
    PySpark converts Spark's common exceptions; for one it does not (py4j's ``Py4JJavaError``, whose
    own first line only names the call) the Java exception's class, without its package."""
    if type(e).__name__ == "Py4JJavaError":
        return re.sub(r"^(?:[a-z_$][\w$]*\.)+(?=[A-Z])", "", java_message(e))
    if type(e).__name__ == "PythonException":  # its first line only says a Python worker raised: add what
        return f"PythonException: {python_cause(str(e)) or java_message(e)}"
    return f"{type(e).__name__}: {java_message(e)}"


def python_cause(text: str) -> str | None:
    """The exception line that ends a Python worker's traceback in a PythonException's text.

    >>> python_cause('An exception was thrown from the Python worker.\\nTraceback (most recent call last):\\n'
    ...              '  File "<stdin>", line 1, in <lambda>\\nZeroDivisionError: division by zero\\n')
    'ZeroDivisionError: division by zero'
    """
    text = text.split("JVM stacktrace:", 1)[0]
    if "Traceback (most recent call last):" not in text:
        return None
    lines = [ln.rstrip() for ln in text.split("Traceback (most recent call last):")[-1].splitlines()]
    found = [ln for ln in lines if ln and not ln[0].isspace()]
    return found[-1].strip() if found else None


def _root_cause(e: BaseException) -> str:
    """The first line of the innermost Java cause of a Spark error ("Error while instantiating
    'SessionStateBuilder':" hides the setting that was refused), or of the error itself."""
    java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    try:
        while java is not None and java.getCause() is not None:
            java = java.getCause()
        return first_line(str(java.getMessage() or java.toString())) if java is not None else java_message(e)
    except Exception:  # noqa: BLE001 - the JVM is gone: Python's text
        return first_line(e)


def session_starts(spark) -> None:
    """Has a classic session build its state, which Spark does lazily, on first use: a session whose
    settings it cannot start with (``spark.sql.shuffle.partitions=abc``) fails here, saying so,
    rather than as the first thing done with it (reading a table, say). A Connect session is the
    server's."""
    if is_connect(spark):
        return
    try:
        spark._jsparkSession.sessionState()
    except Exception as e:  # noqa: BLE001 - any Spark error: the session is unusable
        raise ArrnfSetupError(f"the Spark session does not start with these settings: {_root_cause(e)}") from None


def plan(df) -> None:
    """Has Spark plan ``df``, optimized and physical plans, without running it: a query that fails
    while planned (under ANSI, a division by zero in a constant Spark folds) raises Spark's error here."""
    df._jdf.queryExecution().executedPlan()


def planned(df, so: str) -> None:
    """Plans ``df``; a query that fails while Spark plans it has no plan (``so``: what that stops)
    and gets :class:`ArrnfPlanningError`, carrying Spark's error, rather than a failure of ArrNF's own."""
    try:
        plan(df)
    except ArrnfSetupError:
        raise
    except Exception as e:  # noqa: BLE001 - Spark's error, whichever: the query's
        raise ArrnfPlanningError(f"the query failed while Spark planned it, before it ran: {so}: "
                                 f"{error_text(e)}", e) from None


def to_measure(spark, df):
    """``df`` to run once and measure: itself where its plan has not run, else its query planned
    afresh. The SQL metrics of an executed plan add up each time it runs (measured after a
    ``collect()``, a query read twice its rows and memory)."""
    from pyspark.sql.classic.dataframe import DataFrame

    return DataFrame(_api(spark._jvm).toMeasure(df._jdf), spark)


def unknown_setting(spark, key: str):
    """Why ``key`` is none of the extension's settings (with the one it probably meant), or None."""
    said = _api(spark._jvm).unknownSetting(key)
    return None if said is None else str(said)


def query_dataframe(spark, text: str):
    """The DataFrame of a query's text, analyzed and never run: the JVM refuses a command (``DROP
    TABLE``, ``INSERT`` ...), which ``spark.sql`` would run at once, before anything runs. Analysis
    errors come back as PySpark's own exceptions."""
    from pyspark.sql.classic.dataframe import DataFrame

    return DataFrame(_api(spark._jvm).query(spark._jsparkSession, text), spark)


def program_json(spark, df, name: str) -> str:
    """The ArrNF program of ``df`` as the JVM's JSON (docs/arrnf-json.md); on a Spark Connect client,
    the server's ``arrnf_json`` (connect.py)."""
    if is_connect(df):
        from . import connect

        return connect.program_json(spark, df, name)
    api = _api(spark._jvm)
    try:
        return _joined(api.jsonPieces(df._jdf, name))
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not normalize the plan: {java_message(e)}") from None


def run(spark, df) -> int:
    """Runs ``df`` on every partition without bringing rows to the driver; its row count. A failing
    query raises its own (PySpark-converted) exception: the caller records it."""
    return int(_api(spark._jvm).run(df._jdf))


def measured_json(spark, df, name: str, error: str | None, result_rows: int | None) -> str:
    """The measured report of ``df`` after it ran, or failed with ``error`` (docs/arrnf-measured.md).
    The JVM answers ``{"error": ...}`` instead of throwing."""
    api = _api(spark._jvm)
    try:
        return _joined(api.measuredJsonPieces(df._jdf, name, error, result_rows))
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not measure the plan: {java_message(e)}") from None


def stream_json(query, name: str) -> str:
    """The measured report of a streaming query's last micro-batch (``{"error": ...}`` before one ran)."""
    from pyspark import SparkContext

    if is_connect(query):
        raise needs_classic("measure_stream()", MEASURE_ON_CONNECT)
    # A StreamingQuery does not name its session; the JVM of the running context is the one it uses.
    api = _api(SparkContext._jvm)
    try:
        return _joined(api.streamJsonPieces(query._jsq, name))
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not measure the stream: {java_message(e)}") from None


def rule_reasons(spark, df) -> list[str]:
    """Why the rules fired (or EagerAggregation declined) in ``df``'s optimized plan, a line each."""
    return [str(x) for x in _api(spark._jvm).ruleReasons(df._jdf)]


def rule_failures(spark) -> dict[str, int]:
    """How often each rule (and the normalizer) failed and was skipped since the JVM started."""
    m = _api(spark._jvm).ruleFailures()
    return {str(k): int(m.get(k)) for k in m.keySet().toArray()}


def collect_statistics(spark, tables: list[str]) -> list[str]:
    """Runs the sketch pass over ``tables`` in ``spark``'s JVM (a Connect server's, through its SQL
    function ``arrnf_statistics``): one line per table."""
    if is_connect(spark):
        if not tables:
            return []
        names = ", ".join("'" + t.replace("\\", "\\\\").replace("'", "\\'") + "'" for t in tables)
        return [r[1] for r in spark.sql(f"SELECT * FROM arrnf_statistics({names})").collect()]
    return [str(x) for x in _api(spark._jvm).collectStatistics(spark._jsparkSession, list(tables))]


def clear_statistics(spark) -> None:
    """Forgets every sketch taken in ``spark``'s JVM."""
    if is_connect(spark):
        raise needs_classic("forget_statistics()", STATISTICS_ON_CONNECT)
    _api(spark._jvm).clearStatistics()
