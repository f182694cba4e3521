"""Test harness: a real local SparkSession with the extension loaded, and generated TPC data.

* ``SPARK_TESTING`` and ``spark.sql.planChangeValidation`` make Spark itself check every rule:
  idempotence of once-batches, convergence of fixed-point batches (it throws at max iterations
  when testing) and dangling attribute references. ANSI mode stays at Spark's default (on).
* TPC-H and TPC-DS data are generated once at a small scale factor (``ARRNF_TEST_SCALE``, default
  0.01) into ~/.cache/pyspark-arrnf/data and registered as tables of databases ``tpch``/``tpcds``.
"""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("SPARK_TESTING", "1")
os.environ.setdefault("PYSPARK_PYTHON", __import__("sys").executable)

TEST_SCALE = float(os.environ.get("ARRNF_TEST_SCALE", "0.01"))

SESSION_CONF = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.planChangeValidation": "true",
    "spark.driver.memory": "4g",
    "spark.sql.adaptive.enabled": "true",
}


@pytest.fixture(scope="session")
def spark():
    import pyspark_arrnf

    s = pyspark_arrnf.session(conf=SESSION_CONF)
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _database(spark, kind: str) -> str:
    from pyspark_arrnf.data import generate, register_tables

    if not spark.catalog.databaseExists(kind):
        register_tables(spark, generate(kind, TEST_SCALE), database=kind)
    return kind


@pytest.fixture(scope="session")
def tpch_db(spark):
    """The name of the database holding the 8 TPC-H tables."""
    return _database(spark, "tpch")


@pytest.fixture(scope="session")
def tpcds_db(spark):
    """The name of the database holding the 24 TPC-DS tables."""
    return _database(spark, "tpcds")


SEED_NCOLS = 21


@pytest.fixture(scope="module")
def seed_tables(spark, tmp_path_factory):
    """The seed's l1, l2, l3 (seeds/arrnf.md): 21 integer columns #0..#20, as Parquet temporary views."""
    root = tmp_path_factory.mktemp("seed")
    for i, t in enumerate(("l1", "l2", "l3")):
        path = str(root / t)
        spark.range(50 + i).selectExpr(*[f"cast(id % {c + 2} as int) as c{c}" for c in range(SEED_NCOLS)]) \
            .write.parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(t)
    yield ("l1", "l2", "l3")
    for t in ("l1", "l2", "l3"):
        spark.catalog.dropTempView(t)


@pytest.fixture(autouse=True)
def _drop_new_temp_views(request):
    """Temporary views a test leaves behind (the CLI registers tables as views) would shadow the
    tables of later tests (TPC-H's `customer` over TPC-DS's): drop them after each test."""
    if "spark" not in request.fixturenames:
        yield
        return
    spark = request.getfixturevalue("spark")
    before = {t.name for t in spark.catalog.listTables() if t.isTemporary}
    yield
    for t in spark.catalog.listTables():
        if t.isTemporary and t.name not in before:
            spark.catalog.dropTempView(t.name)


@pytest.fixture
def use_db(spark):
    """Switches the current database for one test and back."""
    before = spark.catalog.currentDatabase()

    def use(name: str):
        spark.catalog.setCurrentDatabase(name)

    yield use
    spark.catalog.setCurrentDatabase(before)


@pytest.fixture
def conf(spark):
    """Sets session settings for one test and restores them afterwards: ``conf(k=v)`` with dots."""
    saved = {}

    def set_(settings: dict):
        for k, v in settings.items():
            if k not in saved:
                saved[k] = spark.conf.get(k, None)
            spark.conf.set(k, str(v))

    yield set_
    for k, v in saved.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)
