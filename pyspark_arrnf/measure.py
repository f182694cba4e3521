"""Measured arrangements: the ArrNF program of a query that ran, with Spark's own figures per block.

``measure(df)`` runs the query, then the JVM reads the SQL metrics of its FINAL (adaptive) physical
plan: every stateful operator (sort, aggregate, join, window, shuffle exchange, broadcast) is
attributed to the ArrNF block it realizes, or listed as unattributed with the reason. Reused
exchanges and cached relations are ``shared``: an existing arrangement read again, not new state.
Each block gets a :class:`~pyspark_arrnf.model.Measured` (rows and bytes of the state it holds,
peak memory allocated, spill, shuffle bytes, ratio of measured to estimated bytes); the program gets a :class:`~pyspark_arrnf.model.Measurement`
(all operators, totals, and whether the query failed), and its text shows them.

``measure_stream(query)`` does the same for a running ``df.writeStream`` query from the state-store
metrics of its last micro-batch (the operators of ``lastProgress.stateOperators``), and
``watch_stream(query, batches)`` yields one report per new micro-batch.

Reading a report back needs no Spark (model.py):

>>> from pyspark_arrnf.examples import EXAMPLE_MEASURED_JSON
>>> from pyspark_arrnf.model import Program
>>> p = Program.from_json(EXAMPLE_MEASURED_JSON)
>>> m = p["q.tmp0"].measured
>>> m.rows, m.bytes, m.peak_memory, round(m.ratio, 2)
(10, 800, 800, 6.67)
>>> print(p["q.tmp0"])
[q.tmp0]  arrangements=1 (Distinct: 1 reduce)  keys=[[#0{a}]]  spark=[hash aggregate (final), shuffle]  rows≈10 (estimate: file metadata, sketch)  bytes≈120B  why: distinct state, read by q
  -- measured: rows=10  bytes=800B  peak=800B  spill=0B  shuffle=120B  ratio=6.67 (operators 0, 1; state of 0 hash aggregate (final))
Distinct keys=[#0{a}] Get t
"""
from __future__ import annotations

import json
import textwrap
import time
from typing import Optional

from . import _jvm
from .connect import is_connect, needs_classic
from .errors import ArrnfError, ArrnfSetupError, _check_call, _check_query
from .frames import dataframe, session_of
from .model import Program


def _parse(text: str) -> dict:
    d = json.loads(text)
    if "error" in d and "format" not in d:
        raise ArrnfError(f"could not measure: {d['error']}")
    return d


def measure(df_or_sql, spark=None, name: str = "query", collect: bool = False) -> Program:
    """Runs the query and returns its ArrNF program with measured figures (``block.measured``,
    ``program.measurement``). ``collect=True`` brings the rows to the driver (``measurement.rows``);
    otherwise every partition is computed and the rows are counted. A query that fails when run is
    measured as far as it ran: ``measurement.status == "failed"`` and ``measurement.error`` say why.
    One that fails while Spark plans it (under ANSI, a division by zero in a constant Spark folds)
    never ran and has no plan to measure: an :class:`~pyspark_arrnf.errors.ArrnfPlanningError` (an ``ArrnfError``) says so, as for
    a query that does not analyze. A streaming DataFrame is measured once started: :func:`measure_stream`.

    >>> p = measure("select k % 3 g, count(*) from range(100) t(k) group by 1")   # doctest: +SKIP
    >>> print(p)                                                                   # doctest: +SKIP
    """
    _check_query(df_or_sql, "measure()")
    _check_call(df_or_sql, spark, name, "measure()")
    if is_connect(session_of(df_or_sql, spark)):  # before a text becomes a DataFrame: nothing runs
        raise needs_classic("measure()", _jvm.MEASURE_ON_CONNECT)
    df, spark = dataframe(df_or_sql, spark, "so it cannot be measured")
    if df.isStreaming:  # Spark would say only that it must be started with writeStream
        raise ArrnfError("measure() runs a batch query, and this one reads a stream: start it "
                         "(query = df.writeStream...start()) and call measure_stream(query)")
    _jvm.planned(df, "there is no plan to measure")
    df = _jvm.to_measure(spark, df)  # its own run: the metrics of a plan already run would add up
    rows, count, error = None, None, None
    try:
        if collect:
            rows = df.collect()
            count = len(rows)
        else:
            count = _jvm.run(spark, df)
    except ArrnfSetupError:
        raise
    except Exception as e:  # noqa: BLE001 - the query failed while running: keep what was measured
        error = _jvm.error_text(e)
    p = Program.from_dict(_parse(_jvm.measured_json(spark, df, name, error, count)))
    p.measurement.rows = rows
    return p


def measure_stream(query, name: str = "query", attempts: int = 20) -> Program:
    """The measured program of a running streaming query's last micro-batch: per block, the state
    rows and memory of its state-store operators (the operators of ``query.lastProgress
    .stateOperators``, in that order; rows = numRowsTotal, peak memory = memoryUsedBytes). While a
    micro-batch is running its progress is not reported yet (``measurement.settled`` is false): this
    asks again, up to ``attempts`` times a quarter of a second apart.

    >>> q = df.writeStream.format("memory").queryName("t").outputMode("complete").start()  # doctest: +SKIP
    >>> print(measure_stream(q))                                                               # doctest: +SKIP
    """
    if not (hasattr(query, "lastProgress") and hasattr(query, "isActive")):
        raise TypeError(f"measure_stream() takes a started streaming query (df.writeStream...start()), "
                        f"not {type(query).__name__}")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts= takes a whole number at least 1, not {attempts!r}")
    for i in range(attempts):
        if i:
            time.sleep(0.25)
        d = _parse(_jvm.stream_json(query, name))
        if d["measurement"].get("settled", True):
            break
    return Program.from_dict(d)


def watch_stream(query, batches: int = 3, timeout: float = 120.0, name: str = "query"):
    """Yields :func:`measure_stream` once per new micro-batch, ``batches`` times (or until ``timeout``
    seconds passed or the query stopped).

    >>> for p in watch_stream(q, batches=3):                 # doctest: +SKIP
    ...     print(p.measurement.batch_id, p.measurement.peak_memory)
    """
    seen, deadline = None, time.monotonic() + timeout
    while batches > 0 and time.monotonic() < deadline:
        progress = query.lastProgress
        if progress is not None and progress.get("batchId") != seen:
            p = measure_stream(query, name)
            if p.measurement.batch_id != seen:
                seen = p.measurement.batch_id
                batches -= 1
                yield p
                continue
        if not query.isActive:
            return
        time.sleep(0.2)


def operators_frame(p: Program):
    """The measured operators as a pandas DataFrame (one row each); counts some of which are unknown
    (a window's peak memory, a cartesian product's spill, an aggregate's rows under a LIMIT) as
    pandas' nullable ``Int64``."""
    import pandas as pd

    cols = ["id", "node", "kind", "what", "block", "shared", "reuses", "reason", "rows", "state_rows", "state_bytes",
            "peak_memory", "spill", "shuffle_bytes"]
    ops = p.measurement.operators if p.measurement else []
    frame = pd.DataFrame([{c: getattr(o, c) for c in cols} for o in ops], columns=cols)
    return frame.astype({c: "Int64" for c in ("reuses", "rows", "state_rows", "state_bytes", "peak_memory", "spill")})


def plot(p: Program, path: Optional[str] = None, fmt: Optional[str] = None):
    """A bar chart of estimated vs measured bytes of the state each block holds (blocks Spark builds
    state for; where the physical plan is unknown, blocks with an arrangement). Returns the matplotlib
    Figure; with ``path`` also saves it (PNG or SVG by the suffix, or ``fmt``).

    >>> from pyspark_arrnf.examples import EXAMPLE_MEASURED_JSON
    >>> fig = plot(Program.from_json(EXAMPLE_MEASURED_JSON))
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['estimated', 'measured']
    """
    try:
        import matplotlib
    except ImportError:
        raise ArrnfSetupError("plot() needs matplotlib: pip install 'pyspark-arrnf[viz]'") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = [b for b in p.blocks if (b.spark not in (None, "none") if b.spark is not None else b.cost.arrangements)]
    names = [b.name for b in rows]
    est = [b.cost.bytes for b in rows]
    meas = [b.measured.bytes if b.measured else None for b in rows]
    width = max(6.0, 0.6 * len(rows) + 2)
    fig, ax = plt.subplots(figsize=(width, 4.5))
    for offset, values, label, color in ((-0.2, est, "estimated", "#9ecae1"), (0.2, meas, "measured", "#fd8d3c")):
        _bars(ax, offset, values, label, color)
    ax.set_xticks(list(range(len(rows))))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("bytes")
    if any(v for v in est + meas):
        ax.set_yscale("symlog")
    # wrapped to the figure's width (about 9 characters an inch at the title's size), not cut off
    ax.set_title(textwrap.fill(f"ArrNF {p.name}: bytes of the state each block holds, estimated vs measured",
                               int(width * 9)))
    ax.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, format=fmt)
    plt.close(fig)
    return fig


def _bars(ax, offset: float, values: list, label: str, color: str) -> None:
    """A bar per known size; an unknown one is no bar of 0 bytes but the word "unknown" at the axis."""
    known = [(i + offset, v) for i, v in enumerate(values) if v is not None]
    ax.bar([x for x, _ in known], [v for _, v in known], width=0.4, label=label, color=color)
    for i, v in enumerate(values):
        if v is None:
            ax.text(i + offset, 0, "unknown", rotation=90, ha="center", va="bottom", fontsize=7, color="dimgray")


# ``pyspark_arrnf.measure`` is the function (the package exports it under its module's name), so the
# module's helpers also hang on it: ``pyspark_arrnf.measure.plot(p)`` works as well as
# ``from pyspark_arrnf.measure import plot``.
measure.plot = plot
measure.operators_frame = operators_frame
measure.measure_stream = measure_stream
measure.watch_stream = watch_stream
