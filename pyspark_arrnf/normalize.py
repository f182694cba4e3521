"""``arrnf(df_or_sql)``: a query's ArrNF program, normalized in the JVM and read into :mod:`.model`.

The program has ``blocks`` (dependency order), ``str()`` for the text form, ``to_json()``,
``cost()`` / ``cost_frame()``, a notebook view and a Graphviz picture (views.py) and ``to_sql()``.

>>> p = arrnf("select k, count(*) from range(10) t(k) group by k")  # doctest: +SKIP
>>> print(p)                                                          # doctest: +SKIP
"""
from __future__ import annotations

from . import _jvm, connect
from .connect import is_connect
from .errors import _check_call, _check_query
from .frames import dataframe, session_of
from .model import Program


def arrnf(df_or_sql, spark=None, name: str = "query") -> Program:
    """The ArrNF program of a DataFrame, or of a SQL text run in ``spark`` (the active session when
    not given). ``name`` names the result block (its helpers are ``<name>.tmpN``). Raises
    :class:`~pyspark_arrnf.errors.ArrnfError` when the query does not analyze or cannot be normalized,
    a TypeError when ``df_or_sql`` is neither a DataFrame nor text."""
    _check_query(df_or_sql, "arrnf()")
    _check_call(df_or_sql, spark, name, "arrnf()")
    spark = session_of(df_or_sql, spark)
    if isinstance(df_or_sql, str) and is_connect(spark):
        return Program.from_json(connect.program_json_of_text(spark, df_or_sql, name))
    df, spark = dataframe(df_or_sql, spark, "so it has no plan to normalize")
    if not is_connect(spark) and not df.isStreaming:  # (the server's arrnf_json says it in its own words;
        _jvm.planned(df, "there is no plan to normalize")  # a stream is not planned before it starts)
    return Program.from_json(_jvm.program_json(spark, df, name))
