"""ArrNF programs as plain Python data: typed dataclasses read from the JVM's JSON (docs/arrnf-json.md,
docs/arrnf-measured.md), and written back to the same JSON. No Spark is needed to read one.

The text form is the JVM's: ``str(program)`` and ``str(block)`` return the ``text`` fields of the
JSON; ``program.realized`` (stateful operators Spark runs) and ``program.arrangements`` (the seed's
differential count) are its fields; Python renders none of them.

>>> from pyspark_arrnf.examples import EXAMPLE_JSON, EXAMPLE_MEASURED_JSON
>>> p = Program.from_json(EXAMPLE_JSON)
>>> [b.name for b in p.blocks], p.arrangements
(['q.tmp0', 'q'], 1)
>>> p.blocks[0].head.kind, p.blocks[0].cost.arrangements, p.blocks[1].branches[0].negate
('Distinct', 1, True)
>>> print(p["q"])
[q]  arrangements=0 (no arrangement-forming operator)  spark=none  why: the query's result
Negate Project(#0{a}) Get q.tmp0
>>> p.to_json() == EXAMPLE_JSON
True
>>> m = Program.from_json(EXAMPLE_MEASURED_JSON)
>>> m["q.tmp0"].measured.peak_memory, m.measurement.status, [o.kind for o in m.measurement.operators]
(800, 'ok', ['aggregate', 'exchange'])
>>> m.to_json() == EXAMPLE_MEASURED_JSON
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import ClassVar, Optional, Union

FORMAT_VERSION = 3

_NO_TEXT = ("ArrNF JSON without \"text\" fields: the extension jar is older than this pyspark-arrnf package "
            "(the JVM writes the text form). Rebuild the jar ('bash dev/setup') or install matching versions.")


def _plain(v):
    """A field's JSON value: nested model objects written out, lists and dicts copied."""
    if isinstance(v, _Json):
        return v.to_dict()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _unknown(d: dict, cls, *also: str) -> dict:
    """The keys of ``d`` that ``cls`` does not read, each with the key it followed."""
    known = {f.name for f in fields(cls)} | set(also)
    keys = list(d)
    return {k: (keys[i - 1] if i else None, d[k]) for i, k in enumerate(keys) if k not in known}


@dataclass
class _Json:
    """Base of the model's classes: written to JSON by field, in field order (``_first`` first;
    ``_optional`` fields left out while None; ``_local`` ones never). ``unknown`` keeps the fields
    a newer jar added (fields may be added within a version) beside the key each followed, so
    that the JSON is written back unchanged."""

    unknown: dict = field(default_factory=dict, kw_only=True, repr=False)

    _first: ClassVar[tuple] = ()
    _optional: ClassVar[tuple] = ()
    _local: ClassVar[tuple] = ("unknown",)

    def _later(self, key: str):
        """A field a newer jar writes that this class keeps in ``unknown`` (None when absent)."""
        return self.unknown.get(key, (None, None))[1]

    def _later_ids(self, key: str) -> list:
        """A later field that lists operator ids ([] when absent)."""
        return list(self._later(key) or [])

    def _known(self) -> dict:
        names = [f.name for f in fields(self) if f.name not in self._local]
        names = [*self._first, *(n for n in names if n not in self._first)]
        return {n: _plain(getattr(self, n)) for n in names if n not in self._optional or getattr(self, n) is not None}

    def to_dict(self) -> dict:
        known, after = self._known(), {}
        for k, (prev, _) in self.unknown.items():
            after.setdefault(prev if prev is None or prev in known or prev in self.unknown else "", []).append(k)
        out: dict = {}

        def put(key: Optional[str]) -> None:
            for k in after.get(key, ()):
                out[k] = _plain(self.unknown[k][1])
                put(k)

        put(None)
        for k, v in known.items():
            out[k] = v
            put(k)
        put("")  # what followed a key that is not written any more goes last
        return out

    @classmethod
    def from_dict(cls, d: dict):
        """By field name, for the classes whose JSON is their fields as they are."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d and f.name not in cls._local},
                   unknown=_unknown(d, cls))


@dataclass
class Unary(_Json):
    """A stateless operator: ``op`` is Map, Filter, Project or FlatMap (finishing: Sort, Limit, Offset)."""

    op: str
    args: list[str]
    sql: Optional[dict] = None  # the SQL form (docs/arrnf-sql.md), when the normalizer gave one

    _optional = ("sql",)


@dataclass
class Get(_Json):
    """A read: ``source`` is table, block, cache (an existing shared arrangement), stream or cte."""

    name: str
    source: str
    kind: str = "Get"

    _first = ("kind",)


@dataclass
class Constant(_Json):
    detail: str
    rows: Optional[int]
    kind: str = "Constant"

    _first = ("kind",)


@dataclass
class Join(_Json):
    """A binary join of arranged inputs (each a :class:`Get` of a block or a cached DataFrame)."""

    type: str
    on: list[str]
    condition: Optional[str]
    inputs: list[Get]
    kind: str = "Join"

    _first = ("kind",)


@dataclass
class Opaque(_Json):
    """A node the normalizer does not express in ArrNF; its inputs are blocks."""

    node: str
    detail: str
    inputs: list[Get]
    kind: str = "Opaque"

    _first = ("kind",)


Leaf = Union[Get, Constant, Join, Opaque]


def _leaf(d: dict) -> Leaf:
    k = d["kind"]
    if k == "Get":
        return Get(d["name"], d["source"], unknown=_unknown(d, Get))
    if k == "Constant":
        return Constant(d["detail"], d["rows"], unknown=_unknown(d, Constant))
    if k == "Join":
        return Join(d["type"], list(d["on"]), d["condition"], [_leaf(g) for g in d["inputs"]], unknown=_unknown(d, Join))
    if k == "Opaque":
        return Opaque(d["node"], d["detail"], [_leaf(g) for g in d["inputs"]], unknown=_unknown(d, Opaque))
    raise ValueError(f"unknown leaf kind {k!r}")


@dataclass
class Branch(_Json):
    """``[Negate] Unary* Leaf``; ``unary`` in evaluation order (the text prints the outermost first)."""

    negate: bool
    unary: list[Unary]
    leaf: Leaf
    sql: Optional[dict] = None  # the leaf's SQL form (docs/arrnf-sql.md)

    _optional = ("sql",)

    @classmethod
    def from_dict(cls, d: dict) -> "Branch":
        return cls(bool(d["negate"]), [Unary.from_dict(u) for u in d["unary"]], _leaf(d["leaf"]), d.get("sql"),
                   unknown=_unknown(d, cls))


@dataclass
class Aggregate(_Json):
    """One aggregate of a Reduce; ``kind`` is accumulable, hierarchical, basic or window."""

    text: str
    kind: str
    distinct: bool


@dataclass
class Head(_Json):
    """The block's arrangement-forming operator: ArrangeBy, Reduce, Distinct, TopK or Threshold."""

    kind: str
    keys: list[list[str]]
    aggregates: list[Aggregate] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    limit: Optional[int] = None
    offset: Optional[int] = None
    mode: Optional[str] = None
    sql: Optional[dict] = None  # the SQL form (docs/arrnf-sql.md)

    _optional = ("sql",)

    @classmethod
    def from_dict(cls, d: dict) -> "Head":
        return cls(d["kind"], [list(k) for k in d["keys"]], [Aggregate.from_dict(a) for a in d["aggregates"]],
                   list(d["order"]), d["limit"], d["offset"], d["mode"], d.get("sql"), unknown=_unknown(d, cls))


@dataclass
class Consumer(_Json):
    """Who reads a block: the reading block, the role (join, input, subquery, cte, opaque) and detail."""

    block: str
    role: str
    detail: str


@dataclass
class Cost(_Json):
    """Arrangements (by ``rule``), key/value columns, estimated rows and bytes (``source``: where the
    rows come from — catalog, file metadata, sketch, cache, exact, ``estimate: …`` — or ``unknown``,
    with no rows, or ``none`` for a block without state) and ``why``: the consumer that needs it."""

    arrangements: int
    rule: str
    keys: list[list[str]]
    values: list[str]
    rows: Optional[int]
    bytes: Optional[int]
    source: str
    why: str


@dataclass
class Operator(_Json):
    """A stateful physical operator of a measured run's final plan and its SQL metrics.

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
    peak_memory: Optional[int]
    spill: Optional[int]
    shuffle_bytes: int
    metrics: dict = field(default_factory=dict)

    @property
    def what(self) -> Optional[str]:
        """The state it holds, in words (``sort for merge join``, ``broadcast relation``, ...)."""
        return self._later("what")

    @property
    def state_rows(self) -> Optional[int]:
        """Rows of the state it holds (a sort's input, a broadcast relation's rows, an aggregate's groups)."""
        return self._later("state_rows")

    @property
    def state_bytes(self) -> Optional[int]:
        """Bytes of that state, where Spark measures them (an exchange's data size, a hash map's pages)."""
        return self._later("state_bytes")

    @property
    def ran_twice(self) -> bool:
        """Whether Spark ran its stage twice in the query (first to sample a global sort's ranges, then
        to write the shuffle): its rows, peak memory and spill are then one run's, half of what
        ``metrics`` (Spark's own counts) says."""
        return bool(self._later("ran_twice"))

    @property
    def limited_above(self) -> bool:
        """Whether a LIMIT above it, in its stage, stopped reading its output: an aggregate's or a
        window's rows are then unknown (``state_rows`` None), not the few rows the limit took."""
        return bool(self._later("limited_above"))


@dataclass
class Measured(_Json):
    """A block's measured figures. ``rows`` and :attr:`bytes` are those of the state it holds (its
    principal operator's, :attr:`state_operator`: a final aggregate's groups, a broadcast relation's
    rows and data size, a sort's rows); ``peak_memory`` (what Spark allocated: None where it
    measures no memory of any of them, a lower bound where it measures some only), ``spill`` and
    ``shuffle_bytes`` are sums over its own operators (``operators``, ids); ``ratio`` = measured
    bytes / estimated bytes (None without both)."""

    operators: list[int]
    shared_operators: list[int]
    rows: Optional[int]
    peak_memory: Optional[int]
    spill: int
    shuffle_bytes: int
    ratio: Optional[float]

    @property
    def bytes(self) -> Optional[int]:
        """Bytes of the state the block holds, where Spark measured them (None: not measured)."""
        return self._later("bytes")

    @property
    def state_operator(self) -> Optional[int]:
        """The id of the operator whose state the block's ``rows`` and ``bytes`` are."""
        return self._later("state_operator")

    @property
    def peak_memory_unmeasured(self) -> list:
        """Ids of its own operators that hold rows in memory Spark does not measure (a sort-merge
        join, a window, an object hash aggregate): ``peak_memory`` is then a lower bound, or None
        where no operator's memory is measured."""
        return self._later_ids("peak_memory_unmeasured")

    @property
    def spill_unmeasured(self) -> list:
        """Ids of its own operators that can spill where Spark has no spill metric (a cartesian
        product): ``spill`` is then a lower bound."""
        return self._later_ids("spill_unmeasured")


@dataclass
class Measurement(_Json):
    """What a run measured: every stateful operator, the unattributed ones (ids), totals over the
    attributed non-shared operators, ``status`` (ok or failed, with ``error``), ``final_plan`` (the
    adaptive plan had finished), ``result_rows`` and, for a stream, ``batch_id`` and ``settled`` (the
    figures are that micro-batch's progress). ``rows`` holds the collected result when
    ``measure(..., collect=True)``; it is not part of the JSON."""

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
    settled: Optional[bool] = None
    rows: Optional[list] = field(default=None, repr=False, compare=False)

    _optional = ("batch_id", "settled")
    _local = ("unknown", "rows")

    def operator(self, i: int) -> Operator:
        return self.operators[i]

    @property
    def peak_memory_unmeasured(self) -> list:
        """Ids of the operators whose memory Spark does not measure (their ``peak_memory`` is None):
        the totals leave them out."""
        return self._later_ids("peak_memory_unmeasured")

    @property
    def spill_unmeasured(self) -> list:
        """Ids of the operators that can spill where Spark has no spill metric (a cartesian product):
        their ``spill`` is None, and the totals leave them out."""
        return self._later_ids("spill_unmeasured")

    @property
    def unattributed_spill(self) -> int:
        """Spill of the operators in no block (a global ORDER BY's sort), apart from ``spill``."""
        return int(self._later("unattributed_spill") or 0)

    @property
    def unattributed_shuffle_bytes(self) -> int:
        """Shuffle bytes of the operators in no block (a global ORDER BY's range shuffle)."""
        return int(self._later("unattributed_shuffle_bytes") or 0)

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        m = super().from_dict(d)
        m.operators = [Operator.from_dict(o) for o in m.operators]
        return m


@dataclass
class Block(_Json):
    """``[Head] Union [ [Negate] Unary* Leaf ]+`` with its output ``columns``, ``sharing`` count
    (how many places read it), ``consumers``, ``cost``, ``notes``, the JVM's ``text`` of it (header
    line, measured line, body, notes) and, in a measured report, ``measured``."""

    name: str
    head: Optional[Head]
    branches: list[Branch]
    columns: list[str]
    sharing: int
    consumers: list[Consumer]
    cost: Cost
    notes: list[str]
    text: Optional[str] = None
    measured: Optional[Measured] = None

    _optional = ("text", "measured")

    def __str__(self) -> str:
        return self.text if self.text is not None else repr(self)

    @property
    def realization(self) -> Optional[list[dict]]:
        """What Spark builds for the block in the physical plan it chose: one ``{id, operator, what,
        shared}`` per operator (``[]``: nothing, a streamed side); None where no physical plan was
        asked for (a stream)."""
        return self._later("realization")

    @property
    def spark(self) -> Optional[str]:
        """What Spark builds for the block, as the text form shows it: ``"sort for merge join,
        shuffle"``, ``"none"`` (a streamed side), None (no physical plan asked for)."""
        r = self.realization
        if r is None:
            return None
        return ", ".join(x["what"] + (" (existing)" if x["shared"] else "") for x in r) or "none"

    def leaves(self):
        """Every leaf of the body, joins' inputs included."""
        for b in self.branches:
            yield b.leaf
            if isinstance(b.leaf, (Join, Opaque)):
                yield from b.leaf.inputs

    def reads(self) -> list[str]:
        """Names of the blocks this block reads."""
        out = []
        for leaf in self.leaves():
            if isinstance(leaf, Get) and leaf.source == "block" and leaf.name not in out:
                out.append(leaf.name)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Block":
        if "text" not in d:
            raise ValueError(_NO_TEXT)
        return cls(d["name"], Head.from_dict(d["head"]) if d["head"] else None,
                   [Branch.from_dict(b) for b in d["branches"]], list(d["columns"]), int(d["sharing"]),
                   [Consumer.from_dict(c) for c in d["consumers"]], Cost.from_dict(d["cost"]), list(d["notes"]),
                   d["text"], Measured.from_dict(d["measured"]) if d.get("measured") is not None else None,
                   unknown=_unknown(d, cls))


_MEASURED_COLUMNS = ("measured_rows", "measured_bytes", "peak_memory", "spill", "shuffle_bytes", "ratio")


@dataclass
class Program(_Json):
    """An ArrNF program: ``blocks`` in dependency order (the last is the query's result), the
    ``arrangements`` and ``text`` the JVM computed, and in a measured report ``measurement``.

    ``to_dot()``, ``to_svg()``, ``_repr_html_()`` (views.py) and ``to_sql()`` (sql.py) are attached
    by the package's ``__init__``, so that this module needs neither."""

    name: str
    blocks: list[Block]
    finishing: list[Unary]
    streaming: bool
    opaque: int
    version: int = FORMAT_VERSION
    measurement: Optional[Measurement] = None
    arrangements: Optional[int] = None
    text: Optional[str] = None

    _optional = ("measurement", "text")

    def block(self, name: str) -> Block:
        for b in self.blocks:
            if b.name == name:
                return b
        raise KeyError(f"no block {name!r}; blocks: {[b.name for b in self.blocks]}")

    def __getitem__(self, name: str) -> Block:
        return self.block(name)

    def __iter__(self):
        return iter(self.blocks)

    def __len__(self) -> int:
        return len(self.blocks)

    def __str__(self) -> str:
        return self.text if self.text is not None else repr(self)

    @property
    def realized(self) -> Optional[int]:
        """How many stateful operators Spark's physical plan runs (None: no physical plan asked for).
        The total to read first: ``arrangements`` is the seed's differential model, beside it."""
        return self._later("realized")

    @property
    def built_blocks(self) -> Optional[int]:
        """How many blocks Spark builds state for (None: no physical plan asked for)."""
        return self._later("built_blocks")

    @property
    def rules(self) -> list[str]:
        """Why the extension's rules fired, or EagerAggregation declined, in the optimized plan: a
        line each, as ``df.explain()``'s section prints them above the program (``[]``: none said)."""
        return list(self._later("rules") or [])

    @property
    def outside_blocks(self) -> Optional[int]:
        """Of the stateful operators Spark builds, how many are in no block: a finishing ORDER BY's
        sort and its shuffle, any not attributed (``measure()`` lists them). None: no physical plan."""
        if self.realized is None:
            return None
        return self.realized - sum(sum(1 for x in (b.realization or []) if not x["shared"]) for b in self.blocks)

    def totals(self) -> str:
        """The program's totals as its text's first line gives them: what Spark builds first, the
        differential model's count beside it.

        >>> from pyspark_arrnf.examples import EXAMPLE_JSON
        >>> Program.from_json(EXAMPLE_JSON).totals()
        '2 blocks, Spark builds 2 stateful operators in 1 blocks (differential model: 1 arrangements), 0 opaque'
        """
        if self.realized is None:
            built = f"{self.arrangements} arrangements (differential model)"
        else:
            outside = self.outside_blocks
            placed = (f": {self.realized - outside} in {self.built_blocks} blocks, {outside} outside any block"
                      if outside else f" in {self.built_blocks} blocks")
            built = (f"Spark builds {self.realized} stateful operators{placed} "
                     f"(differential model: {self.arrangements} arrangements)")
        return f"{len(self.blocks)} blocks, {built}, {self.opaque} opaque"

    def __repr__(self) -> str:
        return f"<ArrNF program {self.name!r}: {self.totals()}>"

    # -- JSON
    def _known(self) -> dict:  # the JVM's order, which is not the fields'
        d = super()._known()
        order = ("version", "name", "streaming", "opaque", "arrangements", "blocks", "finishing", "text", "measurement")
        return {"format": "arrnf", **{k: d[k] for k in order if k in d}}

    def to_json(self, indent: int | None = None) -> str:
        """The JSON form (docs/arrnf-json.md); compact like the JVM's unless ``indent`` is given."""
        if indent is None:
            return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, d: dict) -> "Program":
        if d.get("format") != "arrnf":
            raise ValueError("not an ArrNF program (no \"format\": \"arrnf\")")
        if int(d["version"]) > FORMAT_VERSION:
            raise ValueError(f"ArrNF JSON version {d['version']} is newer than this package reads ({FORMAT_VERSION})")
        if "text" not in d:
            raise ValueError(_NO_TEXT)
        m = d.get("measurement")
        return cls(d["name"], [Block.from_dict(b) for b in d["blocks"]], [Unary.from_dict(u) for u in d["finishing"]],
                   bool(d["streaming"]), int(d["opaque"]), int(d["version"]), None if m is None else
                   Measurement.from_dict(m), int(d["arrangements"]), d["text"], unknown=_unknown(d, cls, "format"))

    @classmethod
    def from_json(cls, s: str) -> "Program":
        return cls.from_dict(json.loads(s))

    # -- costs
    def cost(self) -> list[dict]:
        """One row per block: where (block), what Spark builds for it (spark), the seed's differential
        count (arrangements, rule), what it holds (keys, values, estimated rows and bytes of Spark's
        state, their source), why; measured figures too in a measured report."""
        return [{"block": b.name, "head": b.head.kind if b.head else None, "spark": b.spark,
                 "arrangements": b.cost.arrangements, "rule": b.cost.rule, "keys": b.cost.keys,
                 "values": b.cost.values, "rows": b.cost.rows, "bytes": b.cost.bytes, "source": b.cost.source, "sharing": b.sharing, "why": b.cost.why,
                 **(_measured_row(b) if self.measurement is not None else {})}
                for b in self.blocks]

    def cost_frame(self):
        """:meth:`cost` as a pandas DataFrame. Rows, bytes and the measured counts are whole numbers,
        some unknown: pandas' nullable integers (``Int64``, ``<NA>`` where unknown), not floats; the
        measured/estimated ratio a nullable ``Float64`` (not None in some rows and NaN in others)."""
        import pandas as pd

        measured = self.measurement is not None
        frame = pd.DataFrame(self.cost(), columns=["block", "head", "spark", "arrangements", "rule", "keys",
                                                   "values", "rows", "bytes", "source", "sharing", "why"] +
                             (list(_MEASURED_COLUMNS) if measured else []))
        counts = ["rows", "bytes"] + ([c for c in _MEASURED_COLUMNS if c != "ratio"] if measured else [])
        return frame.astype({c: "Int64" for c in counts} | ({"ratio": "Float64"} if measured else {}))


def _measured_row(b: Block) -> dict:
    m = b.measured
    return dict(zip(_MEASURED_COLUMNS, (None,) * len(_MEASURED_COLUMNS) if m is None else
                    (m.rows, m.bytes, m.peak_memory, m.spill, m.shuffle_bytes, m.ratio)))
