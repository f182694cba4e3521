"""Two small ArrNF programs as the JVM writes them, for the docstring examples (no Spark needed).

``EXAMPLE_JSON``: ``q.tmp0`` (a Distinct of table ``t``) and ``q`` (its negation);
``EXAMPLE_MEASURED_JSON``: the same program as ``measure()`` reports it after a run.

>>> import json
>>> print(json.loads(EXAMPLE_JSON)["text"], end="")
-- ArrNF q: 2 blocks, Spark builds 2 stateful operators in 1 blocks (differential model: 1 arrangements), 0 opaque
<BLANKLINE>
[q.tmp0]  arrangements=1 (Distinct: 1 reduce)  keys=[[#0{a}]]  spark=[hash aggregate (final), shuffle]  rows≈10 (estimate: file metadata, sketch)  bytes≈120B  why: distinct state, read by q
Distinct keys=[#0{a}] Get t
<BLANKLINE>
[q]  arrangements=0 (no arrangement-forming operator)  spark=none  why: the query's result
Negate Project(#0{a}) Get q.tmp0
"""
from __future__ import annotations

import json

_HEADERS = ("[q.tmp0]  arrangements=1 (Distinct: 1 reduce)  keys=[[#0{a}]]  spark=[hash aggregate (final), shuffle]  "
            "rows≈10 (estimate: file metadata, sketch)  bytes≈120B  why: distinct state, read by q",
            "[q]  arrangements=0 (no arrangement-forming operator)  spark=none  why: the query's result")
_REALIZATION = ([{"id": 0, "operator": "HashAggregate", "what": "hash aggregate (final)", "shared": False},
                 {"id": 1, "operator": "Exchange", "what": "shuffle", "shared": False}], [])
_BODIES = ("Distinct keys=[#0{a}] Get t", "Negate Project(#0{a}) Get q.tmp0")
_MEASURED_LINES = ("  -- measured: rows=10  bytes=800B  peak=800B  spill=0B  shuffle=120B  ratio=6.67 "
                   "(operators 0, 1; state of 0 hash aggregate (final))",
                   "  -- measured: peak=0B  spill=0B  shuffle=0B (operators none)")
_SUMMARY = ("-- measured: 2 stateful operators, 0 unattributed, peak memory 800B attributed + 0B unattributed, "
            "spill 0B, shuffle 120B, 3 result rows")


def _program(measured: bool) -> dict:
    blocks = [
        {"name": "q.tmp0", "head": {"kind": "Distinct", "keys": [["#0{a}"]], "aggregates": [], "order": [],
                                    "limit": None, "offset": None, "mode": None},
         "branches": [{"negate": False, "unary": [], "leaf": {"kind": "Get", "name": "t", "source": "table"}}],
         "columns": ["a"], "sharing": 1, "consumers": [{"block": "q", "role": "input", "detail": "read"}],
         "cost": {"arrangements": 1, "rule": "Distinct: 1 reduce", "keys": [["#0{a}"]], "values": ["a"],
                  "rows": 10, "bytes": 120, "source": "estimate: file metadata, sketch",
                  "why": "distinct state, read by q"},
         "notes": []},
        {"name": "q", "head": None,
         "branches": [{"negate": True, "unary": [{"op": "Project", "args": ["#0{a}"]}],
                       "leaf": {"kind": "Get", "name": "q.tmp0", "source": "block"}}],
         "columns": ["a"], "sharing": 1, "consumers": [],
         "cost": {"arrangements": 0, "rule": "no arrangement-forming operator", "keys": [], "values": [],
                  "rows": None, "bytes": None, "source": "none", "why": "the query's result"},
         "notes": []}]
    texts = [[h] + ([m] if measured else []) + [body] for h, m, body in zip(_HEADERS, _MEASURED_LINES, _BODIES)]
    for b, lines, r in zip(blocks, texts, _REALIZATION):
        b["realization"] = r
        b["text"] = "\n".join(lines)
    text = "\n\n".join(["-- ArrNF q: 2 blocks, Spark builds 2 stateful operators in 1 blocks (differential model: "
                        "1 arrangements), 0 opaque"] + [b["text"] for b in blocks] +
                       ([_SUMMARY] if measured else [])) + "\n"
    d = {"format": "arrnf", "version": 2, "name": "q", "streaming": False, "opaque": 0, "arrangements": 1,
         "realized": 2, "built_blocks": 1, "blocks": blocks, "finishing": [], "text": text}
    if measured:
        blocks[0]["measured"] = {"operators": [0, 1], "shared_operators": [], "rows": 10, "bytes": 800,
                                 "state_operator": 0, "peak_memory": 800, "spill": 0, "shuffle_bytes": 120,
                                 "ratio": 800 / 120}
        blocks[1]["measured"] = {"operators": [], "shared_operators": [], "rows": None, "bytes": None,
                                 "state_operator": None, "peak_memory": 0, "spill": 0, "shuffle_bytes": 0,
                                 "ratio": None}
        ops = [
            {"id": 0, "node": "HashAggregate", "kind": "aggregate", "block": "q.tmp0", "shared": False,
             "reuses": None, "reason": "logical link", "rows": 10, "peak_memory": 800, "spill": 0,
             "shuffle_bytes": 0, "what": "hash aggregate (final)", "state_rows": 10, "state_bytes": 800,
             "metrics": {"numOutputRows": 10, "peakMemory": 800}},
            {"id": 1, "node": "Exchange", "kind": "exchange", "block": "q.tmp0", "shared": False, "reuses": None,
             "reason": "inherits from HashAggregate", "rows": 10, "peak_memory": 0, "spill": 0,
             "shuffle_bytes": 120, "what": "shuffle", "state_rows": 10, "state_bytes": 160,
             "metrics": {"dataSize": 160, "shuffleBytesWritten": 120, "shuffleRecordsWritten": 10}}]
        d["measurement"] = {"operators": ops, "unattributed": [], "peak_memory": 800, "unattributed_peak_memory": 0,
                            "spill": 0, "shuffle_bytes": 120, "status": "ok", "error": None, "final_plan": True,
                            "result_rows": 3}
    return d


EXAMPLE_JSON = json.dumps(_program(False), ensure_ascii=False, separators=(",", ":"))
EXAMPLE_MEASURED_JSON = json.dumps(_program(True), ensure_ascii=False, separators=(",", ":"))
