"""Soundness of EliminateUnitJoin: ``Q ▷ 1`` without a condition is empty, but a Q that can fail is
kept. See ``soundness.py``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from soundness import (  # noqa: E402  (tests/ is not a package)
    ANSI_ON, FAILING, FAILING_IDS, both_ways,
    views,  # noqa: F401  (fixtures)
)


@pytest.mark.parametrize("expr,settings", [(f[1], f[2]) for f in FAILING], ids=FAILING_IDS)
def test_anti_join_with_a_unit_keeps_a_failing_input(spark, views, conf, expr, settings):
    conf(settings)
    # the failing expression is in the anti join's input, in a filter Spark can neither drop (as it
    # drops `IS NOT NULL` of a non-nullable expression) nor move above the join
    q = f"SELECT k FROM (SELECT k FROM r WHERE CAST({expr} AS STRING) <> 'none') LEFT ANTI JOIN (SELECT 1 AS c) u"
    _, _, on_plan, _ = both_ways(spark, q)
    assert "LeftAnti" in on_plan, on_plan


def test_anti_join_with_a_unit_still_empties_a_non_failing_input(spark, views, conf):
    conf(ANSI_ON)
    q = "SELECT k FROM (SELECT k FROM r WHERE k % 3 = 0) LEFT ANTI JOIN (SELECT 1 AS c) u"
    on, _, on_plan, off_plan = both_ways(spark, q)
    assert on.rows == []
    assert "Join" not in on_plan and "LocalRelation <empty>" in on_plan, on_plan
    assert "LeftAnti" in off_plan, off_plan
