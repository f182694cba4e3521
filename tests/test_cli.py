"""The command line: ``arrnf explain QUERY.sql --tables DIR [--format text|json|dot|sql | --compare]``,
``arrnf analyze QUERY.sql --tables DIR --plot FILE``, ``arrnf --version``, and its one error path: bad
input is one line on stderr, ``arrnf: ...``, exit status 2, never a traceback.

Most tests call ``main`` in this process, on the test session (``_session`` gets the running one);
the ``subprocess`` ones run the real command with its own Spark JVM, to see everything it writes."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyspark_arrnf
from pyspark_arrnf import Program
from pyspark_arrnf.cli import main
from pyspark_arrnf.data import generate, queries

sys.path.insert(0, os.path.dirname(__file__))
from soundness import inside_a_join  # noqa: E402

SQL = """select n_name, count(*) as suppliers
from supplier join nation on s_nationkey = n_nationkey
group by n_name order by suppliers desc limit 5
"""


@pytest.fixture
def query_file(spark, tpch_db, tmp_path):
    f = tmp_path / "by_nation.sql"
    f.write_text(SQL)
    return f  # the views the command registers are dropped by conftest's _drop_new_temp_views


def tables():
    """The TPC-H folder the fixtures use (same scale setting as tests/conftest.py)."""
    return str(generate("tpch", float(os.environ.get("ARRNF_TEST_SCALE", "0.01"))))


def test_explain_json_is_a_program(query_file, capsys):
    assert main(["explain", str(query_file), "--tables", tables(), "--format", "json"]) == 0
    p = Program.from_json(json.dumps(json.loads(capsys.readouterr().out)))
    assert p.name == "by_nation" and p.blocks[-1].name == "by_nation"
    kinds = [b.head.kind for b in p.blocks if b.head]
    assert kinds.count("ArrangeBy") == 2 and "Reduce" in kinds
    assert [u.op for u in p.finishing] == ["Sort", "Limit"]


def test_explain_text_and_dot(query_file, capsys):
    assert main(["explain", str(query_file), "--tables", tables(), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("-- ArrNF by_nation:") and "Get supplier" in out and "Get nation" in out
    assert main(["explain", str(query_file), "--tables", tables(), "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph arrnf {")


def test_explain_bad_query_is_one_message(tmp_path, spark, capsys):
    f = tmp_path / "bad.sql"
    f.write_text("select * from nowhere_at_all")
    assert main(["explain", str(f), "--format", "text"]) == 2
    err = _one_error(capsys, "nowhere_at_all")
    assert err.startswith("arrnf: the query does not analyze")


def test_explain_text_is_the_programs_text(query_file, spark, capsys):
    from pyspark_arrnf import arrnf

    assert main(["explain", str(query_file), "--tables", tables(), "--format", "text"]) == 0
    assert capsys.readouterr().out == str(arrnf(SQL, spark, name="by_nation"))


def test_analyze(tpch_db, tmp_path, capsys):
    qf = tmp_path / "q.sql"
    qf.write_text(queries("tpch")["q3"])
    chart = tmp_path / "c.svg"
    assert main(["analyze", str(qf), "--tables", tables(), "--plot", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "-- measured: " in out and chart.exists()


# ---------------------------------------------------------------------------------------------------
# One error path


def _one_error(capsys, *words: str) -> str:
    """The one line the command wrote on stderr, which names ``words`` (and nothing on stdout)."""
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("arrnf: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert out == "", out
    return lines[0]


@pytest.fixture
def no_spark(monkeypatch):
    """For input checked before Spark starts: the command must not ask for a session."""
    import pyspark_arrnf.cli as cli

    def fail(args):
        raise AssertionError("the command started Spark before checking its input")

    monkeypatch.setattr(cli, "_session", fail)


@pytest.fixture
def small_tables(tmp_path):
    """A copy of two TPC-H tables (nation, region) and ``broken.parquet``, garbage bytes."""
    folder = tmp_path / "tables"
    folder.mkdir()
    for t in ("nation", "region"):
        shutil.copy(Path(tables()) / f"{t}.parquet", folder / f"{t}.parquet")
    (folder / "broken.parquet").write_bytes(os.urandom(2000).replace(b"PAR1", b"XXXX"))
    return folder


def _sql(tmp_path, text: str, name: str = "q.sql") -> str:
    f = tmp_path / name
    f.write_text(text)
    return str(f)


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_missing_query_file(command, tmp_path, capsys, no_spark):
    missing = str(tmp_path / "missing.sql")
    assert main([command, missing]) == 2
    _one_error(capsys, missing, "no such file")


def test_a_folder_is_no_query_file(tmp_path, capsys, no_spark):
    assert main(["explain", str(tmp_path)]) == 2
    _one_error(capsys, str(tmp_path), "a folder, not a SQL file")


@pytest.mark.parametrize("text", ["", "  \n\t\n", "-- nothing here\n/* nor\n here */ ;\n"])
@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_a_file_without_sql(command, text, tmp_path, capsys, no_spark):
    f = _sql(tmp_path, text)
    assert main([command, f]) == 2
    _one_error(capsys, f, "no SQL in it")


@pytest.mark.parametrize("command", ["explain", "analyze"])
@pytest.mark.parametrize("text, words", [
    ("selec n_name from nation", ["PARSE_SYNTAX_ERROR", "'selec'"]),
    ("select * from nowhere_at_all", ["TABLE_OR_VIEW_NOT_FOUND", "nowhere_at_all"]),
    ("select no_such_column from nation", ["UNRESOLVED_COLUMN", "no_such_column"]),
])
def test_a_query_that_does_not_analyze(command, text, words, spark, small_tables, tmp_path, capsys):
    assert main([command, _sql(tmp_path, text), "--tables", str(small_tables)]) == 2
    _one_error(capsys, "the query does not analyze", *words)


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_a_command_is_refused_not_run(command, spark, small_tables, tmp_path, capsys):
    """``explain drop.sql`` must not drop: the text is refused before anything runs."""
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW cli_kept AS SELECT 1 AS x")
    assert main([command, _sql(tmp_path, "DROP VIEW cli_kept"), "--tables", str(small_tables)]) == 2
    _one_error(capsys, "is a command", "not a query")
    assert spark.table("cli_kept").count() == 1


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_tables_not_a_folder(command, tmp_path, capsys, no_spark):
    q = _sql(tmp_path, "select 1")
    assert main([command, q, "--tables", q]) == 2
    _one_error(capsys, q, "is not a folder")
    missing = str(tmp_path / "no_such_dir")
    assert main([command, q, "--tables", missing]) == 2
    _one_error(capsys, missing, "no such folder")


def test_tables_without_parquet(tmp_path, capsys, no_spark):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no tables here")
    assert main(["explain", _sql(tmp_path, "select 1"), "--tables", str(empty)]) == 2
    _one_error(capsys, str(empty), "No Parquet files")


def test_tables_pointed_at_one_tables_folder(spark, tmp_path, capsys):
    """``--tables`` given one table's folder (Spark's part files) read each part file as a table, and
    failed on its name: ``Invalid view name: part-00000-….snappy``. Now one line says to give the folder above."""
    spark.range(10).write.parquet(str(tmp_path / "tables" / "t"))
    one = tmp_path / "tables" / "t"
    assert main(["explain", _sql(tmp_path, "select * from t"), "--tables", str(one)]) == 2
    _one_error(capsys, f"{one} is one table's folder (its part files: part-00000-",
               f"give the folder of tables that holds it ({tmp_path / 'tables'})")


def test_a_folder_named_as_no_sql_name_is_a_table_by_its_name(spark, tmp_path, capsys):
    """A folder ``my-table`` (or ``a.b.parquet``) was skipped: ``Invalid view name: my-table``. It is the
    table `my-table` (quoted in SQL, as any such name)."""
    for name in ("my-table", "a.b.parquet", "plain"):
        spark.range(10).write.parquet(str(tmp_path / "tables" / name))
    q = _sql(tmp_path, "select count(*) from `my-table` join `a.b` using (id) join plain using (id)")
    assert main(["analyze", q, "--tables", str(tmp_path / "tables")]) == 0
    out, err = capsys.readouterr()
    assert "Get my-table" in out and "Get a.b" in out and "1 result rows" in out and err == "", (out, err)


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_a_corrupt_table_fails_the_query_that_uses_it_naming_the_file(command, spark, small_tables, tmp_path, capsys):
    q = _sql(tmp_path, "select n_name from nation join broken on true")
    assert main([command, q, "--tables", str(small_tables)]) == 2
    _one_error(capsys, "table broken cannot be used", str(small_tables / "broken.parquet"), "not a readable Parquet file")


def test_a_corrupt_table_is_skipped_for_a_query_that_does_not_use_it(spark, small_tables, tmp_path, capsys):
    q = _sql(tmp_path, "select n_name, r_name from nation join region on n_regionkey = r_regionkey")
    assert main(["explain", q, "--tables", str(small_tables), "--format", "text"]) == 0
    out, err = capsys.readouterr()
    assert "Get nation" in out and "Get region" in out
    assert err.splitlines() == [
        f"arrnf: warning: table broken skipped: {small_tables / 'broken.parquet'}: not a readable Parquet file "
        "(Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file.)"]


def test_an_unreadable_table_file_is_named(spark, small_tables, tmp_path, capsys):
    """A file that cannot be opened at all (a dangling link: root reads any file, whatever its mode)."""
    gone = small_tables / "gone.parquet"
    gone.symlink_to(tmp_path / "nowhere.parquet")
    assert main(["explain", _sql(tmp_path, "select * from gone"), "--tables", str(small_tables)]) == 2
    _one_error(capsys, "table gone cannot be used", str(gone), "cannot be read (No such file or directory)")


def test_register_tables_raises_on_a_corrupt_file_unless_told_to_skip(spark, small_tables):
    from pyspark_arrnf.data import register_tables
    from pyspark_arrnf.errors import ArrnfSetupError

    with pytest.raises(ArrnfSetupError, match="table broken: .*broken.parquet: not a readable Parquet file"):
        register_tables(spark, small_tables)
    skipped = {}
    assert register_tables(spark, small_tables, unreadable=skipped) == ["nation", "region"]
    assert list(skipped) == ["broken"] and str(small_tables / "broken.parquet") in skipped["broken"]


@pytest.mark.parametrize("argv, words", [
    (["explain", "q.sql", "--conf", "spark.sql.ansi.enabled"], ["--conf", "'spark.sql.ansi.enabled' is not KEY=VALUE"]),
    (["analyze", "q.sql", "--conf", "=true"], ["--conf", "'=true' is not KEY=VALUE"]),
    (["data", "tpch", "--scale", "0"], ["--scale", "must be a positive number, not 0"]),
    (["data", "tpcds", "--scale", "-1"], ["--scale", "must be a positive number, not -1"]),
    (["demo", "--scale", "nan"], ["--scale", "must be a positive number"]),
    (["explain", "q.sql", "--format", "json", "--compare"], ["--compare", "not allowed with argument --format"]),
    (["explain"], ["required", "query"]),
    (["explain", "q.sql", "--dialect", "duckdb"], ["--dialect duckdb goes with --format sql"]),
    (["explain", "q.sql", "--format", "text", "--dialect", "postgres"], ["--dialect postgres goes with --format sql"]),
])
def test_bad_options_are_one_line(argv, words, capsys, no_spark):
    assert main(argv) == 2
    _one_error(capsys, *words)


def test_a_refused_conf_value_is_one_line(spark, small_tables, tmp_path, capsys):
    q = _sql(tmp_path, "select 1")
    assert main(["explain", q, "--conf", "spark.sql.shuffle.partitions=many"]) == 2
    _one_error(capsys, "spark.sql.shuffle.partitions", "'many'")
    assert spark.conf.get("spark.sql.shuffle.partitions") != "many"


def test_the_extensions_settings_given_with_conf_are_checked_before_anything_runs(spark, small_tables, tmp_path, capsys):
    """A misspelled spark.arrnf.* key is read by nothing; a bad value given as a new session starts
    is let in (read as off, the warning in a log the command hides), and --compare then failed as if
    the query had: each is refused in one line, exit 2."""
    q = _sql(tmp_path, "select 1")
    assert main(["explain", q, "--conf", "spark.arrnf.EagerAgregation.enabled=false"]) == 2
    _one_error(capsys, "--conf spark.arrnf.EagerAgregation.enabled=false: spark.arrnf.EagerAgregation.enabled is not "
                       "a setting of pyspark-arrnf; did you mean spark.arrnf.EagerAggregation.enabled?")
    assert main(["explain", q, "--compare", "--conf", "spark.arrnf.enabled=maybe"]) == 2
    _one_error(capsys, "spark.arrnf.enabled", "'maybe'")
    assert spark.conf.get("spark.arrnf.enabled") != "maybe"


def test_subprocess_a_bad_extension_setting_is_refused_as_spark_starts(tmp_path):
    r = _arrnf("explain", _sql(tmp_path, "select 1"), "--compare", "--conf", "spark.arrnf.enabled=maybe")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("arrnf: --conf spark.arrnf.enabled=maybe is refused: ") and "'maybe'" in line, line


def test_any_spark_error_is_one_line(spark, monkeypatch, tmp_path, capsys):
    """The backstop: a Spark or JVM error from wherever is Java's first line, not Py4J's "An error
    occurred while calling ..."."""
    import pyspark_arrnf.cli as cli

    monkeypatch.setattr(cli, "_analyzed", lambda *a: spark._jvm.java.lang.Class.forName("no.such.Klass"))
    assert main(["explain", _sql(tmp_path, "select 1")]) == 2
    assert _one_error(capsys) == "arrnf: java.lang.ClassNotFoundException: no.such.Klass"


# ---------------------------------------------------------------------------------------------------
# explain plans; --compare runs


FAILS_WHEN_RUN = [
    ("select assert_true(n_nationkey < 0) as never from nation", "[USER_RAISED_EXCEPTION]"),
    ("select n_name, 1 div (n_nationkey - n_nationkey) as boom from nation", "[DIVIDE_BY_ZERO]"),  # ANSI
]


@pytest.mark.parametrize("text, error", FAILS_WHEN_RUN)
def test_explain_plans_without_running(text, error, spark, small_tables, tmp_path, capsys):
    q = _sql(tmp_path, text, "fails.sql")
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    assert main(["explain", q, "--tables", str(small_tables)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("== Optimized plan, with pyspark-arrnf ==\n")
    assert "== ArrNF ==\n-- ArrNF fails:" in out and "== ArrNF costs (" in out
    assert "vanilla" not in out and "== Results" not in out
    assert err.splitlines() == [f"arrnf: warning: table broken skipped: {small_tables / 'broken.parquet'}: "
                                "not a readable Parquet file (Parquet magic bytes not found in footer. Either "
                                "the file is corrupted or this is not a parquet file.)"]
    assert main(["explain", q, "--tables", str(small_tables), "--compare"]) == 1
    out, err = capsys.readouterr()
    assert "== Optimized plan, vanilla Spark ==" in out and "== Results: without the extension failed, with it failed ==" in out
    lines = err.splitlines()  # the warning about broken.parquet, then the failure
    assert len(lines) == 2 and lines[1].startswith(f"arrnf: the query failed when run: {error} "), err


def test_explain_compare_prints_both_plans_and_the_results(query_file, spark, capsys):
    assert main(["explain", str(query_file), "--tables", tables(), "--compare"]) == 0
    out, err = capsys.readouterr()
    heads = [ln for ln in out.splitlines() if ln.startswith("== ")]
    assert heads[:4] == ["== Optimized plan, vanilla Spark ==", "== Optimized plan, with pyspark-arrnf ==",
                         "== Why the rules fired, or declined ==", "== ArrNF =="]
    assert ("== Why the rules fired, or declined ==\nEagerAggregation declined: the pre-aggregate's rows are "
            "unknown: no distinct counts for its filter, join or grouping columns; take the sketch pass") in out, out
    assert heads[4].startswith("== ArrNF costs (") and "-- ArrNF by_nation:" in out
    assert heads[5] == "== Results: 5 rows with the extension, 5 without; equal ==", heads
    assert err == ""


# ---------------------------------------------------------------------------------------------------
# analyze


def test_analyze_a_query_that_fails_when_run(spark, small_tables, tmp_path, capsys):
    q = _sql(tmp_path, FAILS_WHEN_RUN[0][0])
    assert main(["analyze", q, "--tables", str(small_tables)]) == 1
    out, err = capsys.readouterr()
    assert "-- the query FAILED: SparkRuntimeException: [USER_RAISED_EXCEPTION]" in out  # the report
    assert err.splitlines()[1:] == ["arrnf: the query failed when run: SparkRuntimeException: "
                                    "[USER_RAISED_EXCEPTION] '(n_nationkey < 0)' is not true! SQLSTATE: P0001"]


def test_analyze_plot_needs_matplotlib_before_spark_starts(monkeypatch, tmp_path, capsys, no_spark):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    q = _sql(tmp_path, "select 1")
    assert main(["analyze", q, "--plot", str(tmp_path / "c.png")]) == 2
    assert _one_error(capsys) == "arrnf: --plot needs matplotlib: pip install 'pyspark-arrnf[viz]'"


@pytest.mark.parametrize("name, words", [("c.txt", ["c.txt", ".png, .svg or .pdf"]),
                                         ("no/such/dir/c.png", ["no such folder"])])
def test_analyze_plot_file_is_checked_first(name, words, tmp_path, capsys, no_spark):
    assert main(["analyze", _sql(tmp_path, "select 1"), "--plot", str(tmp_path / name)]) == 2
    _one_error(capsys, *words)


# ---------------------------------------------------------------------------------------------------
# --version


def test_version(capsys):
    import pyspark

    info = pyspark_arrnf.jar_info()
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == (
        f"arrnf {pyspark_arrnf.__version__} (jar {info.version}, built for Spark {info.spark_version}, "
        f"Scala {info.scala_version}; PySpark {pyspark.__version__})\n")


def test_version_without_a_jar(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ARRNF_JAR", str(tmp_path / "none.jar"))
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"arrnf {pyspark_arrnf.__version__} (no extension jar") and "PySpark" in out


# ---------------------------------------------------------------------------------------------------
# The real command, in its own process (a Spark JVM each): everything it writes on stderr


def _arrnf(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    root = str(Path(pyspark_arrnf.__file__).resolve().parent.parent)
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]), **(env or {})}
    full_env.pop("SPARK_TESTING", None)
    return subprocess.run([sys.executable, "-m", "pyspark_arrnf.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=300)


def test_subprocess_version_starts_no_spark():
    r = _arrnf("--version", env={"SPARK_HOME": "/nonexistent", "JAVA_HOME": "/nonexistent"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"arrnf {pyspark_arrnf.__version__} (jar ")


def test_subprocess_corrupt_table_is_one_line(small_tables, tmp_path):
    r = _arrnf("explain", _sql(tmp_path, "select * from broken"), "--tables", str(small_tables))
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        f"arrnf: table broken cannot be used: {small_tables / 'broken.parquet'}: not a readable Parquet file "
        "(Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file.)"]
    assert r.stdout == ""


def test_subprocess_analyze_failing_at_run_time_is_one_line_and_the_report(small_tables, tmp_path):
    log = tmp_path / "spark.log"
    r = _arrnf("analyze", _sql(tmp_path, "select n_name, 1 div (n_nationkey - n_nationkey) from nation"),
               "--tables", str(tmp_path / "tables"), "--spark-log", str(log))
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith("arrnf: warning: table broken skipped: ")
    assert lines[1:] == ["arrnf: the query failed when run: ArithmeticException: [DIVIDE_BY_ZERO] Division by "
                         "zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. If necessary "
                         "set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22012"]
    assert "-- the query FAILED: ArithmeticException: [DIVIDE_BY_ZERO]" in r.stdout
    assert "ERROR Executor" in log.read_text()  # Spark's log went there, not to stderr


# ---------------------------------------------------------------------------------------------------
# stats, and --stats: the sketch pass, only when asked


@pytest.fixture
def no_sketches(spark):
    """No sketch taken before the test, none left after it (they live in the JVM, across tests)."""
    from pyspark_arrnf import forget_statistics

    forget_statistics(spark)
    yield
    forget_statistics(spark)


def test_stats_prints_a_line_per_table(spark, small_tables, no_sketches, capsys):
    assert main(["stats", "--tables", str(small_tables)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:2] == ["nation: 25 rows, 4 columns sketched, 25 rows sampled (1 files)", "region: 5 rows, 3 columns sketched, 5 rows sampled (1 files)"]
    assert len(lines) == 3 and re.fullmatch(r"-- sketch pass: 2 tables in \d+\.\d s", lines[2]), out
    assert err.splitlines() == [f"arrnf: warning: table broken skipped: {small_tables / 'broken.parquet'}: "
                                "not a readable Parquet file (Parquet magic bytes not found in footer. Either "
                                "the file is corrupted or this is not a parquet file.)"]
    assert main(["stats", "--tables", str(small_tables), "REGION"]) == 0  # a name as Spark takes it
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "region: 5 rows, 3 columns sketched, 5 rows sampled (1 files)" and len(out.splitlines()) == 2
    assert re.fullmatch(r"-- sketch pass: 1 table in \d+\.\d s", out.splitlines()[1]) and err == ""


def test_stats_an_unknown_table_is_one_line_before_spark_starts(small_tables, capsys, no_spark):
    assert main(["stats", "--tables", str(small_tables), "nation", "nowhere"]) == 2
    assert _one_error(capsys) == f"arrnf: no table nowhere in {small_tables} (its tables: broken, nation, region)"
    assert main(["stats", "nation"]) == 2
    _one_error(capsys, "the following arguments are required: --tables")


def test_stats_on_a_corrupt_table_is_one_line(spark, small_tables, capsys):
    assert main(["stats", "--tables", str(small_tables), "broken"]) == 2
    _one_error(capsys, "table broken cannot be used", str(small_tables / "broken.parquet"), "not a readable Parquet file")


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_stats_option_takes_the_sketch_pass_over_the_tables_read(command, spark, small_tables, no_sketches, tmp_path,
                                                                capsys):
    """Estimates carry the ``sketch`` source only with ``--stats``; the pass reads only the tables the
    query reads (here not region), and says so on stderr."""
    q = _sql(tmp_path, "select n_name, count(*) from nation where n_regionkey > 1 group by n_name")
    assert main([command, q, "--tables", str(small_tables)]) == 0
    out, err = capsys.readouterr()
    assert "Get nation" in out and ", sketch)" not in out and "sketch" not in err
    assert "rows=unknown (no distinct counts for its filter, join or grouping columns; take the sketch pass" in out
    assert main([command, q, "--tables", str(small_tables), "--stats"]) == 0
    out, err = capsys.readouterr()
    # (nation's 25 rows are sampled whole: the filter's share of them is exact)
    assert "(estimate: file metadata, sketch, sample)" in out, out
    lines = err.splitlines()
    assert lines[0].startswith("arrnf: warning: table broken skipped: ") and len(lines) == 2, err
    assert re.fullmatch(r"-- sketch pass: nation in \d+\.\d s", lines[1]), err


@pytest.fixture
def sales_tables(spark, tmp_path):
    """Parquet tables: sales (20,000 rows over 100 customers), customers (20,000)."""
    folder = tmp_path / "sales_tables"
    spark.range(20000).selectExpr("id % 100 AS ck", "cast(id % 7 AS int) AS q").write.parquet(str(folder / "sales"))
    spark.range(20000).selectExpr("id AS ck", "concat('c', id) AS name").write.parquet(str(folder / "customers"))
    return folder


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_stats_option_informs_the_rules_choices(command, spark, sales_tables, no_sketches, conf, tmp_path, capsys):
    """With ``--stats`` the query is planned after the sketch pass, so EagerAggregation's cost guard
    reads the distinct counts: the sales are pre-aggregated by customer (100 groups of 20,000 rows)
    below the join. Without them it declines (the pre-aggregate's rows are unknown)."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})  # a shuffled join: where pre-aggregating pays
    q = _sql(tmp_path, "select c.name, sum(s.q), count(*) from sales s join customers c on s.ck = c.ck group by c.name")
    pre_aggregate = re.compile(r"Reduce keys=\[#\d+\{ck\}\]")  # the ArrNF program's block of it
    why = "== Why the rules fired, or declined ==\nEagerAggregation "
    assert main([command, q, "--tables", str(sales_tables)]) == 0
    out, _ = capsys.readouterr()
    assert not pre_aggregate.search(out), out
    if command == "explain":
        assert why + "declined: the pre-aggregate's rows are unknown: no distinct counts" in out, out
    assert main([command, q, "--tables", str(sales_tables), "--stats"]) == 0
    out, err = capsys.readouterr()
    assert pre_aggregate.search(out), out
    assert re.fullmatch(r"-- sketch pass: customers, sales in \d+\.\d s", err.strip()), err
    if command == "explain":
        plan = out[out.index("== Optimized plan, with pyspark-arrnf ==\n"):out.index(why)]
        assert inside_a_join(plan, r"Aggregate \[ck#"), plan
        assert why + "fired: pre-aggregating sales by [ck]: estimated rows 20000 → " in out, out


def test_stats_on_a_table_that_fails_when_read_says_why_and_exits_1(spark, tmp_path, no_sketches, capsys):
    """A file whose footer reads (so it is registered) but whose data does not: its line says why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "tables"
    folder.mkdir()
    t = pa.table({"a": list(range(100_000)), "b": [f"s{i}" for i in range(100_000)]})
    pq.write_table(t.slice(0, 10), folder / "good.parquet")
    pq.write_table(t, folder / "bad.parquet", compression="snappy")
    with open(folder / "bad.parquet", "r+b") as f:  # data pages overwritten, the footer kept
        f.seek(100)
        f.write(b"\xff" * ((folder / "bad.parquet").stat().st_size // 2))
    assert main(["stats", "--tables", str(folder)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("bad: not sketched: [FAILED_READ_FILE") and str(folder / "bad.parquet") in lines[0]
    assert lines[1] == "good: 10 rows, 2 columns sketched, 10 rows sampled (1 files)" and lines[2].startswith("-- sketch pass: 2 tables")
    assert err.splitlines() == [f"arrnf: the sketch pass failed on 1 of 2 tables: {lines[0]}"]


# ---------------------------------------------------------------------------------------------------
# The cost table, --help, a query that fails while planned, the session, partitioned tables, demo


def test_cost_table_says_unknown_and_counts_whole_numbers(spark, small_tables, tmp_path, capsys):
    """Not pandas' floats: ``25.0`` beside ``NaN`` (or ``None`` where a whole column is unknown)."""
    q = _sql(tmp_path, "select n_name, count(*) from nation join region on n_regionkey = r_regionkey "
                       "where n_nationkey > 3 group by n_name")
    assert main(["explain", q, "--tables", str(small_tables)]) == 0
    out = capsys.readouterr().out
    table = out[out.index("== ArrNF costs ("):].splitlines()[1:]
    header = table[0].split()
    assert header[:8] == ["block", "head", "spark", "arrangements", "rows", "bytes", "source", "sharing"], table
    nation, region, result = table[1:4]  # nation filtered (rows unknown without the sketch pass), region whole
    assert re.match(r"\s*q\.tmp0 ArrangeBy\s+none\s+1 unknown unknown unknown: no distinct counts", nation), table
    assert re.search(r"\s1\s+5\s+80\s+file metadata\s+1$", region), table
    assert re.match(r"\s*q\s+Reduce .* 1 unknown unknown unknown: ", result), table
    # every block's rows unknown: the column was None (objects), not NaN
    q = _sql(tmp_path, "select n_name, count(*) from nation where n_nationkey > 3 group by n_name")
    assert main(["explain", q, "--tables", str(small_tables)]) == 0
    out = capsys.readouterr().out
    (only,) = out[out.index("== ArrNF costs ("):].splitlines()[2:]
    assert re.match(r"\s*q\s+Reduce .* 1 unknown unknown unknown: ", only), only


@pytest.mark.parametrize("command", ["explain", "analyze"])
def test_stats_option_help_fits_the_command(command, capsys):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("without it, explain reads no data" in text) == (command == "explain"), text
    if command == "analyze":
        assert "analyze runs the query either way" in text


def test_a_query_that_fails_while_planned_exits_1_in_one_line(spark, tmp_path, capsys):
    """Under ANSI (the test session's default) Spark folds 1/0 while planning: analyze has no report,
    --compare no plan to print (not its header alone); both exit 1, as a query that fails when run."""
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    q = _sql(tmp_path, "select 1/0 as x")
    line = ("arrnf: the query failed while Spark planned it, before it ran (no plan to report): "
            "[DIVIDE_BY_ZERO] Division by zero.")
    assert main(["analyze", q]) == 1
    assert _one_error(capsys).startswith(line)
    assert main(["explain", q, "--compare"]) == 1
    assert _one_error(capsys).startswith(line)
    for form in ([], ["--format", "json"]):  # (it exited 2, after the optimized plan's header alone)
        assert main(["explain", q, *form]) == 1
        assert _one_error(capsys).startswith(line)


def test_analyze_says_which_java_exception_failed_the_query(spark, tmp_path, capsys):
    """An exception PySpark does not convert (a SparkException reading a corrupt file) is named by
    its Java class, not py4j's Py4JJavaError."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "tables"
    folder.mkdir()
    pq.write_table(pa.table({"a": list(range(100_000))}), folder / "bad.parquet")
    with open(folder / "bad.parquet", "r+b") as f:  # data pages overwritten, the footer kept
        f.seek(100)
        f.write(b"\xff" * ((folder / "bad.parquet").stat().st_size // 2))
    assert main(["analyze", _sql(tmp_path, "select sum(a) from bad"), "--tables", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert "-- the query FAILED: SparkException: [FAILED_READ_FILE" in out, out
    assert err.startswith("arrnf: the query failed when run: SparkException: [FAILED_READ_FILE") and "Py4J" not in err


def test_subprocess_a_session_that_does_not_start_is_one_line(small_tables, tmp_path):
    """Spark builds a session's state on first use; a setting it refuses is said as such, not as
    "No readable Parquet table ...: Error while instantiating 'SessionStateBuilder'"."""
    r = _arrnf("explain", _sql(tmp_path, "select * from nation"), "--tables", str(small_tables),
               "--conf", "spark.sql.shuffle.partitions=abc")
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        "arrnf: the Spark session does not start with these settings: [INVALID_CONF_VALUE.TYPE_MISMATCH] The value "
        "'abc' in the config \"spark.sql.shuffle.partitions\" is invalid. It should be a/an 'int' value. SQLSTATE: 22022"]
    assert r.stdout == ""


def test_subprocess_register_tables_does_not_take_a_broken_session_for_unreadable_tables(small_tables):
    root = str(Path(pyspark_arrnf.__file__).resolve().parent.parent)
    script = ("import pyspark_arrnf\n"
              "from pyspark_arrnf.data import register_tables\n"
              "spark = pyspark_arrnf.session(conf={'spark.ui.enabled': 'false', 'spark.sql.shuffle.partitions': 'abc'})\n"
              f"register_tables(spark, {str(small_tables)!r}, unreadable={{}})\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    env.pop("SPARK_TESTING", None)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("pyspark_arrnf.errors.ArrnfSetupError: the Spark session does not start with these "
                           "settings: [INVALID_CONF_VALUE.TYPE_MISMATCH]"), r.stderr[-2000:]


@pytest.fixture
def partitioned_tables(spark, small_tables):
    """small_tables and ``sales``, a folder partitioned by year (``sales/year=2023/part-....parquet``)."""
    spark.range(12).selectExpr("id", "cast(2023 + id % 3 as int) as year") \
        .write.partitionBy("year").parquet(str(small_tables / "sales"))
    return small_tables


def test_a_partitioned_folder_is_a_table(spark, partitioned_tables, no_sketches, tmp_path, capsys):
    """Every Parquet file or folder is a table: a folder of ``key=value`` folders too, with its
    partition column, for analyze (which plans it too) and stats alike."""
    q = _sql(tmp_path, "select year, count(*) as n from sales group by year")
    assert main(["analyze", q, "--tables", str(partitioned_tables), "--json"]) == 0
    out, _ = capsys.readouterr()
    assert Program.from_json(out).measurement.result_rows == 3
    assert main(["stats", "--tables", str(partitioned_tables), "sales"]) == 0
    out, err = capsys.readouterr()
    assert re.fullmatch(r"sales: 12 rows, 2 columns sketched, 12 rows sampled \(\d+ files\)", out.splitlines()[0]), out
    assert main(["stats", "--tables", str(partitioned_tables)]) == 0  # all tables: sales among them
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()[:-1]] == ["nation", "region", "sales"]


def test_register_tables_partitioned_folder_as_a_catalog_table(spark, partitioned_tables):
    from pyspark_arrnf.data import register_tables

    try:
        assert "sales" in register_tables(spark, partitioned_tables, database="arrnf_parts", unreadable={})
        rows = spark.sql("select year, count(*) from arrnf_parts.sales group by year order by year").collect()
        assert [tuple(r) for r in rows] == [(2023, 4), (2024, 4), (2025, 4)]
    finally:
        spark.sql("DROP DATABASE IF EXISTS arrnf_parts CASCADE")


def test_demo_query_says_what_it_is(spark, tpcds_db, use_db, conf):
    """The demo's comment names the rewrite its plan shows: the cross join with a one-row table goes."""
    from pyspark_arrnf.cli import DEMO_QUERY
    from pyspark_arrnf.compare import optimized_plan

    use_db(tpcds_db)
    comment = " ".join(line.lstrip("- ") for line in DEMO_QUERY.splitlines() if line.startswith("--"))
    assert "EliminateUnitJoin" in comment and "UNION ALL of joins" not in comment and "brand" not in comment
    assert "Join Cross" not in optimized_plan(spark.sql(DEMO_QUERY))
    conf({"spark.arrnf.EliminateUnitJoin.enabled": "false"})
    assert "Join Cross" in optimized_plan(spark.sql(DEMO_QUERY))


def test_the_sketch_pass_of_the_command_line_takes_folders_named_as_no_sql_name(spark, tmp_path, capsys):
    """A folder ``my table.parquet`` is the table `my table`: ``arrnf stats`` exited 1 with
    ``my table: not sketched: [PARSE_SYNTAX_ERROR]``, and ``explain --stats`` exited 2 with "the
    query cannot be planned", though plain ``explain`` planned it (a tester)."""
    for name in ("my table.parquet", "a.b.parquet"):
        spark.range(10).write.parquet(str(tmp_path / "tables" / name))
    q = _sql(tmp_path, "select count(*) from `my table` join `a.b` using (id)")
    assert main(["stats", "--tables", str(tmp_path / "tables")]) == 0
    out, _ = capsys.readouterr()
    assert "my table: 10 rows" in out and "a.b: 10 rows" in out, out
    assert main(["explain", q, "--tables", str(tmp_path / "tables"), "--stats"]) == 0
    out, err = capsys.readouterr()
    assert "-- sketch pass: " in err and "warning" not in err and "Get my table" in out, (out, err)
