"""Pictures of an ArrNF program: a notebook HTML view and a Graphviz graph of blocks and arrangements.

Each block is a node (blocks Spark builds state for are filled boxes with what Spark builds, the
differential count and the size; blocks it streams or pipelines are plain outlines); an edge goes from a block to each block that reads it,
labelled with the role (join, input, subquery, cte). Tables and cached DataFrames are leaves.

A block's operator line is the first body line of the JVM's text of it (for a block of one
branch, the head and that branch): Python does not render the text form.

>>> from pyspark_arrnf.examples import EXAMPLE_JSON
>>> from pyspark_arrnf.model import Program
>>> dot = to_dot(Program.from_json(EXAMPLE_JSON))
>>> dot.splitlines()[0]
'digraph arrnf {'
>>> '"q.tmp0" -> "q"' in dot
True
>>> print(dot.splitlines()[3])
  "q.tmp0" [label="[q.tmp0]\\nDistinct keys=[#0{a}] Get t\\nspark=hash aggregate (final), shuffle\\narrangements=1\\nrows≈10 bytes≈120B", shape=box, style="filled", fillcolor="#fde2c4"];
"""
from __future__ import annotations

import html
import shutil

from .errors import ArrnfSetupError
from .model import Get, Program


def _human(n: int, unit: str) -> str:
    """Rows and bytes for the views' cells, rounded as the JVM's text form rounds them.

    >>> _human(999, ""), _human(73_449, ""), _human(2_349_000, "B")
    ('999', '73.4k', '2.3MB')
    """
    for d, s in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= d:
            tenths = (n * 10 + d // 2) // d
            return f"{tenths // 10}.{tenths % 10}{s}{unit}"
    return f"{n}{unit}"


def _cell(n: int | None, unit: str) -> str:
    """An estimated size for the table: ``≈`` before it, as in the text form; ``unknown`` where none.

    >>> _cell(73_449, ""), _cell(None, "B")
    ('≈73.4k', 'unknown')
    """
    return "unknown" if n is None else "≈" + _human(n, unit)


def _operator_line(b) -> str:
    """The first body line of the block's JVM text: after the header line and any measured line."""
    if b.head is None:
        return "(no arrangement)"
    for line in str(b).splitlines()[1:]:
        if not line.startswith("  -- "):
            return line
    return b.head.kind


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(s: str, width: int = 60) -> str:
    s = s if len(s) <= width else s[: width - 1] + "…"
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(p: Program) -> str:
    """The program as Graphviz DOT text."""
    lines = ["digraph arrnf {", "  rankdir=BT;", '  node [fontname="Helvetica", fontsize=10];']
    sources: dict[str, str] = {}
    for b in p.blocks:
        c = b.cost
        size = []
        if c.rows is not None:
            size.append(f"rows≈{_human(c.rows, '')}")
        elif c.arrangements:  # as the text form: rows nothing tells are unknown
            size.append("rows=unknown")
        if c.bytes is not None:
            size.append(f"bytes≈{_human(c.bytes, 'B')}")
        spark = b.spark
        label = "\\n".join([_label(f"[{b.name}]"), _label(_operator_line(b))] +
                           ([_label(f"spark={spark}")] if spark is not None else []) +
                           [f"arrangements={c.arrangements}"] +
                           ([" ".join(size)] if size else []) + ([f"shared={b.sharing}"] if b.sharing > 1 else []))
        # Filled: state Spark builds (where the physical plan is known), else the differential model's.
        builds = spark not in (None, "none") and any(not r["shared"] for r in b.realization)
        style = ('shape=box, style="filled", fillcolor="#fde2c4"' if (builds if spark is not None else c.arrangements)
                 else "shape=box, style=rounded")
        lines.append(f"  {_q(b.name)} [label=\"{label}\", {style}];")
        for leaf in b.leaves():
            if isinstance(leaf, Get) and leaf.source != "block":
                sources[leaf.name] = leaf.source
    for name, source in sources.items():
        shape = 'shape=cylinder, style=filled, fillcolor="#d7ecff"' if source == "cache" else "shape=cylinder"
        lines.append(f"  {_q('src:' + name)} [label=\"{_label(name)}\", {shape}];")
    for b in p.blocks:
        seen = set()
        for leaf in b.leaves():
            if isinstance(leaf, Get):
                src = leaf.name if leaf.source == "block" else "src:" + leaf.name
                if src not in seen:
                    seen.add(src)
                    lines.append(f"  {_q(src)} -> {_q(b.name)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(p: Program) -> str:
    """The picture as SVG; needs the ``graphviz`` Python package (``pip install 'pyspark-arrnf[viz]'``)
    and Graphviz's ``dot`` program (``apt-get install graphviz``). ``to_dot()`` needs neither."""
    try:
        import graphviz
    except ImportError:
        raise ArrnfSetupError("to_svg() needs the graphviz Python package: pip install 'pyspark-arrnf[viz]' "
                              "(or use to_dot() and render it elsewhere)") from None
    if shutil.which("dot") is None:
        raise ArrnfSetupError("to_svg() needs Graphviz's 'dot' program: apt-get install graphviz (or brew "
                              "install graphviz); or use to_dot() and render it elsewhere")

    return graphviz.Source(to_dot(p)).pipe(format="svg").decode("utf-8")


def to_html(p: Program) -> str:
    """A notebook view: the cost table, then each block's text."""
    e = html.escape
    rows = []
    for b in p.blocks:
        c = b.cost
        rows.append(
            "<tr>" + "".join(f"<td>{e(str(x))}</td>" for x in (
                b.name, b.head.kind if b.head else "", b.spark or "", c.arrangements, c.rule,
                " ".join("[" + ", ".join(k) + "]" for k in c.keys),
                _cell(c.rows, ""), _cell(c.bytes, "B"),
                c.source, b.sharing, c.why) + _measured_cells(p, b)) + "</tr>")
    table = ("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in (
        "block", "head", "spark", "arrangements", "rule", "keys", "rows", "bytes", "source", "sharing", "why") +
        (_MEASURED_HEADERS if p.measurement is not None else ())) +
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    rules = ("<ul>" + "".join(f"<li>{e(r)}</li>" for r in p.rules) + "</ul>") if p.rules else ""
    return (f"<div class=\"arrnf\"><p><b>ArrNF {e(p.name)}</b>: {e(p.totals())}</p>{rules}{table}"
            f"<pre>{e(str(p))}</pre></div>")




_MEASURED_HEADERS = ("measured rows", "measured bytes", "peak memory", "spill", "shuffle", "measured/estimated")


def _peak(m) -> str:
    """A block's peak memory: ``unknown`` where Spark measures none of its operators' memory, ``≥``
    where it measures some only."""
    if m.peak_memory is None:
        return "unknown"
    return ("≥" if m.peak_memory_unmeasured else "") + _human(m.peak_memory, "B")


def _spill(m) -> str:
    """A block's spill: ``≥`` (or ``unknown`` where nothing measured spilled) beside an operator
    whose spill Spark does not measure."""
    if not m.spill_unmeasured:
        return _human(m.spill, "B")
    return "unknown" if m.spill == 0 else "≥" + _human(m.spill, "B")


def _measured_cells(p: Program, b) -> tuple:
    """The measured columns of a block's row, when the program was measured."""
    if p.measurement is None:
        return ()
    m = b.measured
    if m is None:
        return ("",) * len(_MEASURED_HEADERS)
    return ("" if m.rows is None else _human(m.rows, ""), "" if m.bytes is None else _human(m.bytes, "B"),
            _peak(m), _spill(m),
            _human(m.shuffle_bytes, "B"), "" if m.ratio is None else f"{m.ratio:.2f}")
