"""A running notebook session: ``session()`` / ``configure`` never change a setting that would break
it, warn once, and say how to restart with the extension. Each case in its own Python process (a
Spark JVM belongs to its process, as in a notebook kernel)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PRELUDE = """
import json, warnings
from pyspark.sql import SparkSession
import pyspark_arrnf
warnings.simplefilter("always")
out = {}

def explain_ok(spark):
    try:
        spark.range(3).explain("extended")
        return True
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"

def warnings_of(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = call()
    return result, [str(x.message) for x in w if "pyspark-arrnf" in str(x.message)]
"""


def _run(body: str) -> dict:
    script = PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(out))\n"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, p.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_a_running_session_without_the_extension_is_left_working():
    out = _run("""
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        s1, w1 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))
        s2, w2 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))  # the cell run again
        _, w3 = warnings_of(lambda: pyspark_arrnf.configure(SparkSession.builder))
        out["same"] = s1 is spark and s2 is spark
        out["warnings"] = w1 + w2 + w3
        out["provider"] = spark.conf.get("spark.sql.extendedExplainProviders", "")
        out["explain"] = explain_ok(spark)
        out["loaded"] = pyspark_arrnf.is_loaded(spark)
        try:
            pyspark_arrnf.arrnf("select 1", spark)
        except pyspark_arrnf.ArrnfSetupError as e:
            out["arrnf"] = str(e)
        # stopped: the JVM lives on without the jar, so a new session could not load it either
        spark.stop()
        s3, w4 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))
        out["after_stop_warnings"] = w4
        out["after_stop_explain"] = explain_ok(s3)
        out["after_stop_loaded"] = pyspark_arrnf.is_loaded(s3)
        s3.stop()
    """)
    assert out["same"]
    (w,) = out["warnings"]  # once, however often it is called
    assert "already running" in w and "nothing was changed" in w
    assert "restart the Python process" in w and "pyspark_arrnf.session()" in w
    assert out["provider"] in ("", None) and out["explain"] is True and out["loaded"] is False
    assert "Restart the Python process" in out["arrnf"]
    (w,) = out["after_stop_warnings"]
    assert "started without the extension's jar" in w and "restart the Python process" in w
    assert out["after_stop_explain"] is True and out["after_stop_loaded"] is False


def test_a_session_with_the_extension_can_be_stopped_and_made_again():
    out = _run("""
        s1, w1 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))
        s1.sparkContext.setLogLevel("ERROR")
        out["first"] = pyspark_arrnf.is_loaded(s1)
        again, w2 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))  # running, with it
        out["again_same"] = again is s1
        s1.stop()
        s2, w3 = warnings_of(lambda: pyspark_arrnf.session(master="local[1]"))
        out["second"] = pyspark_arrnf.is_loaded(s2)
        out["explain"] = explain_ok(s2)
        out["program"] = str(pyspark_arrnf.arrnf("select k, count(*) from range(10) t(k) group by k", s2))
        out["warnings"] = w1 + w2 + w3
        s2.stop()
    """)
    assert out["first"] and out["again_same"] and out["second"]
    assert out["explain"] is True and "Reduce" in out["program"]
    assert out["warnings"] == []
