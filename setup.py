"""Building the package builds the extension jar first, so that the jar is part of the package data.

From a source checkout or an sdist, when ``pyspark_arrnf/jars/<JAR_NAME>`` is missing, ``dev/build-jar``
compiles it with sbt (brought up from Maven Central by ``dev/sbt``: Java 17+ and Maven are needed)
against the PySpark of the build environment (a build requirement).
"""
import os
import runpy
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
JAR_NAME = runpy.run_path(str(ROOT / "pyspark_arrnf" / "_version.py"))["JAR_NAME"]
JAR = ROOT / "pyspark_arrnf" / "jars" / JAR_NAME


class BuildJarThenPy(build_py):
    def run(self):
        if not JAR.exists():
            how = ("building the extension jar from source needs Java 17+ and Maven (Maven fetches sbt's "
                   "launcher once; e.g. apt-get install openjdk-17-jdk-headless maven)")
            if not shutil.which("java"):
                raise SystemExit(f"pyspark-arrnf: no 'java' on PATH: {how}.")
            # Compile against the PySpark of the build environment (a build requirement).
            import pyspark

            env = dict(os.environ, ARRNF_SPARK_JARS=os.path.join(os.path.dirname(pyspark.__file__), "jars"))
            done = subprocess.run(["bash", str(ROOT / "dev" / "build-jar")], env=env)
            if done.returncode != 0 or not JAR.exists():
                raise SystemExit(f"pyspark-arrnf: dev/build-jar failed to make {JAR} (see above); {how}.")
        # build/lib keeps what an earlier build copied there: a jar of another version (or name)
        # would go into the wheel beside this one.
        for stale in (Path(self.build_lib) / "pyspark_arrnf" / "jars").glob("*.jar"):
            if stale.name != JAR_NAME:
                stale.unlink()
        super().run()


setup(cmdclass={"build_py": BuildJarThenPy})
