"""Spark Connect: a real Connect server started here (loopback only, a random token, stopped
afterwards) with the extension loaded, as a cluster's server would have it; the client is PySpark's
Connect session in this process, next to the classic ``spark`` fixture it is compared with.

From the client, the SQL functions and ``arrnf(df)`` give the same program as the classic session;
the sketch pass runs on the server (``statistics``); what needs the driver's JVM (``measure``,
``forget_statistics``, ``rule_failures``) says so in one line; a
server without the extension, and ``configure`` on a remote builder, say what to put on the server.
"""
from __future__ import annotations

import os
import re
import sys
import warnings

import pytest

import pyspark_arrnf
from pyspark_arrnf import ArrnfError, ArrnfSetupError, arrnf, measure
from pyspark_arrnf.data import generate, queries, register_tables
from pyspark_arrnf.jar import jar_path

sys.path.insert(0, os.path.dirname(__file__))
from conftest import SESSION_CONF, TEST_SCALE  # noqa: E402  (tests/ is not a package)
from connect_server import ConnectServer  # noqa: E402

pytest.importorskip("grpc", reason="the Spark Connect client needs grpcio (bash dev/setup installs it)")

# The plan-shaping settings of the classic fixture, so that both sides plan alike.
SERVER_CONF = {k: v for k, v in SESSION_CONF.items() if k.startswith("spark.sql.") or k == "spark.default.parallelism"}
SERVER_CONF.update({"spark.ui.enabled": "false", "spark.driver.memory": "2g"})
WITH_EXTENSION = {
    "spark.jars": None,  # filled in with the packaged jar
    "spark.sql.extensions": "arrnf.ArrnfExtension",
    "spark.sql.extendedExplainProviders": "arrnf.ArrnfExplainProvider",
}
QUERY = "select k % 3 as g, count(*) as c from range(100) t(k) group by k % 3"
TPCH = ("q3", "q5", "q10", "q18")


def _server(tmp_path_factory, name: str, extension: bool) -> ConnectServer:
    root = tmp_path_factory.mktemp(name)
    conf = dict(SERVER_CONF, **{"spark.sql.warehouse.dir": str(root / "warehouse")})
    if extension:
        conf.update(WITH_EXTENSION, **{"spark.jars": str(jar_path())})
    return ConnectServer(conf, root / "server.log").start()


def _client(server: ConnectServer):
    # Connect's own builder: pyspark.sql.SparkSession.builder refuses a remote session in a process
    # that already runs a classic one (the spark fixture).
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    return RemoteSparkSession.builder.remote(server.url).create()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = _server(tmp_path_factory, "connect", extension=True)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def remote(server):
    r = _client(server)
    register_tables(r, generate("tpch", TEST_SCALE), database="tpch")
    r.catalog.setCurrentDatabase("tpch")
    yield r
    r.stop()


def test_the_extension_is_loaded_on_the_server(remote, spark):
    assert pyspark_arrnf.is_loaded(remote) and pyspark_arrnf.is_loaded(spark)
    assert "Connect" in type(remote).__module__ or "connect" in type(remote).__module__


def test_sql_functions_from_a_remote_client_give_the_classic_program(remote, spark):
    for fn in ("arrnf_json", "arrnf_text"):
        sql = f"select {fn}('{QUERY}', 'q')"
        assert remote.sql(sql).first()[0] == spark.sql(sql).first()[0], fn
    blocks = remote.sql(f"select * from arrnf_blocks('{QUERY}')").collect()
    assert [r.asDict() for r in blocks] == [r.asDict() for r in spark.sql(f"select * from arrnf_blocks('{QUERY}')").collect()]
    assert blocks[0]["head"] == "Reduce"


@pytest.mark.parametrize("q", TPCH)
def test_arrnf_of_a_remote_dataframe_is_the_classic_program(remote, spark, tpch_db, use_db, q):
    use_db(tpch_db)
    sql = queries("tpch")[q]
    classic = arrnf(spark.sql(sql), name=q)
    connect = arrnf(remote.sql(sql), name=q)
    assert connect.to_json() == classic.to_json()
    assert str(connect) == str(classic) and len(connect.blocks) > 1


def test_arrnf_of_sql_text_on_a_remote_session(remote, spark):
    p = arrnf(QUERY, remote, name="by_g")
    assert p.to_json() == arrnf(QUERY, spark, name="by_g").to_json()
    assert p.blocks[-1].name == "by_g" and p.blocks[-1].head.kind == "Reduce"
    # the temporary view it used is gone
    assert not [t for t in remote.catalog.listTables() if t.name.startswith("arrnf_")]


def test_a_remote_query_that_does_not_analyze_is_one_message(remote):
    with pytest.raises(ArrnfError, match=r"^the query does not analyze.*no_such_table") as e:
        arrnf("select * from no_such_table", remote)
    assert "\n" not in str(e.value)


def test_a_command_is_refused_on_the_server_before_it_runs(remote):
    remote.sql("CREATE OR REPLACE TEMPORARY VIEW arrnf_kept_view AS SELECT 1 AS x")
    with pytest.raises(ArrnfError, match=r"^the text is a command \(\w+\), not a query"):
        arrnf("DROP VIEW arrnf_kept_view", remote)
    with pytest.raises(ArrnfError, match=r"needs a classic SparkSession"):
        measure("DROP VIEW arrnf_kept_view", remote)
    assert remote.table("arrnf_kept_view").count() == 1


def test_the_explain_section_from_a_remote_client(remote, capsys):
    remote.sql(QUERY).explain(mode="extended")
    assert "== Extended Information (ArrNF) ==" in capsys.readouterr().out


def test_what_needs_the_driver_jvm_says_so_in_one_line(remote):
    df = remote.sql(QUERY)
    with pytest.raises(ArrnfError) as e:
        measure(df)
    message = str(e.value)
    assert "\n" not in message and message.startswith("measure() needs a classic SparkSession")
    assert "Spark Connect" in message and "arrnf(df) works" in message
    for call, name in ((lambda: pyspark_arrnf.forget_statistics(remote), "forget_statistics()"),
                       (lambda: pyspark_arrnf.rule_failures(remote), "rule_failures()")):
        with pytest.raises(ArrnfError, match=rf"^{name.replace('(', '[(]').replace(')', '[)]')} needs a classic SparkSession"):
            call()


def test_the_sketch_pass_from_a_remote_client(remote):
    """statistics() on Connect takes the sketches in the server's JVM (arrnf_statistics), where the
    estimates of the programs remote clients ask for read them."""
    grouped = "select n_regionkey, count(*) from nation where n_name like 'A%' group by n_regionkey"
    before = arrnf(remote.sql(grouped)).blocks[-1].cost
    assert before.rows is None, before
    (line,) = pyspark_arrnf.statistics(remote, ["nation"])
    assert re.match(r"nation: 25 rows, \d+ columns sketched, 25 rows sampled", line), line
    after = arrnf(remote.sql(grouped)).blocks[-1].cost
    assert after.rows is not None and "sketch" in after.source, after


def test_dataframe_equality_tests_on_a_remote_session(remote, spark):
    """``assert_same_both_ways`` plans and runs each side on the server: the unit join is gone
    with the rules on, there with them off, and the plans read as the classic session's do."""
    from pyspark_arrnf.compare import optimized_plan
    from pyspark_arrnf.testing import assert_same_both_ways

    sql = "select t.id, u.one from range(10) t cross join (select 1 as one) u"
    on, off = assert_same_both_ways(remote, sql)
    assert on.error is None and off.error is None
    assert "Join" not in on.plan and "Join" in off.plan and len(on.rows) == 10
    def ids_aside(plan: str) -> str:  # expression ids are numbered per JVM
        return re.sub(r"#\d+", "#", plan).strip()

    assert ids_aside(optimized_plan(remote.sql(QUERY))) == ids_aside(optimized_plan(spark.sql(QUERY)))


def test_switches_work_from_a_remote_client(remote):
    sql = "select t.id, u.one from range(10) t cross join (select 1 as one) u"
    pyspark_arrnf.set_enabled(remote, False)
    try:
        assert remote.sql(sql).first() is not None  # the session still answers
        off = arrnf(sql, remote).blocks
    finally:
        pyspark_arrnf.set_enabled(remote, True)
    on = arrnf(sql, remote).blocks
    # the unit join is eliminated only with the rules on: the join's arrangements go
    assert sum(b.cost.arrangements for b in on) < sum(b.cost.arrangements for b in off)


def test_configure_on_a_remote_builder_says_what_the_server_needs(server):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.remote(server.url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert pyspark_arrnf.configure(b) is b
    assert "spark.jars" not in b._options and "spark.sql.extensions" not in b._options
    (w,) = [w for w in caught if "Spark Connect server" in str(w.message)]
    text = str(w.message)
    assert f"--jars {jar_path()}" in text and "spark.sql.extensions=arrnf.ArrnfExtension" in text
    assert "spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider" in text


def test_a_server_without_the_extension_says_what_to_put_on_it(tmp_path_factory):
    server = _server(tmp_path_factory, "plain", extension=False)
    try:
        r = _client(server)
        assert not pyspark_arrnf.is_loaded(r)
        with pytest.raises(ArrnfSetupError, match=r"server does not have the pyspark-arrnf extension.*"
                                                  r"--conf spark\.sql\.extensions=arrnf\.ArrnfExtension"):
            arrnf(QUERY, r)
        r.stop()
    finally:
        server.stop()
    assert os.path.exists(server.log_path)


def test_remote_dataframes_of_another_session_of_a_stream_and_of_a_stopped_session(server, remote, spark):
    """A tester's remote client: ``arrnf(df, spark)`` of a DataFrame of another session raised
    ``TABLE_OR_VIEW_NOT_FOUND arrnf_<hex>`` (the package's own view, made in that session); a
    stream's failed "while Spark planned it" (a classic session gives its program, marked a
    stream); after ``stop()`` every call blamed the query or raised Connect's NO_ACTIVE_SESSION."""
    from pyspark_arrnf.testing import assert_same_both_ways

    other = _client(server)
    try:
        p = arrnf(other.sql(QUERY), remote, name="by_g")
        assert p.to_json() == arrnf(QUERY, spark, name="by_g").to_json()
        stream = arrnf(remote.readStream.format("rate").load().groupBy("value").count())
        assert stream.streaming and stream.to_json() == arrnf(
            spark.readStream.format("rate").load().groupBy("value").count()).to_json()
        df = other.sql(QUERY)
    finally:
        other.stop()
    said = "the Spark Connect session is stopped; connect again (SparkSession.builder.remote(...).getOrCreate()) and "
    with pytest.raises(ArrnfError, match=re.escape("arrnf(): " + said + "build the query in it")):
        arrnf(df)
    with pytest.raises(ArrnfError, match=re.escape("arrnf(): " + said)):
        arrnf("select 1", other)
    with pytest.raises(ArrnfError, match=re.escape("statistics(): " + said + "register the tables in it")):
        pyspark_arrnf.statistics(other, ["nation"])
    with pytest.raises(ArrnfError, match=re.escape("assert_same_both_ways(): " + said + "pass that one")):
        assert_same_both_ways(other, "select 1")
