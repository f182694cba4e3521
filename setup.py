"""Building the package builds the extension jar first, so that the jar is part of the package data."""
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
JAR = ROOT / "pyspark_arrnf" / "jars" / "arrnf-jvm-rules.jar"


class BuildJarThenPy(build_py):
    def run(self):
        if not JAR.exists():
            subprocess.run(["bash", str(ROOT / "dev" / "build-jar")], check=True)
        super().run()


setup(cmdclass={"build_py": BuildJarThenPy})
