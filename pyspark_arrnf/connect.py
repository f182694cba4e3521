"""The package on a Spark Connect client, which has no JVM of its own (no ``df._jdf``, no ``spark._jvm``).

The server, started with the extension, answers through the extension's SQL functions: ``arrnf(df)``
puts the DataFrame into a temporary view of its session, asks ``arrnf_json`` for that view's program
and drops the view, so a Connect client gets the same :class:`~pyspark_arrnf.model.Program` as a
classic session. What needs the driver's JVM (``measure``: the SQL metrics of the executed plan;
``statistics``; ``rule_failures``) says so in one line and names what works instead.

>>> print(server_settings("/opt/jars/arrnf.jar"))
--jars /opt/jars/arrnf.jar --conf spark.sql.extensions=arrnf.ArrnfExtension --conf spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider
>>> is_connect(object())
False
"""
from __future__ import annotations

import uuid

from .errors import ArrnfError, ArrnfPlanningError, ArrnfSetupError, first_line

# The extension's classes, as spark.sql.extensions and spark.sql.extendedExplainProviders name them.
EXTENSION_CLASS = "arrnf.ArrnfExtension"
EXPLAIN_PROVIDER_CLASS = "arrnf.ArrnfExplainProvider"


def is_connect(obj) -> bool:
    """Whether a session, DataFrame or streaming query is a Spark Connect client's (no JVM here)."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def server_settings(jar: str) -> str:
    """The options a Spark Connect server (``start-connect-server.sh``, ``spark-submit``) needs for
    the extension and its explain section."""
    return (f"--jars {jar} --conf spark.sql.extensions={EXTENSION_CLASS} "
            f"--conf spark.sql.extendedExplainProviders={EXPLAIN_PROVIDER_CLASS}")


def _server_hint() -> str:
    try:
        from .jar import jar_path

        jar = str(jar_path())
    except ArrnfSetupError:
        jar = "<the pyspark-arrnf jar>"
    return f"start the Spark Connect server with {server_settings(jar)}"


def needs_classic(what: str, instead: str) -> ArrnfError:
    """The one-line error of a call that needs the driver's JVM, made on a Connect client."""
    return ArrnfError(f"{what} needs a classic SparkSession (the driver's JVM in this Python process); "
                      f"this is a Spark Connect client. {instead}")


def quoted_name(name: str) -> str:
    """``name`` as one SQL identifier: `` `my table` ``, `` `a.b` `` (a view of that name, not ``b`` in ``a``)."""
    return "`" + name.replace("`", "``") + "`"


def _arrnf_json(spark, query: str, name: str) -> str:
    """The server's ``arrnf_json(query, name)``; one clear error when it cannot answer."""
    # Connect's own functions: pyspark.sql.functions picks classic or Connect by an environment
    # variable, which a process holding both kinds of session (tests, a driver) does not set.
    from pyspark.sql.connect import functions as F

    try:
        return spark.range(1).select(F.call_function("arrnf_json", F.lit(query), F.lit(name))).first()[0]
    except Exception as e:  # noqa: BLE001 - a gRPC / analysis error from the server
        message = first_line(e)
        if "arrnf_json: " in message and "is a command" in message and "not a query" in message:
            raise ArrnfError(message.split("arrnf_json: ", 1)[-1]) from None
        if "arrnf_json: the query does not analyze" in message:
            raise ArrnfError("the query does not analyze, so it has no plan to normalize: "
                             + message.split("so it has no ArrNF program: ", 1)[-1]) from None
        if "arrnf_json: the query failed while Spark planned it" in message:
            raise ArrnfPlanningError("the query failed while Spark planned it, before it ran: there is no plan to "
                                     "normalize: " + message.split("so it has no ArrNF program: ", 1)[-1], e) from None
        if "UNRESOLVED_ROUTINE" in message and "arrnf_json" in message:
            raise ArrnfSetupError(
                f"the Spark Connect server does not have the pyspark-arrnf extension ({message}); "
                f"{_server_hint()}") from None
        raise ArrnfError(f"could not normalize the plan: {message}") from None


def program_json_of_text(spark, query: str, name: str) -> str:
    """The ArrNF program of a query's text, planned by the server (which refuses a command: it is
    never run)."""
    return _arrnf_json(spark, query, name)


def program_json(spark, df, name: str) -> str:
    """The ArrNF program of a Connect DataFrame: the server's ``arrnf_json`` of a temporary view of it,
    in the DataFrame's own session (``spark`` may be another, as a classic session allows)."""
    spark = getattr(df, "sparkSession", None) or spark
    view = f"arrnf_{uuid.uuid4().hex}"
    try:
        df.createOrReplaceTempView(view)
    except Exception as e:  # noqa: BLE001 - the DataFrame does not analyze on the server
        raise ArrnfError(f"the query does not analyze, so it has no plan to normalize: {first_line(e)}") from None
    try:
        return _arrnf_json(spark, f"SELECT * FROM {quoted_name(view)}", name)
    finally:
        try:
            spark.catalog.dropTempView(view)
        except Exception:  # noqa: BLE001 - the connection is gone: the server drops the session's views
            pass


def remote_builder_warning(url: str) -> str:
    """What ``configure(builder)`` says for a builder of a remote Spark Connect server."""
    return (f"pyspark-arrnf: this builder connects to a Spark Connect server ({url}); the extension runs in "
            f"the server, and the client cannot load it, so the builder was left unchanged. On the server: "
            f"{_server_hint()}. Then arrnf(df) works from this client.")
