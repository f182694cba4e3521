"""pyspark-arrnf: Spark queries in Arrangement Normal Form, and ring laws that make them cheaper.

Start here::

    import pyspark_arrnf
    spark = pyspark_arrnf.session()                    # a local session with the extension loaded
    builder = pyspark_arrnf.configure(SparkSession.builder)  # or add it to your own builder
    print(pyspark_arrnf.arrnf(df))                     # a DataFrame (or SQL text) in ArrNF
"""
from .errors import ArrnfSetupError
from .jar import jar_info, jar_path
from .measure import measure, measure_stream
from .plan import ArrnfError, Program, arrnf
from .session import configure, is_loaded, rule_failures, session, set_enabled

__version__ = "0.1.0"

__all__ = [
    "ArrnfError",
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
]
