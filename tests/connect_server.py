"""A real Spark Connect server for the tests, in its own process: PySpark's ``spark-submit`` runs
``SparkConnectServer`` (its jar ships with PySpark) bound to 127.0.0.1 on a free port, behind a
random token, with the extension's jar and settings as a cluster's server would have them.

Its own process, not ``SparkSession.builder.remote("local")``: that one starts the server inside
the test process, which refuses when a classic session already runs there (pytest's shared
``spark`` fixture), and would share its JVM. ``stop()`` ends the server's process group (it was
started as its own), so no JVM is left behind.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class ConnectServer:
    """``ConnectServer(conf, log).start()``; ``url`` is the client's connection string."""

    def __init__(self, conf: dict[str, str], log: Path, master: str = "local[2]"):
        self.conf, self.log_path, self.master = conf, log, master
        self.port = free_port()
        self.token = uuid.uuid4().hex
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        # "localhost": PySpark sends a token without TLS only to that host (local channel credentials).
        return f"sc://localhost:{self.port}/;token={self.token}"

    def start(self, timeout: float = 240.0) -> "ConnectServer":
        from pyspark.find_spark_home import _find_spark_home

        spark_home = os.environ.get("SPARK_HOME") or _find_spark_home()
        cmd = [os.path.join(spark_home, "bin", "spark-submit"), "--class", SERVER_CLASS,
               "--name", "arrnf-test-connect-server", "--master", self.master,
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", f"spark.connect.grpc.binding.port={self.port}"]
        for k, v in self.conf.items():
            cmd += ["--conf", f"{k}={v}"]
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE")}
        # The token goes through the environment, as PySpark's own launcher passes it: not on argv.
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = self.token
        env["SPARK_CONNECT_MODE"] = "0"
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Connect server exited with {self.process.returncode}:\n{self.log()}")
            if _listening(self.port):
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Connect server did not listen within {timeout:.0f}s:\n{self.log()}")

    def log(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        """Ends the server's process group (spark-submit and its JVM), politely first."""
        p = self.process
        if p is None:
            return
        if p.poll() is None:
            for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._log.close()
        self.process = None
