"""Generated TPC-H / TPC-DS data and the query texts that come with the package.

Data comes from PyPI's generators (``tpchgen-cli``, ``tpcgen-cli``), one Parquet file per table,
cached under ``~/.cache/pyspark-arrnf/data/<kind>-sf<scale>`` (``ARRNF_DATA`` moves it).

>>> sorted(queries("tpch"))[:3]
['q1', 'q10', 'q11']
>>> len(queries("tpcds"))
103
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from .errors import ArrnfSetupError

KINDS = ("tpch", "tpcds")


def cache_dir() -> Path:
    return Path(os.environ.get("ARRNF_DATA", Path.home() / ".cache" / "pyspark-arrnf" / "data"))


def _generator(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if not found:
        raise ArrnfSetupError(f"'{name}' is not installed: pip install {name}")
    return found


def generate(kind: str, scale: float = 0.1, root: Path | None = None) -> Path:
    """Generates (once) the tables of ``kind`` at ``scale`` and returns their folder."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    out = (root or cache_dir()) / f"{kind}-sf{scale:g}"
    done = out / "_SUCCESS"
    if done.exists():
        return out
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if kind == "tpch":
        cmd = [_generator("tpchgen-cli"), "parquet", "-s", f"{scale:g}", f"--output-dir={tmp}"]
    else:
        cmd = [_generator("tpcgen-cli"), "tpcds", "parquet", "-s", f"{scale:g}", f"--output-dir={tmp}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    (tmp / "_SUCCESS").touch()
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def register_tables(spark, folder: Path | str, database: str | None = None) -> list[str]:
    """Makes every Parquet file or folder in ``folder`` a table named after it: a temporary view,
    or with ``database`` an external table in that database (so TPC-H's and TPC-DS's ``customer``
    can live side by side)."""
    if not Path(folder).is_dir():
        raise ArrnfSetupError(f"{folder} is not a folder: give a folder of Parquet files (one per table).")
    if database:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    names = []
    for p in sorted(Path(folder).iterdir()):
        if p.name.startswith(("_", ".")):
            continue
        if p.suffix == ".parquet" or (p.is_dir() and any(p.glob("*.parquet"))):
            name = p.name.removesuffix(".parquet")
            if database:
                spark.sql(f"DROP TABLE IF EXISTS `{database}`.`{name}`")
                spark.sql(f"CREATE TABLE `{database}`.`{name}` USING parquet LOCATION '{p.resolve()}'")
            else:
                spark.read.parquet(str(p)).createOrReplaceTempView(name)
            names.append(name)
    if not names:
        raise ArrnfSetupError(f"No Parquet files or folders in {folder}: nothing to use as tables.")
    return names


def queries(kind: str) -> dict[str, str]:
    """The packaged query texts of ``kind`` ('tpch' or 'tpcds') by name ('q1', 'q14a', ...)."""
    folder = resources.files("pyspark_arrnf") / "workloads" / kind
    return {
        p.name.removesuffix(".sql"): p.read_text()
        for p in folder.iterdir()
        if p.name.endswith(".sql")
    }


def query(kind: str, name: str) -> str:
    return (resources.files("pyspark_arrnf") / "workloads" / kind / f"{name}.sql").read_text()
