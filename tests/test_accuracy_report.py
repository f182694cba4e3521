"""``bench/accuracy.py``'s figures from its plain data: where the sketch pass changed the plan (a rule's
cost guard decided otherwise, as EagerAggregation does on TPC-DS q82), the estimates after the sketch
are judged against the run of that plan, not against blocks of another plan that share their names."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("arrnf_bench_accuracy", ROOT / "bench" / "accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)


def _run(rows: dict[str, int]) -> dict:
    """A measured run whose named blocks Spark builds state for, with their measured rows."""
    return {"status": "ok", "error": None, "operators": len(rows), "shared": 0, "unattributed": [],
            "blocks": [{"name": n, "rows": r, "bytes": None,
                        "realization": [{"id": i, "operator": "Exchange", "what": "shuffle", "shared": False}]}
                       for i, (n, r) in enumerate(rows.items())]}


def _estimates(rows: dict[str, int]) -> dict:
    return {n: {"est": r, "source": "estimate: file metadata, sketch", "bound": None, "bound_est": None}
            for n, r in rows.items()}


def _data(query: dict) -> dict:
    base = {"kind": "tpcds", "name": "q82", "plan_s": 0.1, "run_s": 1.0, "unmatched0": [], "unmatched1": []}
    return {"queries": [{**base, **query}], "sketch_s": {"tpcds": 1.0}}


def test_estimates_after_the_sketch_are_judged_against_the_run_of_their_own_plan():
    # before the sketch: tmp4 a broadcast date range (61 rows); after it the rule rewrote the plan and
    # tmp4 is the inventory rows it shuffles (2.88 million), estimated 4.46 million
    before = _run({"query.tmp4": 61, "query": 2})
    after = _run({"query.tmp4": 2_880_404, "query": 2})
    q = {"m": before, "p0": _estimates({"query.tmp4": 61, "query": 2}),
         "p1": _estimates({"query.tmp4": 4_456_245, "query": 2})}

    figs = accuracy.summarize(_data({**q, "m1": after}))["all"]
    assert figs["p1"]["within 2x"] == 1.0 and figs["p1"]["measured again"] == 1
    assert figs["p0"]["within 2x"] == 1.0 and figs["p0"]["measured again"] == 0

    # without the second run, p1 would be judged against the other plan's blocks: tmp4 off 73,000 times
    stale = accuracy.summarize(_data(q))["all"]["p1"]
    assert stale["within 10x"] == 0.5 and stale["worst"][0]["ratio"] > 70_000


def test_the_shape_of_a_program_leaves_out_its_estimates_and_texts():
    block = {"name": "query", "keys": [["#0"]], "cost": {"rows": 1}, "text": "rows≈1", "realization": None}
    same = {**block, "cost": {"rows": 9}, "text": "rows≈9", "measured": {"rows": 3}}
    other = {**block, "keys": [["#1"]]}
    assert accuracy._shape({"blocks": [block]}) == accuracy._shape({"blocks": [same]})
    assert accuracy._shape({"blocks": [block]}) != accuracy._shape({"blocks": [other]})
