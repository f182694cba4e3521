"""Session set-up: put the extension into a ``SparkSession.Builder`` or start a ready local session.

``spark.sql.extensions`` is a static setting: it only takes effect when the JVM session is made.
So ``configure`` must come before ``getOrCreate()``; on a running session it warns and says how to
fix it.

    >>> from pyspark.sql import SparkSession
    >>> import pyspark_arrnf
    >>> spark = pyspark_arrnf.configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings

from . import _jvm
from .errors import ArrnfSetupError
from .jar import built_for, jar_info

EXTENSION_CLASS = "arrnf.ArrnfExtension"
EXPLAIN_PROVIDER_CLASS = "arrnf.ArrnfExplainProvider"
ENABLED = "spark.arrnf.enabled"


def _append(existing: str | None, value: str) -> str:
    """Appends ``value`` to a comma-separated Spark list setting unless it is there already."""
    items = [x.strip() for x in (existing or "").split(",") if x.strip()]
    return ",".join(items if value in items else items + [value])


def check_java() -> None:
    """Raises a clear error when no Java 17+ is there for Spark to start."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise ArrnfSetupError(
            "No Java found (JAVA_HOME unset and no 'java' on PATH). Spark 4.3 needs Java 17 or 21: "
            "install one (e.g. 'apt-get install openjdk-17-jdk-headless') or set JAVA_HOME."
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    if not m or int(m.group(1)) < 17:
        found = m.group(1) if m else out.strip().splitlines()[:1]
        raise ArrnfSetupError(
            f"Java {found} found at {java}; Spark 4.3 needs Java 17 or 21. Point JAVA_HOME at a JDK 17."
        )


def _active_session():
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def configure(builder, explain: bool = True):
    """Adds the extension to a ``SparkSession.Builder`` and returns the builder.

    Sets ``spark.jars`` to include the bundled jar, appends ``arrnf.ArrnfExtension`` to any
    existing ``spark.sql.extensions`` and, with ``explain=True``, the ArrNF section provider to
    ``spark.sql.extendedExplainProviders``.
    """
    import pyspark

    info = jar_info()
    built_for(pyspark.__version__, info)
    if _active_session() is not None:
        warnings.warn(
            "pyspark-arrnf: a SparkSession is already running, and spark.sql.extensions is static, so "
            "the extension will not load into it. Stop it first (spark.stop()) and build the session "
            "again with pyspark_arrnf.configure(builder), or start a new Python process.",
            RuntimeWarning,
            stacklevel=2,
        )
    options = getattr(builder, "_options", {})
    builder.config("spark.jars", _append(options.get("spark.jars"), str(info.path)))
    builder.config("spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION_CLASS))
    if explain:
        builder.config(
            "spark.sql.extendedExplainProviders",
            _append(options.get("spark.sql.extendedExplainProviders"), EXPLAIN_PROVIDER_CLASS),
        )
    return builder


def session(master: str = "local[2]", app_name: str = "pyspark-arrnf", **conf):
    """A ready SparkSession with the extension loaded. Keyword settings use ``_`` for ``.``:
    ``session(spark_sql_shuffle_partitions=4)``; or pass a dict as ``conf={"spark.x": "y"}``."""
    from pyspark.sql import SparkSession

    check_java()
    extra = dict(conf.pop("conf", {}) or {})
    extra.update({k.replace("_", "."): v for k, v in conf.items()})
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in extra.items():
        builder = builder.config(k, str(v))
    spark = configure(builder).getOrCreate()
    built_for(spark.version)
    if not is_loaded(spark):
        warnings.warn(
            "pyspark-arrnf: the session was created before the extension was configured, so it is not "
            "loaded. Call spark.stop() and pyspark_arrnf.session() again.",
            RuntimeWarning,
            stacklevel=2,
        )
    return spark


def is_loaded(spark) -> bool:
    """Whether the extension is among the session's ``spark.sql.extensions``."""
    exts = spark.sparkContext.getConf().get("spark.sql.extensions", "")
    return EXTENSION_CLASS in [x.strip() for x in exts.split(",")]


def set_enabled(spark, enabled: bool) -> None:
    """Turns every rewrite of the extension on or off in a live session (``spark.arrnf.enabled``)."""
    spark.conf.set(ENABLED, "true" if enabled else "false")


def rule_failures(spark) -> dict[str, int]:
    """How often each rule failed (and was skipped) since the JVM started."""
    return _jvm.rule_failures(spark)
