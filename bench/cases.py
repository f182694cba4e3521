"""Synthetic benchmark cases: queries shaped for the extension's rules, on tables built in code.

Each case is a plain :class:`Case`: a name, the rule it is meant for, a ``setup`` that registers its
tables (sized by ``scale``: 1.0 is the size the rule issues name), and the SQL.

>>> [c.name for c in CASES][:2]
['factorize_3_branches', 'factorize_3_branches_count']
"""
from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Callable



# The ring laws' cases: each query is one where the law fires (rule name before the colon).
LAWS = {
    "NegationCancels: Q EXCEPT ALL Q": "select a, k from big except all select a, k from big",
    "NegationCancels: (A UNION ALL B) EXCEPT ALL B":
        "(select k from big where a < 1000 union all select a % 997 from big) except all select a % 997 from big",
    "EliminateSelfSemiAntiJoin: Q EXCEPT Q": "select k, n from big except select k, n from big",
    "EliminateSelfSemiAntiJoin: Q INTERSECT Q": "select k, n from big intersect select k, n from big",
    "EliminateUnitJoin: left anti with a unit": "select a from big x left anti join (select 3 as c) u on x.n > u.c",
    "EliminateUnitJoin: left outer with a unit": "select a, c from big x left join (select 3 as c) u on x.n > u.c",
    "FoldValueTerms: -(-d), n - n, n * 0": "select sum(-(-d)), sum(n - n), sum(n * 0) from big",
    "FoldAggregateValueTerms: max/min/first of keys":
        "select k, n, max(k), min(n), first(k), count(*) from big group by k, n",
}


@dataclass(frozen=True)
class Case:
    name: str
    rule: str
    setup: Callable  # (spark, scale) -> None
    sql: str
    settings: tuple = ()  # (key, value) pairs set for this case only


def _factorize_tables(spark, scale: float) -> None:
    """A shared input `shared_a` joined with three 4M-row branches (at scale 1)."""
    n = int(4_000_000 * scale)
    # The shared input carries payload (a name and a hash, as a dimension would): it is what each
    # branch of the vanilla plan sorts again for its sort-merge join (the shuffle itself is reused).
    spark.range(n).selectExpr("id as k", "id * 7 % 1000 as a_val", "concat('a', id % 97) as a_tag",
                              "concat('name-', id) as a_name", "sha1(cast(id as string)) as a_hash") \
        .createOrReplaceTempView("shared_a")
    for i in (1, 2, 3):
        spark.range(n).selectExpr(f"(id * {2 * i + 1}) % {n} as k", f"id % {10 * i} as b_val") \
            .createOrReplaceTempView(f"branch_{i}")


def _ring_tables(spark, scale: float) -> None:
    """The ring laws' table: 2M rows at scale 1, with NULLs, duplicates and a double column."""
    spark.range(int(2_000_000 * scale)).selectExpr(
        "id as a", "id % 1000 as k", "if(id % 7 = 0, null, id % 13) as n", "cast(id as double) / 3 as d"
    ).createOrReplaceTempView("big")


def _unit_tables(spark, scale: float) -> None:
    spark.range(int(2_000_000 * scale)).selectExpr("id", "id % 100 as g").createOrReplaceTempView("unit_fact")


_FACTORIZE_SQL = """
        select a.*, b.b_val, 'one' as src from shared_a a join branch_1 b on a.k = b.k
        union all
        select a.*, b.b_val, 'two' from shared_a a join branch_2 b on a.k = b.k
        union all
        select a.*, b.b_val, 'three' from shared_a a join branch_3 b on a.k = b.k
        """

CASES = [
    # Every output row built (12M rows with A's payload): the rows and A's own columns cost the same
    # on both sides, so this is the case where factorizing gains least.
    Case(
        "factorize_3_branches",
        "FactorizeUnionOfJoins",
        _factorize_tables,
        _FACTORIZE_SQL,
        (("spark.sql.autoBroadcastJoinThreshold", "-1"),),
    ),
    # The same union of joins under a row count, as the factorization issue measured it by hand
    # (df.count()): Spark prunes the payload, and what remains is the joins themselves.
    Case(
        "factorize_3_branches_count",
        "FactorizeUnionOfJoins",
        _factorize_tables,
        f"select count(*) from ({_FACTORIZE_SQL})",
        (("spark.sql.autoBroadcastJoinThreshold", "-1"),),
    ),
    Case(
        "unit_join",
        "EliminateUnitJoin",
        _unit_tables,
        "select g, count(*) as n, sum(one) as s from unit_fact cross join (select 1 as one) u group by g",
    ),
] + [
    Case(
        "ring_" + re.sub(r"[^a-z0-9]+", "_", law.split(": ")[1].lower()).strip("_"),
        law.split(":")[0],
        _ring_tables,
        sql,
    )
    for law, sql in LAWS.items()
]
