"""Correctness gate, part 2: random differential testing of the extension against vanilla Spark.

Random queries from ``tests/randomsql.py`` (hypothesis) over tiny random tables run with the
extension's rewrites on and off (``spark.arrnf.enabled``; every registered rule, so rules merged
later are covered without being named). A difference in rows, or an exception only one side
raises (or different exceptions), fails the test; hypothesis then shrinks the query and the
message gives the SQL, the seed and the command that reproduces the batch.

When both optimized plans are the same (Catalyst's ``sameResult``) nothing was rewritten and the
query is not executed: both sides would run the same plan. ``ARRNF_RANDOM_RUN_BOTH=1`` executes
every query on both sides anyway.

CI runs a fixed-seed batch of 300 queries. A longer run::

    ARRNF_RANDOM_QUERIES=5000 ARRNF_RANDOM_SEED=1 .venv/bin/python -m pytest tests/test_random_differential.py -q
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from pyspark_arrnf.compare import arrnf_enabled

sys.path.insert(0, os.path.dirname(__file__))
import randomsql  # noqa: E402  (tests/ is not a package)

SEED = int(os.environ.get("ARRNF_RANDOM_SEED", "20240801"))
N = int(os.environ.get("ARRNF_RANDOM_QUERIES", "300"))
RUN_BOTH = os.environ.get("ARRNF_RANDOM_RUN_BOTH") == "1"
REPRODUCE = (
    f"ARRNF_RANDOM_SEED={SEED} ARRNF_RANDOM_QUERIES={N} "
    ".venv/bin/python -m pytest tests/test_random_differential.py -x -q"
)


@dataclass
class Side:
    plan: object = None
    rows: list | None = None
    error: Exception | None = None


def plan_and_run(spark, sql: str, enabled: bool, execute: bool) -> Side:
    """Plans (and with ``execute`` collects) ``sql`` with the rewrites on or off."""
    with arrnf_enabled(spark, enabled):
        side = Side()
        try:
            df = spark.sql(sql)
            side.plan = df._jdf.queryExecution().optimizedPlan()
            if execute:
                side.rows = [tuple(r) for r in df.collect()]
        except Exception as e:  # noqa: BLE001 - an error is a result to compare
            side.error = e
        return side


def _error_class(e: Exception) -> str:
    getter = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    try:
        cond = getter() if getter else None
    except Exception:  # noqa: BLE001
        cond = None
    return cond or type(e).__name__


STATS = {"queries": 0, "executed both ways": 0, "same plan": 0, "error both ways": 0}


def differential(spark, sql: str) -> str:
    """Runs ``sql`` both ways; raises AssertionError on any difference. Returns what was done."""
    off = plan_and_run(spark, sql, False, RUN_BOTH)
    on = plan_and_run(spark, sql, True, RUN_BOTH)
    where = f"\n-- seed {SEED}; reproduce the batch with:\n--   {REPRODUCE}\n-- query:\n{sql}\n"
    if not RUN_BOTH and on.error is None and off.error is None:
        if on.plan.sameResult(off.plan):
            return "same plan"
        off = plan_and_run(spark, sql, False, True)
        on = plan_and_run(spark, sql, True, True)
    if on.error or off.error:
        assert on.error is not None and off.error is not None, (
            f"only one side raised.\nwith the extension: {str(on.error)[:2000]}\n"
            f"without: {str(off.error)[:2000]}{where}"
        )
        assert _error_class(on.error) == _error_class(off.error), (
            f"different errors.\nwith the extension: {str(on.error)[:2000]}\nwithout: {str(off.error)[:2000]}{where}"
        )
        return "error both ways"
    assert randomsql.same_bag(on.rows, off.rows), (
        f"rows differ: {len(on.rows)} with the extension, {len(off.rows)} without\n"
        f"with: {sorted(on.rows, key=randomsql.row_key)[:20]}\n"
        f"without: {sorted(off.rows, key=randomsql.row_key)[:20]}{where}"
    )
    return "executed both ways"


@pytest.fixture(scope="module")
def random_tables(spark, tmp_path_factory):
    # The factorization's law is checked wherever it applies, not only where its cost guard would
    # let it fire on these small tables.
    spark.conf.set("spark.arrnf.FactorizeUnionOfJoins.minSaving", "0")
    yield randomsql.create_tables(spark, str(tmp_path_factory.mktemp("randomsql")))
    spark.conf.unset("spark.arrnf.FactorizeUnionOfJoins.minSaving")


@settings(
    max_examples=N,
    deadline=None,
    database=None,
    print_blob=True,
    phases=[Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
)
@seed(SEED)
@given(sql=randomsql.queries())
def test_random_query_same_with_and_without_extension(spark, random_tables, sql):
    STATS["queries"] += 1
    STATS[differential(spark, sql)] += 1


def test_random_batch_was_meaningful(capsys):
    """The batch ran, and the generator's queries are valid: vanilla Spark accepted nearly all."""
    with capsys.disabled():
        print(f"\nrandom differential (seed {SEED}, {N} examples):", STATS)
    assert STATS["queries"] >= N
    assert STATS["error both ways"] <= 0.05 * STATS["queries"], STATS


def test_differential_catches_a_difference(spark, random_tables):
    """The check can fail. Variable substitution makes the SQL see the kill switch, so the two
    sides differ on purpose: in rows, and in an error only one side raises."""
    with pytest.raises(AssertionError, match=r"(?s)rows differ.*ARRNF_RANDOM_SEED="):
        differential(spark, "SELECT k AS c0, '${spark.arrnf.enabled}' AS c1 FROM rt1")
    with pytest.raises(AssertionError, match=r"(?s)only one side raised.*-- query:"):
        differential(spark, "SELECT assert_true('${spark.arrnf.enabled}' = 'false') AS c0 FROM rt1")
