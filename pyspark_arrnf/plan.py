"""ArrNF programs as Python objects: typed dataclasses read from the normalizer's JSON.

``arrnf(df_or_sql)`` normalizes the optimized plan of a DataFrame (or of a SQL text) in the JVM and
returns a :class:`Program`: its ``blocks`` (dependency order), ``str()`` for the seed's text form,
``to_json()``, ``cost()`` / ``cost_frame()``, a notebook view and a Graphviz picture (views.py).

A program can be read back from its JSON without Spark:

>>> p = Program.from_json(EXAMPLE_JSON)
>>> [b.name for b in p.blocks]
['q.tmp0', 'q']
>>> p.blocks[0].head.kind, p.blocks[0].cost.arrangements
('Distinct', 1)
>>> print(p.blocks[1].branches[0])
Negate Project(#0{a}) Get q.tmp0
>>> p.to_json() == EXAMPLE_JSON
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional, Union

FORMAT_VERSION = 1


class ArrnfError(Exception):
    """A query that cannot be normalized (it does not analyze, or the normalizer failed)."""


def _with_sql(d: dict, sql: Optional[dict]) -> dict:
    if sql is not None:
        d["sql"] = sql
    return d


def _human(n: int, unit: str) -> str:
    """Rows and bytes as the text form prints them (same rounding as TextFormat.scala).

    >>> _human(999, ""), _human(73_449, ""), _human(2_349_000, "B")
    ('999', '73.4k', '2.3MB')
    """
    for d, s in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= d:
            tenths = (n * 10 + d // 2) // d
            return f"{tenths // 10}.{tenths % 10}{s}{unit}"
    return f"{n}{unit}"


def _keysets(ks: list[list[str]]) -> str:
    return "[" + ", ".join("[" + ", ".join(k) + "]" for k in ks) + "]"


def _list(xs: list[str]) -> str:
    return "[" + ", ".join(xs) + "]"


@dataclass
class Unary:
    """A stateless operator: ``op`` is Map, Filter, Project or FlatMap (finishing: Sort, Limit, Offset)."""

    op: str
    args: list[str]
    sql: Optional[dict] = None  # the SQL form (docs/arrnf-sql.md), when the normalizer gave one

    def __str__(self) -> str:
        return f"{self.op}({', '.join(self.args)})"

    def to_dict(self) -> dict:
        return _with_sql({"op": self.op, "args": list(self.args)}, self.sql)

    @classmethod
    def from_dict(cls, d: dict) -> "Unary":
        return cls(d["op"], list(d["args"]), d.get("sql"))


@dataclass
class Get:
    """A read: ``source`` is table, block, cache (an existing shared arrangement), stream or cte."""

    name: str
    source: str
    kind: str = "Get"

    def __str__(self) -> str:
        if self.source == "cache":
            return f"Get {self.name} (cached: existing arrangement)"
        if self.source == "stream":
            return f"Get {self.name} (stream)"
        return f"Get {self.name}"

    def to_dict(self) -> dict:
        return {"kind": "Get", "name": self.name, "source": self.source}


@dataclass
class Constant:
    detail: str
    rows: Optional[int]
    kind: str = "Constant"

    def __str__(self) -> str:
        return f"Constant({self.detail})"

    def to_dict(self) -> dict:
        return {"kind": "Constant", "detail": self.detail, "rows": self.rows}


@dataclass
class Join:
    """A binary join of arranged inputs (each a :class:`Get` of a block or a cached DataFrame)."""

    type: str
    on: list[str]
    condition: Optional[str]
    inputs: list[Get]
    kind: str = "Join"

    def __str__(self) -> str:
        parts = ["Join", f"type={self.type}"]
        if self.on:
            parts.append("on=(" + ", ".join(self.on) + ")")
        if self.condition is not None:
            parts.append(f"cond=({self.condition})")
        return " ".join(parts + [str(g) for g in self.inputs])

    def to_dict(self) -> dict:
        return {"kind": "Join", "type": self.type, "on": list(self.on), "condition": self.condition,
                "inputs": [g.to_dict() for g in self.inputs]}


@dataclass
class Opaque:
    """A node the normalizer does not express in ArrNF; its inputs are blocks."""

    node: str
    detail: str
    inputs: list[Get]
    kind: str = "Opaque"

    def __str__(self) -> str:
        return " ".join([f"Opaque {self.node}({self.detail})"] + [str(g) for g in self.inputs])

    def to_dict(self) -> dict:
        return {"kind": "Opaque", "node": self.node, "detail": self.detail, "inputs": [g.to_dict() for g in self.inputs]}


Leaf = Union[Get, Constant, Join, Opaque]


def _leaf(d: dict) -> Leaf:
    k = d["kind"]
    if k == "Get":
        return Get(d["name"], d["source"])
    if k == "Constant":
        return Constant(d["detail"], d["rows"])
    if k == "Join":
        return Join(d["type"], list(d["on"]), d["condition"], [_leaf(g) for g in d["inputs"]])
    if k == "Opaque":
        return Opaque(d["node"], d["detail"], [_leaf(g) for g in d["inputs"]])
    raise ValueError(f"unknown leaf kind {k!r}")


@dataclass
class Branch:
    """``[Negate] Unary* Leaf``; ``unary`` in evaluation order (the text prints the outermost first)."""

    negate: bool
    unary: list[Unary]
    leaf: Leaf
    sql: Optional[dict] = None  # the leaf's SQL form (docs/arrnf-sql.md)

    def __str__(self) -> str:
        parts = (["Negate"] if self.negate else []) + [str(u) for u in reversed(self.unary)] + [str(self.leaf)]
        return " ".join(parts)

    def to_dict(self) -> dict:
        return _with_sql({"negate": self.negate, "unary": [u.to_dict() for u in self.unary],
                          "leaf": self.leaf.to_dict()}, self.sql)

    @classmethod
    def from_dict(cls, d: dict) -> "Branch":
        return cls(bool(d["negate"]), [Unary.from_dict(u) for u in d["unary"]], _leaf(d["leaf"]), d.get("sql"))


@dataclass
class Aggregate:
    """One aggregate of a Reduce; ``kind`` is accumulable, hierarchical, basic or window."""

    text: str
    kind: str
    distinct: bool

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "distinct": self.distinct}


@dataclass
class Head:
    """The block's arrangement-forming operator: ArrangeBy, Reduce, Distinct, TopK or Threshold."""

    kind: str
    keys: list[list[str]]
    aggregates: list[Aggregate] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    limit: Optional[int] = None
    offset: Optional[int] = None
    mode: Optional[str] = None
    sql: Optional[dict] = None  # the SQL form (docs/arrnf-sql.md)

    def __str__(self) -> str:
        k0 = self.keys[0] if self.keys else []
        if self.kind == "ArrangeBy":
            parts = ["ArrangeBy", "keys=" + _keysets(self.keys)]
        elif self.kind == "Reduce" and self.mode == "window":
            parts = ["Reduce", "window=" + _list([a.text for a in self.aggregates]), "keys=" + _list(k0),
                     "order=" + _list(self.order)]
        elif self.kind == "Reduce":
            parts = ["Reduce", "keys=" + _list(k0), "aggregates=" + _list([a.text for a in self.aggregates])]
        elif self.kind == "Distinct":
            parts = ["Distinct", "keys=" + _list(k0)] + ([self.mode] if self.mode else [])
        elif self.kind == "TopK":
            parts = ["TopK", "group=" + _list(k0), "order=" + _list(self.order)]
            parts += [f"limit={self.limit}"] if self.limit is not None else []
            parts += [f"offset={self.offset}"] if self.offset is not None else []
            parts += [f"by={self.mode}"] if self.mode else []
        elif self.kind == "Threshold":
            parts = ["Threshold"] + ([self.mode] if self.mode else [])
        else:
            parts = [self.kind]
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "keys": [list(k) for k in self.keys],
                "aggregates": [a.to_dict() for a in self.aggregates], "order": list(self.order),
                "limit": self.limit, "offset": self.offset, "mode": self.mode, **({"sql": self.sql} if self.sql else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "Head":
        return cls(d["kind"], [list(k) for k in d["keys"]],
                   [Aggregate(a["text"], a["kind"], bool(a["distinct"])) for a in d["aggregates"]],
                   list(d["order"]), d["limit"], d["offset"], d["mode"], d.get("sql"))


@dataclass
class Consumer:
    """Who reads a block: the reading block, the role (join, input, subquery, cte, opaque) and detail."""

    block: str
    role: str
    detail: str

    def to_dict(self) -> dict:
        return {"block": self.block, "role": self.role, "detail": self.detail}


@dataclass
class Cost:
    """Arrangements (by ``rule``), key/value columns, estimated rows and bytes (``source``: rowCount,
    sizeInBytes, unknown or none) and ``why``: the consumer that needs the arrangement."""

    arrangements: int
    rule: str
    keys: list[list[str]]
    values: list[str]
    rows: Optional[int]
    bytes: Optional[int]
    source: str
    why: str

    def to_dict(self) -> dict:
        return {"arrangements": self.arrangements, "rule": self.rule, "keys": [list(k) for k in self.keys],
                "values": list(self.values), "rows": self.rows, "bytes": self.bytes, "source": self.source,
                "why": self.why}


@dataclass
class Block:
    """``[Head] Union [ [Negate] Unary* Leaf ]+`` with its output ``columns``, ``sharing`` count
    (how many places read it), ``consumers``, ``cost`` and ``notes``."""

    name: str
    head: Optional[Head]
    branches: list[Branch]
    columns: list[str]
    sharing: int
    consumers: list[Consumer]
    cost: Cost
    notes: list[str]
    measured: Optional["Measured"] = None  # measure.py: figures of the operators that realize it

    def header(self) -> str:
        c = self.cost
        parts = [f"[{self.name}]", f"arrangements={c.arrangements} ({c.rule})"]
        if c.keys:
            parts.append("keys=" + _keysets(c.keys))
        if c.rows is not None:
            parts.append(f"rows≈{_human(c.rows, '')} ({c.source})")
        if c.bytes is not None:
            parts.append(f"bytes≈{_human(c.bytes, 'B')}")
        if self.sharing > 1:
            parts.append(f"shared={self.sharing}")
        parts.append(f"why: {c.why}")
        return "  ".join(parts)

    def body_lines(self) -> list[str]:
        hd = [str(self.head)] if self.head else []
        if len(self.branches) == 1:
            return [" ".join(hd + [str(self.branches[0])])]
        return hd + [("Union " if i == 0 else "      ") + str(b) for i, b in enumerate(self.branches)]

    def __str__(self) -> str:
        return "\n".join([self.header()] + ([f"  -- {self.measured}"] if self.measured is not None else []) +
                         self.body_lines() + [f"  -- {n}" for n in self.notes])

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

    def to_dict(self) -> dict:
        return {"name": self.name, "head": self.head.to_dict() if self.head else None,
                "branches": [b.to_dict() for b in self.branches], "columns": list(self.columns),
                "sharing": self.sharing, "consumers": [c.to_dict() for c in self.consumers],
                "cost": self.cost.to_dict(), "notes": list(self.notes),
                **({"measured": self.measured.to_dict()} if self.measured is not None else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "Block":
        return cls(d["name"], Head.from_dict(d["head"]) if d["head"] else None,
                   [Branch.from_dict(b) for b in d["branches"]], list(d["columns"]), int(d["sharing"]),
                   [Consumer(**c) for c in d["consumers"]], Cost(**d["cost"]), list(d["notes"]),
                   _measured(d.get("measured")))


@dataclass
class Program:
    """An ArrNF program: ``blocks`` in dependency order (the last is the query's result)."""

    name: str
    blocks: list[Block]
    finishing: list[Unary]
    streaming: bool
    opaque: int
    version: int = FORMAT_VERSION
    measurement: Optional["Measurement"] = None  # measure.py: the run's operators and totals

    @property
    def arrangements(self) -> int:
        return sum(b.cost.arrangements for b in self.blocks)

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
        lines = [f"-- ArrNF {self.name}: {len(self.blocks)} blocks, {self.arrangements} arrangements, "
                 f"{self.opaque} opaque" + (", streaming" if self.streaming else "")]
        for b in self.blocks:
            lines += ["", str(b)]
        if self.finishing:
            lines += ["", "-- finishing: " + " ".join(str(u) for u in reversed(self.finishing))]
        if self.measurement is not None:
            lines += ["", self.measurement.summary()]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return (f"<ArrNF program {self.name!r}: {len(self.blocks)} blocks, {self.arrangements} arrangements, "
                f"{self.opaque} opaque>")

    # -- JSON
    def to_dict(self) -> dict:
        return {"format": "arrnf", "version": self.version, "name": self.name, "streaming": self.streaming,
                "opaque": self.opaque, "arrangements": self.arrangements,
                "blocks": [b.to_dict() for b in self.blocks], "finishing": [u.to_dict() for u in self.finishing],
                "text": str(self),
                **({"measurement": self.measurement.to_dict()} if self.measurement is not None else {})}

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
        return cls(d["name"], [Block.from_dict(b) for b in d["blocks"]], [Unary.from_dict(u) for u in d["finishing"]],
                   bool(d["streaming"]), int(d["opaque"]), int(d["version"]), _measurement(d.get("measurement")))

    @classmethod
    def from_json(cls, s: str) -> "Program":
        return cls.from_dict(json.loads(s))

    # -- costs
    def cost(self) -> list[dict]:
        """One row per block: where (block), what (head, keys, values, rows, bytes), why."""
        return [{"block": b.name, "head": b.head.kind if b.head else None, "arrangements": b.cost.arrangements,
                 "rule": b.cost.rule, "keys": b.cost.keys, "values": b.cost.values, "rows": b.cost.rows,
                 "bytes": b.cost.bytes, "source": b.cost.source, "sharing": b.sharing, "why": b.cost.why,
                 **(_measured_row(b) if self.measurement is not None else {})}
                for b in self.blocks]

    def cost_frame(self):
        """:meth:`cost` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.cost(), columns=["block", "head", "arrangements", "rule", "keys", "values",
                                                  "rows", "bytes", "source", "sharing", "why"] +
                            (list(_MEASURED_COLUMNS) if self.measurement is not None else []))

    # -- views (views.py)
    def _repr_html_(self) -> str:
        from .views import to_html

        return to_html(self)

    def to_dot(self) -> str:
        from .views import to_dot

        return to_dot(self)

    def to_svg(self) -> str:
        from .views import to_svg

        return to_svg(self)

    # -- SQL (sql.py)
    def to_sql(self, dialect: str = "spark", pretty: bool = True) -> str:
        """The program as one SQL statement: a CTE per block (see :func:`pyspark_arrnf.sql.to_sql`)."""
        from .sql import to_sql

        return to_sql(self, dialect=dialect, pretty=pretty)


_MEASURED_COLUMNS = ("measured_rows", "peak_memory", "spill", "shuffle_bytes", "ratio")


def _measured_row(b: "Block") -> dict:
    m = b.measured
    return dict(zip(_MEASURED_COLUMNS, (None, None, None, None, None) if m is None else
                    (m.rows, m.peak_memory, m.spill, m.shuffle_bytes, m.ratio)))


def _measured(d):
    if d is None:
        return None
    from .measure import Measured

    return Measured.from_dict(d)


def _measurement(d):
    if d is None:
        return None
    from .measure import Measurement

    return Measurement.from_dict(d)


def _jvm_program(spark, jdf, name: str) -> str:
    return spark._jvm.arrnf.normal.Arrnf.json(jdf, name)


def arrnf(df_or_sql, spark=None, name: str = "query") -> Program:
    """The ArrNF program of a DataFrame, or of a SQL text run in ``spark`` (the active session when
    not given). ``name`` names the result block (its helpers are ``<name>.tmpN``).

    >>> p = arrnf("select k, count(*) from range(10) t(k) group by k")  # doctest: +SKIP
    >>> print(p)                                                          # doctest: +SKIP
    """
    if isinstance(df_or_sql, str):
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
            if spark is None:
                raise ArrnfError("no active SparkSession: pass spark=..., or start one with pyspark_arrnf.session()")
        # PySpark logs every failed analysis with its JVM stack trace (logger SQLQueryContextLogger);
        # the user gets one clear message instead.
        # Ask PySpark for it: a plain logging.getLogger would register a logger of the wrong class
        # under that name, and PySpark's own later calls (with errorClass=...) would then fail.
        from pyspark.logger import PySparkLogger

        quiet = PySparkLogger.getLogger("SQLQueryContextLogger")
        was = quiet.disabled
        quiet.disabled = True
        try:
            df = spark.sql(df_or_sql)
        except Exception as e:  # noqa: BLE001 - AnalysisException, ParseException: say it once, clearly
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ArrnfError(f"the query does not analyze, so it has no plan to normalize: {first}") from None
        finally:
            quiet.disabled = was
    else:
        df = df_or_sql
        spark = spark or df.sparkSession
    try:
        text = _jvm_program(spark, df._jdf, name)
    except Exception as e:  # noqa: BLE001 - a py4j error from the JVM side
        # py4j's own first line only names the call; the JVM exception says what went wrong.
        java = getattr(e, "java_exception", None)
        msg = (str(java.toString()) if java is not None else str(e)).strip().splitlines()
        raise ArrnfError(f"could not normalize the plan: {msg[0] if msg else type(e).__name__}") from None
    return Program.from_json(text)


EXAMPLE_JSON = json.dumps({
    "format": "arrnf", "version": 1, "name": "q", "streaming": False, "opaque": 0, "arrangements": 1,
    "blocks": [
        {"name": "q.tmp0", "head": {"kind": "Distinct", "keys": [["#0{a}"]], "aggregates": [], "order": [],
                                    "limit": None, "offset": None, "mode": None},
         "branches": [{"negate": False, "unary": [], "leaf": {"kind": "Get", "name": "t", "source": "table"}}],
         "columns": ["a"], "sharing": 1, "consumers": [{"block": "q", "role": "input", "detail": "read"}],
         "cost": {"arrangements": 1, "rule": "Distinct: 1 reduce", "keys": [["#0{a}"]], "values": ["a"],
                  "rows": 10, "bytes": 400, "source": "rowCount", "why": "distinct state, read by q"},
         "notes": []},
        {"name": "q", "head": None,
         "branches": [{"negate": True, "unary": [{"op": "Project", "args": ["#0{a}"]}],
                       "leaf": {"kind": "Get", "name": "q.tmp0", "source": "block"}}],
         "columns": ["a"], "sharing": 1, "consumers": [],
         "cost": {"arrangements": 0, "rule": "no arrangement-forming operator", "keys": [], "values": [],
                  "rows": None, "bytes": None, "source": "none", "why": "the query's result"},
         "notes": []}],
    "finishing": [],
    "text": "",
}, ensure_ascii=False, separators=(",", ":"))
EXAMPLE_JSON = Program.from_json(EXAMPLE_JSON).to_json()
