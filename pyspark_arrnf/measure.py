"""Measured arrangements: the ArrNF program of a query that ran, with Spark's own figures per block.

``measure(df)`` runs the query, then reads the SQL metrics of its FINAL (adaptive) physical plan:
every stateful operator (sort, aggregate, join, window, shuffle exchange, broadcast) is attributed to
the ArrNF block it realizes, or listed as unattributed with the reason. Reused exchanges and cached
relations are ``shared``: an existing arrangement read again, not new state. Each block gets a
:class:`Measured` (rows, peak memory, spill, shuffle bytes, ratio of measured to estimated bytes);
the program gets a :class:`Measurement` (all operators, totals, and whether the query failed).

``measure_stream(query)`` does the same for a running ``df.writeStream`` query from the state-store
metrics of its last micro-batch (the operators of ``lastProgress.stateOperators``), and
``watch_stream(query, batches)`` yields one report per new micro-batch.

Reading a report back needs no Spark:

>>> from pyspark_arrnf.plan import Program
>>> p = Program.from_json(EXAMPLE_MEASURED_JSON)
>>> p["q.tmp0"].measured.peak_memory, p["q.tmp0"].measured.ratio
(800, 2.0)
>>> p.measurement.status, [o.kind for o in p.measurement.operators]
('ok', ['aggregate', 'exchange'])
>>> Program.from_json(p.to_json()).to_json() == p.to_json()
True
>>> print(p["q.tmp0"].measured)
measured: rows=10  peak=800B  spill=0B  shuffle=120B  ratio=2.00 (operators 0, 1)
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Optional

from .plan import ArrnfError, Program, _human


@dataclass
class Operator:
    """A stateful physical operator of the final plan and its SQL metrics.

    ``kind``: sort, aggregate, join, window, exchange, broadcast, cache, or state (streaming);
    ``block``: the block it realizes (None: unattributed, ``reason`` says why); ``shared``: a reused
    exchange or cached relation (``reuses``: the id of the operator that built it)."""

    id: int
    node: str
    kind: str
    block: Optional[str]
    shared: bool
    reuses: Optional[int]
    reason: str
    rows: Optional[int]
    peak_memory: int
    spill: int
    shuffle_bytes: int
    metrics: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"id": self.id, "node": self.node, "kind": self.kind, "block": self.block, "shared": self.shared,
                "reuses": self.reuses, "reason": self.reason, "rows": self.rows, "peak_memory": self.peak_memory,
                "spill": self.spill, "shuffle_bytes": self.shuffle_bytes, "metrics": dict(self.metrics)}

    @classmethod
    def from_dict(cls, d: dict) -> "Operator":
        return cls(**{k: d[k] for k in ("id", "node", "kind", "block", "shared", "reuses", "reason", "rows",
                                        "peak_memory", "spill", "shuffle_bytes")}, metrics=dict(d.get("metrics", {})))


@dataclass
class Measured:
    """A block's measured figures: sums over its own operators (``operators``, ids), the largest row
    count among them, and ``ratio`` = measured peak memory / estimated bytes (None without an estimate)."""

    operators: list[int]
    shared_operators: list[int]
    rows: Optional[int]
    peak_memory: int
    spill: int
    shuffle_bytes: int
    ratio: Optional[float]

    def __str__(self) -> str:
        parts = []
        if self.rows is not None:
            parts.append(f"rows={_human(self.rows, '')}")
        parts += [f"peak={_human(self.peak_memory, 'B')}", f"spill={_human(self.spill, 'B')}",
                  f"shuffle={_human(self.shuffle_bytes, 'B')}"]
        if self.ratio is not None:
            parts.append(f"ratio={self.ratio:.2f}")
        ops = ", ".join(map(str, self.operators)) or "none"
        extra = f"; shared {', '.join(map(str, self.shared_operators))}" if self.shared_operators else ""
        return "measured: " + "  ".join(parts) + f" (operators {ops}{extra})"

    def to_dict(self) -> dict:
        return {"operators": list(self.operators), "shared_operators": list(self.shared_operators), "rows": self.rows,
                "peak_memory": self.peak_memory, "spill": self.spill, "shuffle_bytes": self.shuffle_bytes,
                "ratio": self.ratio}

    @classmethod
    def from_dict(cls, d: dict) -> "Measured":
        return cls(list(d["operators"]), list(d["shared_operators"]), d["rows"], int(d["peak_memory"]),
                   int(d["spill"]), int(d["shuffle_bytes"]), None if d["ratio"] is None else float(d["ratio"]))


@dataclass
class Measurement:
    """What a run measured: every stateful operator, the unattributed ones (ids), totals over the
    attributed non-shared operators, ``status`` (ok or failed, with ``error``), ``final_plan`` (the
    adaptive plan had finished), ``result_rows`` and, for a stream, ``batch_id``. ``rows`` holds the
    collected result when ``measure(..., collect=True)``; it is not part of the JSON."""

    operators: list[Operator]
    unattributed: list[int]
    peak_memory: int
    unattributed_peak_memory: int
    spill: int
    shuffle_bytes: int
    status: str = "ok"
    error: Optional[str] = None
    final_plan: Optional[bool] = None
    result_rows: Optional[int] = None
    batch_id: Optional[int] = None
    rows: Optional[list] = field(default=None, repr=False, compare=False)

    def operator(self, i: int) -> Operator:
        return self.operators[i]

    def summary(self) -> str:
        s = (f"-- measured: {len(self.operators)} stateful operators, {len(self.unattributed)} unattributed, "
             f"peak memory {_human(self.peak_memory, 'B')} attributed + "
             f"{_human(self.unattributed_peak_memory, 'B')} unattributed, spill {_human(self.spill, 'B')}, "
             f"shuffle {_human(self.shuffle_bytes, 'B')}")
        if self.batch_id is not None:
            s += f", micro-batch {self.batch_id}"
        if self.result_rows is not None:
            s += f", {self.result_rows} result rows"
        if self.status != "ok":
            s += f"\n-- the query FAILED: {self.error}"
        lines = [s]
        for i in self.unattributed:
            o = self.operators[i]
            lines.append(f"--   unattributed #{o.id} {o.node}: {o.reason}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        d = {"operators": [o.to_dict() for o in self.operators], "unattributed": list(self.unattributed),
             "peak_memory": self.peak_memory, "unattributed_peak_memory": self.unattributed_peak_memory,
             "spill": self.spill, "shuffle_bytes": self.shuffle_bytes, "status": self.status, "error": self.error,
             "final_plan": self.final_plan, "result_rows": self.result_rows}
        if self.batch_id is not None:
            d["batch_id"] = self.batch_id
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        return cls([Operator.from_dict(o) for o in d["operators"]], list(d["unattributed"]), int(d["peak_memory"]),
                   int(d["unattributed_peak_memory"]), int(d["spill"]), int(d["shuffle_bytes"]),
                   d.get("status", "ok"), d.get("error"), d.get("final_plan"), d.get("result_rows"),
                   d.get("batch_id"))


def _first_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[0].strip() if lines else type(e).__name__


def _parse(text: str) -> dict:
    d = json.loads(text)
    if "error" in d and "format" not in d:
        raise ArrnfError(f"could not measure: {d['error']}")
    return d


def _dataframe(df_or_sql, spark):
    """A DataFrame and its session from a DataFrame or a SQL text (the active session by default)."""
    if not isinstance(df_or_sql, str):
        return df_or_sql, spark or df_or_sql.sparkSession
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            raise ArrnfError("no active SparkSession: pass spark=..., or start one with pyspark_arrnf.session()")
    try:
        return spark.sql(df_or_sql), spark
    except Exception as e:  # noqa: BLE001 - AnalysisException, ParseException
        raise ArrnfError(f"the query does not analyze, so it cannot be measured: {_first_line(e)}") from None


def measure(df_or_sql, spark=None, name: str = "query", collect: bool = False) -> Program:
    """Runs the query and returns its ArrNF program with measured figures (``block.measured``,
    ``program.measurement``). ``collect=True`` brings the rows to the driver (``measurement.rows``);
    otherwise every partition is computed and the rows are counted. A query that fails is measured
    as far as it ran: ``measurement.status == "failed"`` and ``measurement.error`` say why.

    >>> p = measure("select k % 3 g, count(*) from range(100) t(k) group by 1")   # doctest: +SKIP
    >>> print(p)                                                                   # doctest: +SKIP
    """
    df, spark = _dataframe(df_or_sql, spark)
    m = spark._jvm.arrnf.normal.Measure
    rows, count, error = None, None, None
    try:
        if collect:
            rows = df.collect()
            count = len(rows)
        else:
            count = int(m.run(df._jdf))
    except Exception as e:  # noqa: BLE001 - the query failed while running: keep what was measured
        error = f"{type(e).__name__}: {_first_line(e)}"
    try:
        d = _parse(m.json(df._jdf, name))
    except ArrnfError:
        raise
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        raise ArrnfError(f"could not measure the plan: {_first_line(e)}") from None
    d["measurement"].update({"status": "failed" if error else "ok", "error": error, "result_rows": count})
    p = Program.from_dict(d)
    p.measurement.rows = rows
    return p


def measure_stream(query, name: str = "query", attempts: int = 20) -> Program:
    """The measured program of a running streaming query's last micro-batch: per block, the state
    rows and memory of its state-store operators (the operators of ``query.lastProgress
    .stateOperators``, in that order; rows = numRowsTotal, peak memory = memoryUsedBytes).

    >>> q = df.writeStream.format("memory").queryName("t").outputMode("complete").start()  # doctest: +SKIP
    >>> print(measure_stream(q))                                                               # doctest: +SKIP
    """
    from pyspark.sql import SparkSession

    jvm = SparkSession.getActiveSession()._jvm
    for _ in range(max(1, attempts)):
        progress = query.lastProgress
        d = _parse(jvm.arrnf.normal.Measure.streamJson(query._jsq, name))
        states = (progress or {}).get("stateOperators", [])
        ms = d["measurement"]
        if progress is not None and progress.get("batchId") == ms.get("batch_id") and len(states) == len(ms["operators"]):
            for o, s in zip(ms["operators"], states):
                o["rows"], o["peak_memory"] = int(s["numRowsTotal"]), int(s["memoryUsedBytes"])
            _resum(d)
            break
        time.sleep(0.25)  # a micro-batch is running: its progress is not reported yet
    exc = query.exception()
    if exc is not None:
        d["measurement"].update({"status": "failed", "error": _first_line(exc)})
    return Program.from_dict(d)


def _resum(d: dict) -> None:
    """Recomputes block and program sums after the operators' figures changed."""
    ops = d["measurement"]["operators"]
    for b in d["blocks"]:
        mine = [o for o in ops if o["block"] == b["name"] and not o["shared"]]
        m = b["measured"]
        m["peak_memory"] = sum(o["peak_memory"] for o in mine)
        rows = [o["rows"] for o in mine if o["rows"] is not None]
        m["rows"] = max(rows) if rows else None
        est = b["cost"]["bytes"]
        m["ratio"] = m["peak_memory"] / est if est and mine else None
    att = [o for o in ops if o["block"] is not None and not o["shared"]]
    d["measurement"]["peak_memory"] = sum(o["peak_memory"] for o in att)
    d["measurement"]["unattributed_peak_memory"] = sum(
        o["peak_memory"] for o in ops if o["block"] is None and not o["shared"])


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
    """The measured operators as a pandas DataFrame (one row each)."""
    import pandas as pd

    cols = ["id", "node", "kind", "block", "shared", "reuses", "reason", "rows", "peak_memory", "spill",
            "shuffle_bytes"]
    ops = p.measurement.operators if p.measurement else []
    return pd.DataFrame([{c: getattr(o, c) for c in cols} for o in ops], columns=cols)


def plot(p: Program, path: Optional[str] = None, fmt: Optional[str] = None):
    """A bar chart of estimated vs measured bytes per block (blocks with an arrangement or measured
    state). Returns the matplotlib Figure; with ``path`` also saves it (PNG or SVG by the suffix, or
    ``fmt``).

    >>> fig = plot(Program.from_json(EXAMPLE_MEASURED_JSON))
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['estimated', 'measured peak memory']
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = [b for b in p.blocks if b.cost.arrangements or (b.measured and (b.measured.operators or b.measured.peak_memory))]
    names = [b.name for b in rows]
    est = [b.cost.bytes or 0 for b in rows]
    meas = [b.measured.peak_memory if b.measured else 0 for b in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(rows) + 2), 4.5))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], est, width=0.4, label="estimated", color="#9ecae1")
    ax.bar([i + 0.2 for i in x], meas, width=0.4, label="measured peak memory", color="#fd8d3c")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("bytes")
    if any(v > 0 for v in est + meas):
        ax.set_yscale("symlog")
    ax.set_title(f"ArrNF {p.name}: estimated vs measured bytes per block")
    ax.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, format=fmt)
    plt.close(fig)
    return fig


def analyze_command(args, make_session) -> int:
    """``arrnf analyze QUERY.sql --tables DIR [--json] [--plot FILE]`` (cli.py): exit status 1 when
    the query failed (the report is printed all the same)."""
    import sys
    from pathlib import Path

    from .data import register_tables

    sql = Path(args.query).read_text() if args.query != "-" else sys.stdin.read()
    spark = make_session(args)
    if args.tables:
        register_tables(spark, args.tables)
    try:
        p = measure(sql.strip().rstrip(";"), spark=spark)
    except ArrnfError as e:
        print(f"arrnf: {e}", file=sys.stderr)
        return 2
    print(p.to_json(indent=2) if args.json else p)
    if args.plot:
        plot(p, args.plot)
        print(f"-- chart: {args.plot}", file=sys.stderr)
    return 1 if p.measurement.status != "ok" else 0


EXAMPLE_MEASURED_JSON = None  # filled below, from plan.EXAMPLE_JSON


def _example() -> str:
    from .plan import EXAMPLE_JSON

    d = json.loads(EXAMPLE_JSON)
    ops = [
        {"id": 0, "node": "HashAggregate", "kind": "aggregate", "block": "q.tmp0", "shared": False, "reuses": None,
         "reason": "logical link", "rows": 10, "peak_memory": 800, "spill": 0, "shuffle_bytes": 0,
         "metrics": {"numOutputRows": 10, "peakMemory": 800}},
        {"id": 1, "node": "Exchange", "kind": "exchange", "block": "q.tmp0", "shared": False, "reuses": None,
         "reason": "inherits from HashAggregate", "rows": 10, "peak_memory": 0, "spill": 0, "shuffle_bytes": 120,
         "metrics": {"shuffleBytesWritten": 120, "shuffleRecordsWritten": 10}}]
    d["blocks"][0]["measured"] = {"operators": [0, 1], "shared_operators": [], "rows": 10, "peak_memory": 800,
                                  "spill": 0, "shuffle_bytes": 120, "ratio": 2.0}
    d["blocks"][1]["measured"] = {"operators": [], "shared_operators": [], "rows": None, "peak_memory": 0,
                                  "spill": 0, "shuffle_bytes": 0, "ratio": None}
    d["measurement"] = {"operators": ops, "unattributed": [], "peak_memory": 800, "unattributed_peak_memory": 0,
                        "spill": 0, "shuffle_bytes": 120, "status": "ok", "error": None, "final_plan": True,
                        "result_rows": 3}
    return Program.from_dict(d).to_json()


EXAMPLE_MEASURED_JSON = _example()
