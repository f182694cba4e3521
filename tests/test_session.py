"""Session set-up and the jar: the jar in the package and in the wheel, built for the running Spark,
clear errors for a missing jar, Java or JVM entry point, configure on a builder, the switches, a
failing rule contained, the explain section, the packaged query texts and generated tables."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import pyspark_arrnf
from pyspark_arrnf import ArrnfSetupError
from pyspark_arrnf.compare import optimized_plan
from pyspark_arrnf.jar import built_for, jar_info
from pyspark_arrnf.testing import assert_same_both_ways

UNIT_JOIN = "select t.id, u.one from range(10) t cross join (select 1 as one) u"
JAR = f"arrnf-jvm-rules_2.13-{pyspark_arrnf.__version__}.jar"  # sbt's <name>_<Scala binary>-<version>.jar


def test_extension_is_loaded_and_built_for_the_running_spark(spark):
    assert pyspark_arrnf.is_loaded(spark)
    info = jar_info()
    assert info.path.name == JAR and "pyspark_arrnf" in str(info.path)
    assert info.spark_version == spark.version and spark.version.startswith("4.3.")
    assert info.scala_version == "2.13.18"
    api = spark._jvm.arrnf.Api
    assert api.sparkVersion() == spark.version and api.version() == info.version == pyspark_arrnf.__version__


def test_version_mismatch_names_both_versions():
    with pytest.raises(ArrnfSetupError, match=r"this Spark is 3\.5\.1.*built for Spark 4\.3\.0"):
        built_for("3.5.1")
    assert built_for("4.3.7")  # a patch release differs only in the third number


def test_missing_jar_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setenv("ARRNF_JAR", str(tmp_path / "nope.jar"))
    with pytest.raises(ArrnfSetupError, match="dev/setup"):
        pyspark_arrnf.jar_path()


def test_wrong_file_as_jar(monkeypatch, tmp_path):
    bad = tmp_path / "bad.jar"
    bad.write_text("not a zip")
    monkeypatch.setenv("ARRNF_JAR", str(bad))
    with pytest.raises(ArrnfSetupError, match="not a pyspark-arrnf jar"):
        jar_info()


def test_a_jvm_without_the_entry_point_is_one_clear_message():
    """A session started without the jar (or with an older one) has no ``arrnf.Api``: py4j then
    answers with a package, which the package turns into a set-up error, not a TypeError later."""
    from types import SimpleNamespace

    from py4j.java_gateway import JavaPackage

    from pyspark_arrnf import _jvm

    jvm = SimpleNamespace(arrnf=SimpleNamespace(Api=JavaPackage("arrnf.Api", None)))
    with pytest.raises(ArrnfSetupError, match=r"no class arrnf\.Api.*dev/setup.*Restart the Python process.*pyspark_arrnf\.session\(\)"):
        _jvm.rule_failures(SimpleNamespace(_jvm=jvm))


def test_missing_java_is_one_clear_message(monkeypatch):
    from pyspark_arrnf.session import check_java

    monkeypatch.setenv("JAVA_HOME", "/nonexistent-jdk")
    with pytest.raises(ArrnfSetupError, match="No Java found"):
        check_java()


def test_configure_appends_to_existing_settings(spark):
    from pyspark.sql import SparkSession

    b = SparkSession.Builder().config("spark.sql.extensions", "com.example.Ext").config("spark.jars", "/x.jar")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pyspark_arrnf.configure(b)
        pyspark_arrnf.configure(b)  # twice adds nothing twice
    assert b._options["spark.sql.extensions"] == "com.example.Ext,arrnf.ArrnfExtension"
    assert b._options["spark.jars"].startswith("/x.jar,") and b._options["spark.jars"].endswith("/" + JAR)
    assert b._options["spark.sql.extendedExplainProviders"] == "arrnf.ArrnfExplainProvider"
    # the running session has the extension: nothing to warn about (tests/test_running_session.py
    # covers a running session without it)
    assert not [w for w in caught if "pyspark-arrnf" in str(w.message)]


def test_kill_switch_turns_rewrites_off_and_on_in_a_live_session(spark):
    on, off = assert_same_both_ways(spark, UNIT_JOIN)
    assert "Join" not in on.plan and "Join" in off.plan
    assert sorted(r.id for r in on.rows) == list(range(10))


def _section_header(spark, sql) -> str:
    text = spark._jvm.PythonSQLUtils.explainString(spark.sql(sql)._jdf.queryExecution(), "extended")
    return next(line for line in text.splitlines() if line.startswith("pyspark-arrnf "))


def test_rule_switch_and_excluded_rules(spark, conf):
    """Either switch turns the rule off, and the explain section's first line says which are off."""
    conf({"spark.arrnf.EliminateUnitJoin.enabled": "false"})
    assert "Join" in optimized_plan(spark.sql(UNIT_JOIN))
    assert _section_header(spark, UNIT_JOIN).endswith("; rewrites on (off: EliminateUnitJoin)")
    conf({"spark.arrnf.EliminateUnitJoin.enabled": "true",
          "spark.sql.optimizer.excludedRules": "arrnf.rules.EliminateUnitJoin, arrnf.rules.NegationCancels"})
    assert "Join" in optimized_plan(spark.sql(UNIT_JOIN))
    assert _section_header(spark, UNIT_JOIN).endswith("; rewrites on (off: EliminateUnitJoin, NegationCancels)")
    conf({"spark.sql.optimizer.excludedRules": ""})
    assert "Join" not in optimized_plan(spark.sql(UNIT_JOIN))
    assert _section_header(spark, UNIT_JOIN).endswith("; rewrites on")


def test_a_failing_rule_keeps_the_plan_and_counts(spark, conf):
    before = pyspark_arrnf.rule_failures(spark).get("EliminateUnitJoin", 0)
    conf({"spark.arrnf.testing.failRule": "EliminateUnitJoin"})
    df = spark.sql(UNIT_JOIN)
    assert "Join" in optimized_plan(df)  # the plan the rule was given
    assert df.count() == 10  # and the query still runs
    assert pyspark_arrnf.rule_failures(spark)["EliminateUnitJoin"] > before


def test_explain_has_an_arrnf_section(spark, capsys):
    spark.sql(UNIT_JOIN).explain(mode="extended")
    out = capsys.readouterr().out
    assert "== Extended Information (ArrNF) ==" in out and f"built for Spark {spark.version}" in out


def test_packaged_workloads_are_complete():
    from pyspark_arrnf.data import queries

    assert len(queries("tpch")) == 22 and len(queries("tpcds")) == 103
    assert "c_last_review_date_sk" in queries("tpcds")["q30"]


def test_generated_tables_are_registered(spark, tpch_db, tpcds_db):
    def tables(db):  # temporary views of other tests are listed too: count only the database's own
        return [t for t in spark.catalog.listTables(db) if not t.isTemporary]

    assert len(tables(tpch_db)) == 8
    assert len(tables(tpcds_db)) >= 24
    assert spark.table(f"{tpch_db}.lineitem").count() > 0


def test_session_helper_in_a_new_process_warns_when_configured_late(tmp_path):
    """Configure after getOrCreate(): the extension cannot load, and the user is told why."""
    script = tmp_path / "late.py"
    script.write_text(textwrap.dedent("""
        import warnings
        from pyspark.sql import SparkSession
        import pyspark_arrnf
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            pyspark_arrnf.configure(SparkSession.builder)
        print("LOADED" if pyspark_arrnf.is_loaded(spark) else "NOT LOADED")
        print(" | ".join(str(x.message) for x in w))
        spark.stop()
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "NOT LOADED" in out.stdout, out.stderr[-2000:]
    assert "restart the Python process" in out.stdout


def test_the_explain_section_says_when_the_rules_are_not_loaded(tmp_path):
    """The explain provider set without spark.sql.extensions (or with it misspelled) said "rewrites
    on", though no rule was loaded."""
    script = tmp_path / "provider_only.py"
    script.write_text(textwrap.dedent("""
        from pyspark.sql import SparkSession
        import pyspark_arrnf
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.jars", pyspark_arrnf.jar_path())
                 .config("spark.sql.extensions", "arrnf.ArrnfExtensions")
                 .config("spark.sql.extendedExplainProviders", "arrnf.ArrnfExplainProvider").getOrCreate())
        spark.sql("select id % 3 k, count(*) from range(10) group by 1").explain("extended")
        spark.stop()
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "== Extended Information (ArrNF) ==" in out.stdout, out.stderr[-3000:]
    assert "; rules not loaded (spark.sql.extensions does not name arrnf.ArrnfExtension)" in out.stdout, out.stdout
    assert "rewrites on" not in out.stdout


def test_a_stopped_session_and_misplaced_arguments_are_one_clear_message(spark, tmp_path):
    """After spark.stop(), arrnf() gave a program without Spark's realization and measure() Spark's
    INTERNAL_ERROR; a name or text in spark='s place blamed the query."""
    from pyspark_arrnf import arrnf, measure, measure_stream

    with pytest.raises(TypeError, match=r"arrnf\(\) takes spark=<a SparkSession>, not str"):
        arrnf("select 1", "x")
    with pytest.raises(TypeError, match="takes name="):
        arrnf("select 1", spark, name=5)
    with pytest.raises(TypeError, match="not DataFrame"):
        measure_stream(spark.range(3))
    stream = spark.readStream.format("rate").load().writeStream.format("noop").start()
    try:
        with pytest.raises(ValueError, match="attempts="):
            measure_stream(stream, attempts=0)
    finally:
        stream.stop()
    script = tmp_path / "stopped.py"
    script.write_text(textwrap.dedent("""
        import pyspark_arrnf
        spark = pyspark_arrnf.session(conf={"spark.ui.enabled": "false"})
        df = spark.sql("select id % 3 g, count(*) from range(10) group by 1")
        spark.stop()
        for f in (pyspark_arrnf.arrnf, pyspark_arrnf.measure):
            try:
                f(df)
                print("NO ERROR")
            except pyspark_arrnf.ArrnfError as e:
                print("SAID", e)
        # a Java NullPointerException's text in the returned line; an AttributeError
        from pyspark_arrnf.testing import assert_same_both_ways
        for f in (lambda: print("NO ERROR", pyspark_arrnf.statistics(spark, ["t"])),
                  lambda: assert_same_both_ways(spark, "select 1")):
            try:
                f()
            except pyspark_arrnf.ArrnfError as e:
                print("SAID", e)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    said = [line for line in out.stdout.splitlines() if line.startswith(("SAID", "NO ERROR"))]
    assert said == ["SAID arrnf(): the Spark session is stopped; start one (pyspark_arrnf.session()) and build "
                    "the query in it", "SAID measure(): the Spark session is stopped; start one "
                    "(pyspark_arrnf.session()) and build the query in it",
                    "SAID statistics(): the Spark session is stopped; start one (pyspark_arrnf.session()) and "
                    "register the tables in it", "SAID assert_same_both_ways(): the Spark session is stopped; start "
                    "one (pyspark_arrnf.session()) and pass that one"], out.stdout + out.stderr[-2000:]


def test_a_bad_setting_given_at_session_start_leaves_the_session_working(tmp_path):
    """A bad value in the builder's options (as in spark-defaults.conf) must not fail the session's
    queries, Spark's own included: the switch reads as off, with a warning; SET still refuses it."""
    script = tmp_path / "bad_setting.py"
    script.write_text(textwrap.dedent("""
        from pyspark.sql import SparkSession
        import pyspark_arrnf
        builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                   .config("spark.arrnf.enabled", "maybe")
                   .config("spark.arrnf.EagerAggregation.minReduction", "abc"))
        spark = pyspark_arrnf.configure(builder).getOrCreate()
        print("LOADED" if pyspark_arrnf.is_loaded(spark) else "NOT LOADED")
        print("ROWS", spark.sql("select id % 3 k, count(*) from range(10) group by 1").count())
        print("KEPT", spark.conf.get("spark.arrnf.enabled"), spark.conf.get("spark.sql.shuffle.partitions"))
        print("ESTIMATED", str(pyspark_arrnf.arrnf("select id % 3 k, count(*) c from range(10) group by 1")))
        spark.sql("select 1").explain("extended")
        print("CACHED", spark.range(5).cache().count())
        try:
            spark.conf.set("spark.arrnf.enabled", "perhaps")
            print("SET ACCEPTED")
        except Exception as e:
            print("SET REFUSED", "spark.arrnf.enabled" in str(e))
        # the rewrites on again: the rule reading the bad number is skipped, said once
        spark.conf.set("spark.arrnf.enabled", "true")
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        joined = "select a.k, count(*) from (select id, id % 3 k from range(10)) a join range(10) b on a.id = b.id group by a.k"
        print("JOINED", spark.sql(joined).count(), spark.sql(joined).count())
        print("FAILURES", pyspark_arrnf.rule_failures(spark).get("EagerAggregation"))
        spark.stop()
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "LOADED" in out.stdout and "ROWS 3" in out.stdout, out.stderr[-3000:]
    assert "KEPT maybe 200" in out.stdout and "SET REFUSED True" in out.stdout, out.stdout
    assert "rows≈3 (estimate: exact)" in out.stdout and "CACHED 5" in out.stdout, out.stdout  # the estimator copies them too
    assert "spark.arrnf.enabled='maybe' is not a value it takes" in out.stderr
    assert "it reads as off" in out.stderr
    assert "rewrites off (spark.arrnf.enabled=maybe)" in out.stdout  # the value given, not "false"
    # a rule's bad number: the rule is skipped, said once as the setting's fault with what to do
    failures = int(out.stdout.split("FAILURES ")[1].split()[0])  # (each time the optimizer runs it)
    assert "JOINED 3 3" in out.stdout and failures >= 2, out.stdout
    skipped = ("pyspark-arrnf: rule arrnf.rules.EagerAggregation is skipped, the query keeps its plan: "
               "spark.arrnf.EagerAggregation.minReduction='abc' is not a value it takes: it must be 0 or a finite "
               "factor of 1 or more. SET it right, or unset it (spark.conf.unset) for the default 3.0")
    assert out.stderr.count(skipped) == 1, out.stderr[-3000:]


def test_the_wheel_carries_the_jar_and_the_query_texts(tmp_path):
    """`pip install` of the project gives users everything: the jar is package data."""
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(root)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (wheel,) = tmp_path.glob("pyspark_arrnf-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.endswith(".jar")] == [f"pyspark_arrnf/jars/{JAR}"]
    assert "pyspark_arrnf/workloads/NOTICE.md" in names
    assert sum(n.startswith("pyspark_arrnf/workloads/tpcds/") for n in names) == 103
