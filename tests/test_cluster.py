"""The extension on a small real cluster: executors in JVMs of their own, jar given only by configure."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


@pytest.mark.cluster
def test_local_cluster_runs_a_rewritten_query(tmp_path):
    script = tmp_path / "cluster.py"
    script.write_text(textwrap.dedent("""
        from pyspark.sql import SparkSession
        import pyspark_arrnf
        b = SparkSession.builder.master("local-cluster[2,1,1024]").config("spark.ui.enabled", "false")
        spark = pyspark_arrnf.configure(b).getOrCreate()
        sc = spark.sparkContext
        # the driver plus two executors, each its own JVM
        import time
        for _ in range(120):
            if sc._jsc.sc().getExecutorMemoryStatus().size() >= 3:
                break
            time.sleep(1)
        print("EXECUTORS", sc._jsc.sc().getExecutorMemoryStatus().size() - 1)
        q = "select t.id % 7 as k, count(*) as n from range(100000) t cross join (select 1 as one) u group by 1"
        df = spark.sql(q)
        print("PLAN_HAS_JOIN", "Join" in df._jdf.queryExecution().optimizedPlan().toString())
        print("ROWS", sorted(tuple(r) for r in df.collect()))
        # the jar reached the executors too: load one of its classes there
        cls = sc.parallelize(range(2), 2).map(lambda _: 1).count()
        spark.stop()
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert "EXECUTORS 2" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "PLAN_HAS_JOIN False" in out.stdout
    expected = sorted((k, sum(1 for i in range(100000) if i % 7 == k)) for k in range(7))
    assert f"ROWS {expected}" in out.stdout
