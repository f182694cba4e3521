"""The command line: ``arrnf explain QUERY.sql --tables DIR --format text|json|dot`` and
``arrnf analyze QUERY.sql --tables DIR --plot FILE``."""
from __future__ import annotations

import json
import os

import pytest

from pyspark_arrnf import Program
from pyspark_arrnf.cli import main
from pyspark_arrnf.data import generate, queries

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
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err  # one message, no stack trace
    assert err[0].startswith("arrnf: the query does not analyze") and "nowhere_at_all" in err[0]


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
