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

from . import _jvm
from .connect import quoted_name
from .errors import ArrnfSetupError, first_line

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


def _skipped(path: Path) -> bool:
    return path.name.startswith(("_", "."))


def _parquet_files(table: Path) -> list[Path]:
    """The Parquet files of a table: the file itself, or those anywhere in its folder (a partitioned
    table's are in ``key=value`` folders, as ``df.write.partitionBy`` lays them out), not those in or
    under a name starting with ``_`` or ``.``."""
    if not table.is_dir():
        return [table]
    return sorted(f for f in table.rglob("*.parquet")
                  if not any(_skipped(Path(part)) for part in f.relative_to(table).parts))


def _partitioned(table: Path) -> bool:
    """A folder of ``key=value`` folders: a table whose partitions a catalog table must be told of."""
    return table.is_dir() and any(d.is_dir() and "=" in d.name and not _skipped(d) for d in table.iterdir())


def _unreadable(table: Path) -> str | None:
    """Why the Parquet table at ``table`` (a file, or a folder of files) cannot be read, naming the
    file; None when every file's footer reads. Only footers are read (pyarrow, no Spark job)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # a declared dependency; without it Spark's own read is the only check
        return None
    for f in _parquet_files(table):
        try:
            with open(f, "rb"):
                pass
        except OSError as e:
            return f"{f}: cannot be read ({e.strerror or first_line(e)})"
        try:
            pq.read_metadata(str(f))
        except Exception as e:  # noqa: BLE001 - ArrowInvalid and friends: a corrupt or foreign file
            return f"{f}: not a readable Parquet file ({first_line(e)})"
    return None


def table_files(folder: Path | str) -> list[tuple[str, Path]]:
    """``(name, path)`` of every Parquet file or folder in ``folder`` (names starting with ``_`` or
    ``.`` left out), or an :class:`ArrnfSetupError` when it is no folder or has none."""
    folder = Path(folder)
    if not folder.exists():
        raise ArrnfSetupError(f"{folder}: no such folder: give a folder of Parquet files (one per table).")
    if not folder.is_dir():
        raise ArrnfSetupError(f"{folder} is not a folder: give a folder of Parquet files (one per table).")
    tables = [
        (p.name.removesuffix(".parquet"), p)
        for p in sorted(folder.iterdir())
        if not _skipped(p) and (p.suffix == ".parquet" or (p.is_dir() and _parquet_files(p)))
    ]
    if not tables:
        raise ArrnfSetupError(f"No Parquet files or folders in {folder}: nothing to use as tables.")
    if all(p.is_file() and p.name.startswith("part-") for _, p in tables):
        # Spark's own part files: ``--tables`` names one table's folder, not the folder of tables.
        raise ArrnfSetupError(f"{folder} is one table's folder (its part files: {tables[0][1].name}, ...): give "
                              f"the folder of tables that holds it ({folder.parent}).")
    return tables


def register_tables(spark, folder: Path | str, database: str | None = None,
                    unreadable: dict[str, str] | None = None) -> list[str]:
    """Makes every Parquet file or folder in ``folder`` a table named after it (a folder partitioned
    as ``key=value`` folders with its partition columns, as Spark reads it): a temporary view,
    or with ``database`` an external table in that database (so TPC-H's and TPC-DS's ``customer``
    can live side by side). Returns the names registered.

    Each table's Parquet footers are read first, so an unreadable or corrupt file is found here and
    named, rather than failing every later query with a JVM stack trace. Such a table raises
    :class:`ArrnfSetupError`; or, when a dict is given as ``unreadable``, it is skipped and
    ``unreadable[name]`` says why (the command line does this: a query that does not use the table
    still works)."""
    folder = Path(folder)
    tables = table_files(folder)
    # A session that cannot start fails here as itself, not as the first table "unreadable" below.
    _jvm.session_starts(spark)
    if database:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    names, problems = [], {}
    for name, p in tables:
        problem = _unreadable(p)
        if problem is None:
            try:
                if database:
                    spark.sql(f"DROP TABLE IF EXISTS `{database}`.`{name}`")
                    spark.sql(f"CREATE TABLE `{database}`.`{name}` USING parquet LOCATION '{p.resolve()}'")
                    if _partitioned(p):  # the catalog lists a table's partitions: none until told
                        spark.sql(f"ALTER TABLE `{database}`.`{name}` RECOVER PARTITIONS")
                else:  # (quoted: a folder named my-table or a.b is a table of that name, `my-table` in SQL)
                    spark.read.parquet(str(p)).createOrReplaceTempView(quoted_name(name))
            except Exception as e:  # noqa: BLE001 - Spark could not read its schema: say which table
                # a Py4JJavaError's own first line is only "An error occurred while calling ..."
                problem = f"{p}: {first_line(getattr(e, 'java_exception', e))}"
        if problem is None:
            names.append(name)
        elif unreadable is None:
            raise ArrnfSetupError(f"table {name}: {problem}")
        else:
            problems[name] = unreadable[name] = problem
    if not names:
        first = next(iter(problems.items()))
        raise ArrnfSetupError(f"No readable Parquet table in {folder}: table {first[0]}: {first[1]}")
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
