"""The SQL functions from clients that are not Python: Spark's ``spark-sql`` shell and the Thrift/JDBC
server through ``beeline``, both shipped with PySpark, with the extension's jar and setting as a
platform team would configure them. Each runs in its own processes (metastore in a temporary
folder; the server on loopback, stopped afterwards). Spark Connect: test_connect.py; Scala:
ArrnfFunctionsSuite."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from pyspark_arrnf.jar import jar_path

QUERY = "SELECT block, head, arrangements FROM arrnf_blocks('SELECT k, count(*) FROM range(10) t(k) GROUP BY k')"


def _spark_bin(name: str) -> str:
    from pyspark.find_spark_home import _find_spark_home

    return os.path.join(os.environ.get("SPARK_HOME") or _find_spark_home(), "bin", name)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT"))}


def _extension() -> list[str]:
    return ["--master", "local[1]", "--jars", str(jar_path()), "--conf", "spark.sql.extensions=arrnf.ArrnfExtension",
            "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.memory=1g"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_spark_sql_shell(tmp_path):
    out = subprocess.run([_spark_bin("spark-sql"), *_extension(), "-e", QUERY], cwd=tmp_path, env=_env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1].split("\t") == ["query", "Reduce", "1"]


def test_thrift_jdbc_server_through_beeline(tmp_path):
    port = _free_port()
    log = open(tmp_path / "thriftserver.log", "w")
    server = subprocess.Popen(
        [_spark_bin("spark-submit"), "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
         *_extension(), "spark-internal", "--hiveconf", f"hive.server2.thrift.port={port}",
         "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1"],
        cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, Path(tmp_path / "thriftserver.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the Thrift server did not listen within 240 s"
            time.sleep(0.5)
        out = subprocess.run([_spark_bin("beeline"), "-u", f"jdbc:hive2://127.0.0.1:{port}", "-n", "test",
                              "--silent=true", "--outputformat=tsv2", "-e", QUERY],
                             cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-3000:]
        lines = [ln for ln in out.stdout.splitlines() if "\t" in ln]
        assert lines[-2].endswith("block\thead\tarrangements") and lines[-1].split("\t") == ["query", "Reduce", "1"]
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(server.pid, sig)
                server.wait(30)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        log.close()


def test_without_the_extension_the_function_is_unknown(tmp_path):
    """The tests above can fail: the same call on a plain Spark does not know the function."""
    out = subprocess.run([_spark_bin("spark-sql"), "--master", "local[1]", "--conf", "spark.ui.enabled=false", "-e", QUERY],
                         cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "arrnf_blocks" in out.stderr
