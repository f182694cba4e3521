"""Session set-up: put the extension into a ``SparkSession.Builder`` or start a ready local session.

``spark.sql.extensions`` is a static setting: it only takes effect when the JVM session is made.
So ``configure`` must come before ``getOrCreate()``; on a running session it changes nothing, warns
once and says how to restart with the extension.

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
from .connect import EXPLAIN_PROVIDER_CLASS, EXTENSION_CLASS, is_connect, needs_classic, remote_builder_warning
from .errors import ArrnfSetupError
from .jar import built_for, jar_info

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


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """Warns with ``message`` the first time only: a notebook cell run again says it once."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


RESTART = (
    "To use the extension, restart the Python process (in a notebook: restart the kernel) and run "
    "spark = pyspark_arrnf.session() (or pyspark_arrnf.configure(SparkSession.builder).getOrCreate()) "
    "before any other Spark call."
)


def _jvm_without_extension() -> str | None:
    """Why the extension cannot load into this Python process's Spark JVM, or None when it can (no
    JVM yet, or one that has it). ``spark.sql.extensions`` and the jar apply only when the JVM and its
    first session start: set later they would not load, and the explain provider would point at a
    class the JVM does not have, breaking every ``df.explain("extended")``."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is not None:
        exts = sc.getConf().get("spark.sql.extensions", "") or ""
        if EXTENSION_CLASS in [x.strip() for x in exts.split(",")] and _jvm.process_jvm_has_api():
            return None
        return ("pyspark-arrnf: a SparkSession is already running in this Python process without the "
                "extension, and Spark loads extensions and their jar only when its JVM starts, so nothing "
                "was changed: the session works as before, without ArrNF. " + RESTART)
    if _jvm.process_jvm_has_api() is False:
        return ("pyspark-arrnf: this Python process's Spark JVM was started without the extension's jar (a "
                "session ran and was stopped), and a running JVM cannot take it, so nothing was changed. "
                + RESTART)
    return None


def _remote_url(options: dict) -> str | None:
    """The Spark Connect server a builder connects to, when it is a remote one (``sc://``)."""
    url = options.get("spark.remote", os.environ.get("SPARK_REMOTE"))
    return url if url and str(url).startswith("sc://") else None


def configure(builder, explain: bool = True):
    """Adds the extension to a ``SparkSession.Builder`` and returns the builder.

    Sets ``spark.jars`` to include the bundled jar, appends ``arrnf.ArrnfExtension`` to any
    existing ``spark.sql.extensions`` and, with ``explain=True``, the ArrNF section provider to
    ``spark.sql.extendedExplainProviders``.

    It changes nothing, and warns once saying what to do, where the settings cannot take effect: a
    builder of a remote Spark Connect server (the server must load the extension; the warning gives
    its options), or a Spark JVM already running in this process without the extension (restart
    the process). ``remote("local")`` starts its server here, with these settings: that works.
    """
    import pyspark

    info = jar_info()
    built_for(pyspark.__version__, info)
    options = getattr(builder, "_options", {})
    url = _remote_url(options)
    if url is not None:
        _warn_once(remote_builder_warning(url))
        return builder
    why_not = _jvm_without_extension()
    if why_not is not None:
        _warn_once(why_not)
        return builder
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
    ``session(spark_sql_shuffle_partitions=4)``; or pass a dict as ``conf={"spark.x": "y"}``.

    With a session already running in this process it returns that session: unchanged and with a
    warning when it lacks the extension (see :func:`configure`)."""
    from pyspark.sql import SparkSession

    check_java()
    extra = dict(conf.pop("conf", {}) or {})
    extra.update({k.replace("_", "."): v for k, v in conf.items()})
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in extra.items():
        builder = builder.config(k, str(v))
    spark = configure(builder).getOrCreate()
    built_for(spark.version)
    if not is_loaded(spark) and not _warned:
        _warn_once("pyspark-arrnf: the session has no ArrNF functions although it was configured with the "
                   "extension; the driver log says why Spark could not load arrnf.ArrnfExtension. " + RESTART)
    return spark


def is_loaded(spark) -> bool:
    """Whether the extension is loaded into ``spark`` (classic or Spark Connect): its SQL functions
    are registered in the session, which only the extension does."""
    try:
        return bool(spark.catalog.functionExists("arrnf_json"))
    except Exception:  # noqa: BLE001 - a stopped session or a lost connection: not loaded
        return False


def set_enabled(spark, enabled: bool) -> None:
    """Turns every rewrite of the extension on or off in a live session (``spark.arrnf.enabled``)."""
    if not isinstance(enabled, (bool, int)):  # "no" or "false" would read as true
        raise TypeError(f"set_enabled() takes True or False, not {enabled!r}")
    spark.conf.set(ENABLED, "true" if enabled else "false")


def rule_failures(spark) -> dict[str, int]:
    """How often each rule failed (and was skipped) since the JVM started."""
    if is_connect(spark):
        raise needs_classic("rule_failures()", "The server's driver log has one warning per failure "
                            "('pyspark-arrnf: rule … failed and was skipped').")
    return _jvm.rule_failures(spark)
