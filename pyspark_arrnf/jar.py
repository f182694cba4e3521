"""Where the extension jar is and what it was built for.

The jar travels inside the package as ``pyspark_arrnf/jars/arrnf-jvm-rules_2.13-<version>.jar``
(sbt's name for it, ``JAR_NAME``, from ``_version.py``); ``ARRNF_JAR`` points elsewhere for
development. Its ``arrnf-build.properties`` names the Spark it was compiled against.

>>> built_for("4.3.0") and True
True
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ._version import JAR_NAME
from .errors import ArrnfSetupError


@dataclass(frozen=True)
class JarInfo:
    path: Path
    spark_version: str
    scala_version: str
    version: str


def jar_path() -> Path:
    """The extension jar, or a clear error when it has not been built."""
    override = os.environ.get("ARRNF_JAR")
    path = Path(override) if override else Path(str(resources.files("pyspark_arrnf") / "jars" / JAR_NAME))
    if not path.is_file():
        raise ArrnfSetupError(
            f"The pyspark-arrnf extension jar is missing ({path}). From a source checkout run "
            "'bash dev/setup' (it builds the jar with sbt and installs the package); from a wheel, "
            "reinstall pyspark-arrnf."
        )
    return path


def jar_info(path: Path | None = None) -> JarInfo:
    """Reads what the jar was built for from the properties sbt put inside it."""
    path = path or jar_path()
    try:
        with zipfile.ZipFile(path) as z:
            text = z.read("arrnf-build.properties").decode()
    except (KeyError, zipfile.BadZipFile) as e:
        raise ArrnfSetupError(f"{path} is not a pyspark-arrnf jar ({e}); rebuild it with 'bash dev/setup'.") from e
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return JarInfo(path, props.get("spark.version", "?"), props.get("scala.version", "?"), props.get("arrnf.version", "?"))


def major_minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def built_for(spark_version: str, info: JarInfo | None = None) -> bool:
    """Whether the jar suits a Spark of this version (same major.minor), raising if not."""
    info = info or jar_info()
    if major_minor(info.spark_version) != major_minor(spark_version):
        raise ArrnfSetupError(
            f"Spark version mismatch: this Spark is {spark_version}, but the pyspark-arrnf jar was built "
            f"for Spark {info.spark_version} ({info.path}). Install a PySpark of its line "
            f"(pip install 'pyspark=={'.'.join(major_minor(info.spark_version))}.*'), or "
            f"rebuild the jar against your Spark ('bash dev/setup')."
        )
    return True
