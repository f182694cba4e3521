"""pyspark-arrnf: Spark queries in Arrangement Normal Form, and ring laws that make them cheaper.

Start here::

    import pyspark_arrnf
    spark = pyspark_arrnf.session()                    # a local session with the extension loaded
    builder = pyspark_arrnf.configure(SparkSession.builder)  # or add it to your own builder
    print(pyspark_arrnf.arrnf(df))                     # a DataFrame (or SQL text) in ArrNF

Modules: ``normalize`` (``arrnf()``), ``measure`` (``measure()``, streams, charts), ``model`` (the
program's dataclasses and JSON), ``views`` (HTML, Graphviz), ``sql`` (the program as SQL), ``session``
and ``jar`` (set-up), ``_jvm`` (every call into the JVM), ``cli`` (the ``arrnf`` command).
"""
from . import views
from ._version import __version__
from .errors import ArrnfError, ArrnfPlanningError, ArrnfSetupError
from .jar import jar_info, jar_path
from .measure import measure, measure_stream
from .model import Program
from .normalize import arrnf
from .session import configure, is_loaded, rule_failures, session, set_enabled
from .statistics import forget_statistics, statistics

__all__ = [
    "ArrnfError",
    "ArrnfPlanningError",
    "ArrnfSetupError",
    "Program",
    "arrnf",
    "configure",
    "is_loaded",
    "jar_info",
    "jar_path",
    "rule_failures",
    "session",
    "set_enabled",
    "statistics",
    "forget_statistics",
]


# Program's pictures and SQL are made by views.py and sql.py, which read the model: attached here,
# model.py needs neither (no import cycle). sql.py loads sqlglot, so it is imported when first used.
def _to_sql(self, dialect: str = "spark", pretty: bool = True) -> str:
    """The program as one SQL statement: a CTE per block (see :func:`pyspark_arrnf.sql.to_sql`)."""
    from .sql import to_sql

    return to_sql(self, dialect=dialect, pretty=pretty)


Program._repr_html_ = views.to_html
Program.to_dot = views.to_dot
Program.to_svg = views.to_svg
Program.to_sql = _to_sql
