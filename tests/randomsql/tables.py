"""The tables random queries read: tiny integer, collated-string, interval and numeric tables
(:data:`TABLES`, :data:`STRING_TABLES`, :data:`INTERVAL_TABLES`, :data:`AGG_TABLES`), and :func:`create_tables`, which
writes them as Parquet and registers them as temporary views."""
from __future__ import annotations

import random


COLUMNS = ("k", "a", "b")


def _table(rng: random.Random, n: int, null_rate: float, key_skew: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))  # an exact duplicate
            continue

        def v(hi):
            return None if rng.random() < null_rate else rng.randint(0, hi)

        k = 1 if rng.random() < key_skew else v(6)  # skew: most rows share key 1
        rows.append((k, v(4), v(9)))
    return rows


def _tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240801)
    return {
        "rt0": _table(rng, 40, 0.15, 0.5, 0.2),  # skewed key, some NULLs and duplicates
        "rt1": _table(rng, 12, 0.1, 0.0, 0.35),  # many duplicates
        "rt2": _table(rng, 8, 0.5, 0.0, 0.1),  # mostly NULLs
        "rte": [],  # empty
        "rt1r": [(1, 2, None)],  # one row
    }


TABLES = _tables()


# Strings equal under a case-insensitive or trailing-space-trimming collation, but not as bytes.
STRING_VALUES = ["a", "A", "a  ", "A ", "x", "X", "x ", "b", "B"]


def _string_table(rng: random.Random, n: int, null_rate: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))
            continue
        rows.append(tuple(None if rng.random() < null_rate else rng.choice(STRING_VALUES) for _ in COLUMNS))
    return rows


def _string_tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240802)
    return {
        "rs0": _string_table(rng, 30, 0.1, 0.2),
        "rs1": _string_table(rng, 10, 0.1, 0.3),
        "rse": [],
        "rs1r": [("A", "a  ", None)],
    }


STRING_TABLES = _string_tables()


COLLATIONS = {"UTF8_LCASE": "l", "UNICODE_CI": "u", "UTF8_BINARY_RTRIM": "r"}  # collation -> column prefix


DAY = 86400  # seconds


# Day-time values in seconds and year-month values in months; 100000000 days and 170000000 years
# are near the maximum of their types (106751991 days, 178956970 years): adding them overflows.
DT_VALUES = [DAY, 100000000 * DAY, -DAY, 2 * 3600, 0, 3 * DAY]


YM_VALUES = [1, 24, 170000000 * 12, -1, 0, 5]


def _interval_table(rng: random.Random, n: int, null_rate: float, dup_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))
            continue
        dt = [None if rng.random() < null_rate else rng.choice(DT_VALUES) for _ in COLUMNS]
        ym = [None if rng.random() < null_rate else rng.choice(YM_VALUES) for _ in COLUMNS]
        rows.append(tuple(dt + ym))
    return rows


def _interval_tables() -> dict[str, list[tuple]]:
    rng = random.Random(20240803)
    return {"ri0": _interval_table(rng, 16, 0.15, 0.2), "ri1": _interval_table(rng, 6, 0.1, 0.3), "rie": []}


INTERVAL_TABLES = _interval_tables()


# Numeric tables for aggregates over joins (:mod:`.aggjoins`). Keys ``k`` (skewed), ``j`` with
# duplicates and NULLs on every side; ``g`` a small grouping column; ``i`` small ints; ``e`` ints
# that make expressions fail (0 for a division, 2147483647 for ``e + 1``); and columns near the
# limits of their types, rare enough that whether a sum overflows depends on the join's
# multiplicities: ``l`` BIGINT up to 2^63 - 1, ``d38`` DECIMAL(38,2) up to its maximum, ``d18``
# DECIMAL(18,2) and ``d28`` DECIMAL(28,0) near theirs (Spark widens a sum by 10 digits: these
# overflow only as scaled arguments, ``d28 * 1000000000``), ``x`` DOUBLE with NaN, infinities and
# -0.0. ``l`` and ``d38`` are never negative: a sum of non-negative values overflows whatever the
# order of its additions, so vanilla Spark's error does not depend on the order rows arrive in.
# The doubles are sums exact in any order or rounded within the comparison's tolerance.
AGG_COLUMNS = ("k", "j", "g", "i", "e", "l", "d38", "d18", "d28", "x")

LONG_MAX = 2**63 - 1
BIG_LONGS = [2**62, 3 * 2**61, LONG_MAX]
BIG_D38 = ["400000000000000000000000000000000000.00", "999999999999999999999999999999999999.99"]
D18_VALUES = ["9999999999999999.99", "5000000000000000.00", "1.25", "0.00", "-3.50"]
D28_VALUES = ["9999999999999999999999999999", "5000000000000000000000000000", "1", "12345", "-7"]
X_VALUES = [0.5, -1.5, 0.1, 1000.0, -0.0, 3.0]
X_SPECIAL = [float("nan"), float("inf"), float("-inf")]


def _agg_row(rng: random.Random, null_rate: float, key_skew: float, big_rate: float) -> tuple:
    from decimal import Decimal

    def v(make):
        return None if rng.random() < null_rate else make()

    k = 1 if rng.random() < key_skew else v(lambda: rng.randint(0, 5))
    big_l, big_d = rng.random() < big_rate, rng.random() < big_rate
    return (
        k,
        v(lambda: rng.randint(0, 3)),
        v(lambda: rng.randint(0, 2)),
        v(lambda: rng.randint(-5, 9)),
        v(lambda: rng.choice([0, 1, 3, 7, 2147483647])),
        v(lambda: rng.choice(BIG_LONGS) if big_l else rng.randint(0, 9)),
        v(lambda: Decimal(rng.choice(BIG_D38)) if big_d else Decimal(rng.randint(0, 999)) / 100),
        v(lambda: Decimal(rng.choice(D18_VALUES))),
        v(lambda: Decimal(rng.choice(D28_VALUES))),
        v(lambda: rng.choice(X_SPECIAL) if rng.random() < 0.08 else rng.choice(X_VALUES)),
    )


def _agg_table(rng: random.Random, n: int, null_rate: float, key_skew: float, dup_rate: float, big_rate: float) -> list[tuple]:
    rows: list[tuple] = []
    for _ in range(n):
        if rows and rng.random() < dup_rate:
            rows.append(rng.choice(rows))
        else:
            rows.append(_agg_row(rng, null_rate, key_skew, big_rate))
    return rows


def _agg_tables() -> dict[str, list[tuple]]:
    from decimal import Decimal

    rng = random.Random(20240822)  # a seed whose tables have every property above (NULL and duplicate keys on each side …)
    return {
        "ra0": _agg_table(rng, 30, 0.12, 0.4, 0.15, 0.08),  # the fact table: skewed key, duplicates
        "ra1": _agg_table(rng, 10, 0.1, 0.3, 0.2, 0.15),  # a dimension with duplicate keys
        "ra2": _agg_table(rng, 7, 0.4, 0.2, 0.1, 0.15),  # mostly NULLs
        "rae": [],  # empty
        "ra1r": [(1, 1, 0, 2, 2147483647, LONG_MAX, Decimal(BIG_D38[1]), Decimal(D18_VALUES[0]), None, float("inf"))],  # one row, limits
    }


AGG_TABLES = _agg_tables()


def create_tables(spark, folder) -> list[str]:
    """Writes :data:`TABLES`, :data:`STRING_TABLES`, :data:`INTERVAL_TABLES` and :data:`AGG_TABLES` as Parquet under
    ``folder`` (one file each, a few writes at a time) and registers each as a temporary view.
    Returns the view names."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark.sql.types import (
        DecimalType, DoubleType, IntegerType, LongType, StringType, StructField, StructType,
    )

    schema = StructType([StructField(c, IntegerType(), True) for c in COLUMNS])
    s_schema = StructType(
        [StructField(f"{p}_{c}", StringType(coll), True) for coll, p in COLLATIONS.items() for c in COLUMNS]
    )
    i_schema = StructType(
        [StructField(f"s_{c}", LongType(), True) for c in COLUMNS] + [StructField(f"m_{c}", IntegerType(), True) for c in COLUMNS]
    )
    intervals = [f"make_dt_interval(CAST(s_{c} DIV {DAY} AS INT), 0, 0, s_{c} % {DAY}) AS {c}" for c in COLUMNS] + [
        f"make_ym_interval(0, m_{c}) AS y_{c}" for c in COLUMNS
    ]
    a_types = [IntegerType()] * 5 + [LongType(), DecimalType(38, 2), DecimalType(18, 2), DecimalType(28, 0), DoubleType()]
    a_schema = StructType([StructField(c, t, True) for c, t in zip(AGG_COLUMNS, a_types)])
    frames = {name: spark.createDataFrame(rows, schema) for name, rows in TABLES.items()}
    frames.update({name: spark.createDataFrame([r * len(COLLATIONS) for r in rows], s_schema) for name, rows in STRING_TABLES.items()})
    frames.update({name: spark.createDataFrame(rows, i_schema).selectExpr(*intervals) for name, rows in INTERVAL_TABLES.items()})
    frames.update({name: spark.createDataFrame(rows, a_schema) for name, rows in AGG_TABLES.items()})

    def write(name):
        frames[name].coalesce(1).write.mode("overwrite").parquet(f"{folder}/{name}")

    with ThreadPoolExecutor(4) as pool:  # each write is a small job: mostly waiting
        list(pool.map(write, frames))
    for name in frames:
        spark.read.parquet(f"{folder}/{name}").createOrReplaceTempView(name)
    return list(frames)


def sql_of(parts) -> str:
    """Tiny helper for the doctest: a base relation's SQL."""
    (_, table, cols), = parts
    return "SELECT " + ", ".join(f"{c} AS c{i}" for i, c in enumerate(cols)) + f" FROM {table}"
