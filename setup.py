"""Building the package builds the extension jar first, so that the jar is part of the package data."""
import os
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
JAR = ROOT / "pyspark_arrnf" / "jars" / "arrnf-jvm-rules.jar"


class BuildJarThenPy(build_py):
    def run(self):
        if not JAR.exists():
            # Compile against the PySpark of the build environment (a build requirement).
            import pyspark

            env = dict(os.environ, ARRNF_SPARK_JARS=os.path.join(os.path.dirname(pyspark.__file__), "jars"))
            subprocess.run(["bash", str(ROOT / "dev" / "build-jar")], check=True, env=env)
        super().run()


setup(cmdclass={"build_py": BuildJarThenPy})
