"""The ``arrnf`` command line.

    arrnf explain QUERY.sql --tables DIR            # plan it, not run: optimized plan, why the rules fired
                                                    # or not, ArrNF program, costs
    arrnf explain QUERY.sql --tables DIR --compare  # also plan it without the extension, run it both ways
    arrnf explain QUERY.sql --tables DIR --format text|json|dot|sql   # only its ArrNF program
    arrnf analyze QUERY.sql --tables DIR [--plot FILE]   # run it: estimated beside measured state per block
    arrnf explain|analyze QUERY.sql --tables DIR --stats  # first the sketch pass over the tables it reads
    arrnf stats --tables DIR [TABLE ...]            # the sketch pass: rows, columns, files per table, its time
    arrnf demo                                      # generated TPC-DS data, a query run with and without
    arrnf data tpcds --scale 0.1                    # generate data and print its folder
    arrnf --version

Every Parquet file or folder in ``--tables DIR`` is a table by its name (`` `my-table` `` in SQL); a table with an unreadable or
corrupt file is skipped (a query that uses it fails, naming the file).

Exit status: 0 done; 1 the query failed when run (``analyze``, ``--compare``, ``demo``) or gave
different results with and without the extension, or ``stats`` could not sketch a table; 2 bad input
(no such file, no SQL in it, a SQL or analysis error, a bad ``--tables`` folder, no such table for
``stats``, a bad option) or a broken set-up. A failure is one line on
standard error, ``arrnf: ...``, never a traceback. Spark's own log (what its JVM writes) goes to
``--spark-log FILE``, or nowhere.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from .connect import quoted_name
from .errors import ArrnfError, ArrnfPlanningError, ArrnfSetupError, _is_spark_error, first_line

DEMO_QUERY = """\
-- Sales per day of December 2000 over the three channels: date_dim joined with a UNION ALL of
-- the sales tables, and a cross join with a one-row table, which EliminateUnitJoin removes.
select d_date, count(*) as sales, one
from (select ws_sold_date_sk as sold_date_sk from web_sales
      union all
      select cs_sold_date_sk from catalog_sales
      union all
      select ss_sold_date_sk from store_sales) s
join date_dim on s.sold_date_sk = d_date_sk
cross join (select 1 as one) unit
where d_year = 2000 and d_moy = 12
group by d_date, one
order by d_date
limit 5
"""

VIZ_HINT = "pip install 'pyspark-arrnf[viz]'"

# ---------------------------------------------------------------------------------------------------
# One error path: what a failure says, in one line


def _say(message: str) -> None:
    print(f"arrnf: {message}", file=sys.stderr, flush=True)


def _one_line(e: BaseException) -> str:
    """The first line of an error's message; for a Py4JJavaError, of the Java exception's (its own
    first line is only "An error occurred while calling o123.sql.")."""
    java = getattr(e, "java_exception", None)
    if java is not None and type(e).__name__ == "Py4JJavaError":
        try:
            return first_line(java.toString())
        except Exception:  # noqa: BLE001 - the JVM is gone: fall back to Python's text
            pass
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return first_line(e)


@contextmanager
def _step(what: str):
    """Turns a Spark error inside the block into one ArrnfError: '<what>: <Spark's first line>'."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - only Spark's errors are re-worded
        if not _is_spark_error(e):
            raise
        raise ArrnfError(f"{what}: {_one_line(e)}") from None


@contextmanager
def _quiet_pyspark():
    """PySpark logs every failed analysis or query with its JVM stack trace (loggers
    SQLQueryContextLogger and DataFrameQueryContextLogger, see frames.py): the command says it once."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        yield
        return
    loggers = [PySparkLogger.getLogger(n) for n in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]
    was = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, w in zip(loggers, was):
            lg.disabled = w


# ---------------------------------------------------------------------------------------------------
# Inputs: the query file, the tables, the session


_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*", re.S)


def _read_query(path: str) -> tuple[str, str]:
    """``(SQL text, name)`` of a query file (``-``: standard input), or an ArrnfError saying what is
    wrong with it: no such file, a folder, not text, nothing but blanks and comments."""
    if path == "-":
        text, name, shown = sys.stdin.read(), "query", "standard input"
    else:
        f = Path(path)
        if not f.exists():
            raise ArrnfError(f"{path}: no such file")
        if f.is_dir():
            raise ArrnfError(f"{path}: a folder, not a SQL file")
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            raise ArrnfError(f"{path}: not a text file (it is not UTF-8)") from None
        except OSError as e:
            raise ArrnfError(f"{path}: cannot be read ({e.strerror})") from None
        name, shown = f.stem, path
    if not _COMMENTS.sub("", text).replace(";", " ").strip():
        raise ArrnfError(f"{shown}: no SQL in it (it is empty, or only comments)")
    return text.strip().rstrip(";").rstrip(), name


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


def _scale(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"the scale factor must be a positive number, not {text}")
    return v


@contextmanager
def _jvm_output_to(path: str | None):
    """Spark's JVM, started inside the block, writes its log (and the JVM's own warnings) to ``path``
    or nowhere, not over the command's messages: it inherits file descriptor 2 as it is at start."""
    target = path or os.devnull
    try:
        log = open(target, "ab")
    except OSError as e:
        raise ArrnfError(f"--spark-log {path}: cannot be written ({e.strerror})") from None
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        log.close()


def _session(args):
    """The session with the extension; settings from ``--conf``. A session already running in this
    process (tests, notebooks) is used as it is; a new Spark JVM writes its output to --spark-log."""
    from pyspark import SparkContext

    from . import _jvm
    from .session import is_loaded, session

    conf = {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    conf.update(getattr(args, "conf", None) or [])
    log = getattr(args, "spark_log", None)
    if SparkContext._gateway is not None:
        # session() warns that a running session cannot take the (static) extension settings; said
        # here as an error when the extension is in fact missing, and not at all when it is loaded
        with _step("a --conf setting is refused"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            spark = session(conf=conf)
        if not is_loaded(spark):
            raise ArrnfSetupError("the SparkSession running in this process does not have the extension, and "
                                  "a running Spark JVM cannot load it: run arrnf in a new process")
    else:
        hint = "" if log else " (--spark-log FILE keeps Spark's output)"
        try:
            with _jvm_output_to(log):
                spark = session(conf=conf)
                # Spark builds a session's state on first use: a setting it refuses (a number that
                # is not one) would fail whatever comes first, reading a table, as that
                _jvm.session_starts(spark)
        except (ArrnfError, ArrnfSetupError):
            raise
        except Exception as e:  # noqa: BLE001 - the JVM did not start, or refused a setting
            if not _is_spark_error(e):
                raise
            raise ArrnfSetupError(f"Spark did not start: {_one_line(e)}{hint}") from None
    if not log:
        spark.sparkContext.setLogLevel("ERROR")
    # The extension's own settings, checked as SET checks them: one given when a session starts is
    # let in (read as off, with a warning in the log this command hides), and a misspelled one is
    # read by nothing. Said here, before anything runs, rather than met later as a query's failure.
    for key, value in getattr(args, "conf", None) or []:
        if key.startswith("spark.arrnf."):
            unknown = _jvm.unknown_setting(spark, key)
            if unknown:
                raise ArrnfError(f"--conf {key}={value}: {unknown}")
            with _step(f"--conf {key}={value} is refused"):
                spark.conf.set(key, value)
    return spark


def _inputs(args) -> tuple[str, str]:
    """The query's text and name, and a first look at ``--tables``: both before Spark starts."""
    from .data import table_files

    sql, name = _read_query(args.query)
    if args.tables:
        table_files(args.tables)
    return sql, name


def _register(spark, tables: str | None) -> tuple[list[str], dict[str, str]]:
    """Registers the tables of ``--tables``; returns their names, and the skipped ones by name with why."""
    from .data import register_tables

    skipped: dict[str, str] = {}
    names = register_tables(spark, tables, unreadable=skipped) if tables else []
    return names, skipped


def _sketch(spark, names: list[str]) -> tuple[list[str], list[str], float]:
    """The sketch pass over ``names``: its line per table, the lines of tables it could not sketch
    (the JVM says ``<table>: not sketched: <why>``), and its seconds."""
    from .statistics import statistics

    start = time.perf_counter()
    with _step("the sketch pass failed"):
        lines = statistics(spark, names)
    seconds = time.perf_counter() - start
    failed = [line for name, line in zip(names, lines) if line.startswith(f"{name}: not sketched")]
    return lines, failed, seconds


def _sketch_read_tables(spark, df, names: list[str], sql: str, consequence: str):
    """``--stats``: the sketch pass over the tables of ``--tables`` that the query reads (those whose
    files its plan reads: listing files reads no data), said in one line on stderr. Returns the query
    planned anew: ``df`` keeps the plan it was optimized with to list its files, before the sketches,
    and the rules' cost guards read them while optimizing (without them EagerAggregation declines)."""
    with _step("the query cannot be planned"):
        read = set(df.inputFiles())
        # (quoted: a folder named `my table` or `a.b` is a view of that name)
        used = [n for n in names if read.intersection(spark.table(quoted_name(n)).inputFiles())]
    if not used:
        print("-- sketch pass: the query reads no table of --tables: nothing sketched", file=sys.stderr, flush=True)
        return df
    _, failed, seconds = _sketch(spark, used)
    print(f"-- sketch pass: {', '.join(used)} in {seconds:.1f} s", file=sys.stderr, flush=True)
    for line in failed:
        _say(f"warning: {line}")
    return _analyzed(spark, sql, {}, consequence)  # (the skipped tables were told already)


def _analyzed(spark, sql: str, skipped: dict[str, str], consequence: str):
    """The query's DataFrame (parsed and analyzed, not run). A query that uses a skipped table fails
    naming its file; one that does not is told, once, which tables were skipped."""
    from .frames import dataframe

    try:
        df, _ = dataframe(sql, spark, consequence)
    except ArrnfError as e:
        msg = str(e).lower()
        if "table_or_view_not_found" in msg:
            for name, why in skipped.items():
                if f"`{name.lower()}`" in msg:
                    raise ArrnfError(f"table {name} cannot be used: {why}") from None
        raise
    for name, why in skipped.items():
        _say(f"warning: table {name} skipped: {why}")
    return df


# ---------------------------------------------------------------------------------------------------
# The commands


def cmd_data(args) -> int:
    from .data import generate

    print(generate(args.kind, args.scale))
    return 0


def _program(spark, df, name: str) -> str:
    """The ArrNF text of ``df`` followed by its cost table."""
    import pandas as pd

    from .normalize import arrnf

    p = arrnf(df, spark, name=name)
    table = p.cost_frame()[["block", "head", "spark", "arrangements", "rows", "bytes", "source", "sharing"]]
    for column in ("rows", "bytes"):  # pandas would print <NA>
        table[column] = [("unknown" if v is pd.NA else str(v)) for v in table[column]]
    built = (f"Spark builds {p.realized} stateful operators; differential model: {p.arrangements} arrangements"
             if p.realized is not None else f"{p.arrangements} arrangements (differential model)")
    return f"{p}\n== ArrNF costs ({built}) ==\n{table.to_string(index=False)}"


def _run_rows(spark, sql: str, enabled: bool):
    """``(rows, None)``, or ``(None, error)`` when the query fails when run."""
    from .compare import arrnf_enabled

    with arrnf_enabled(spark, enabled):
        try:
            return spark.sql(sql).collect(), None
        except Exception as e:  # noqa: BLE001 - a run-time error is a result to compare
            if not _is_spark_error(e):
                raise
            return None, _one_line(e)


def _print_optimized(spark, df) -> None:
    """The optimized plan with the extension, then why its rules fired or declined (where they said)."""
    from . import _jvm
    from .compare import optimized_plan

    print("== Optimized plan, with pyspark-arrnf ==")
    print(optimized_plan(df))
    reasons = _jvm.rule_reasons(spark, df)
    if reasons:
        print("== Why the rules fired, or declined ==")
        print("\n".join(reasons))


def _failed_planning(e: BaseException) -> int:
    """A query Spark fails while planning it (under ANSI, a division by zero in a constant it folds)
    fails as if run, before anything ran, and has no plan or program to report: said in one line."""
    _say(f"the query failed while Spark planned it, before it ran (no plan to report): {_one_line(e)}")
    return 1


def _compare(spark, sql: str, name: str = "query") -> int:
    """Plans with and without the extension, the ArrNF program, then runs the query both ways and
    compares the results: 0 equal, 1 a failed run or different results (said on stderr)."""
    from .compare import arrnf_enabled, optimized_plan

    try:  # planned before its header is printed: a query that fails to plan has no plan to show
        with arrnf_enabled(spark, False):
            vanilla = optimized_plan(spark.sql(sql))
    except Exception as e:  # noqa: BLE001 - only Spark's errors are the query's
        if not _is_spark_error(e):
            raise
        return _failed_planning(e)
    with _step("the query cannot be planned"):
        print("== Optimized plan, vanilla Spark ==")
        print(vanilla)
        with arrnf_enabled(spark, True):
            on = spark.sql(sql)
            _print_optimized(spark, on)
            print("== ArrNF ==")
            print(_program(spark, on, name))
    off_rows, off_error = _run_rows(spark, sql, False)
    on_rows, on_error = _run_rows(spark, sql, True)
    sys.stdout.flush()
    if off_error or on_error:
        print(f"== Results: without the extension {'failed' if off_error else f'{len(off_rows)} rows'}, "
              f"with it {'failed' if on_error else f'{len(on_rows)} rows'} ==")
        sys.stdout.flush()
        if off_error and on_error:
            _say(f"the query failed when run: {off_error}")
        else:
            _say(f"the query failed when run {'with' if on_error else 'without'} the extension only: "
                 f"{on_error or off_error}: please report this query")
        return 1
    same = sorted(map(tuple, on_rows), key=repr) == sorted(map(tuple, off_rows), key=repr)
    print(f"== Results: {len(on_rows)} rows with the extension, {len(off_rows)} without; "
          f"{'equal' if same else 'DIFFERENT'} ==")
    for r in on_rows[:10]:
        print("  ", tuple(r))
    sys.stdout.flush()
    if not same:
        _say("results differ with and without the extension: please report this query")
        return 1
    return 0


def cmd_demo(args) -> int:
    from .data import generate, register_tables

    folder = generate("tpcds", args.scale)
    spark = _session(args)
    register_tables(spark, folder)
    print(f"-- TPC-DS at scale factor {args.scale:g}, generated in {folder}; the query planned and run "
          f"with and without the extension\n{DEMO_QUERY}")
    return _compare(spark, DEMO_QUERY, name="demo")


def cmd_explain(args) -> int:
    from . import _jvm
    from .normalize import arrnf

    if args.dialect is not None and args.format != "sql":  # it would be ignored
        raise ArrnfError(f"--dialect {args.dialect} goes with --format sql (it is the SQL form's dialect)")
    sql, name = _inputs(args)
    spark = _session(args)
    names, skipped = _register(spark, args.tables)
    df = _analyzed(spark, sql, skipped, "so it cannot be explained")
    if args.stats:
        df = _sketch_read_tables(spark, df, names, sql, "so it cannot be explained")
    if args.compare:
        return _compare(spark, sql, name=name)
    try:  # planned before any header is printed: a query Spark fails to plan has no plan to show
        _jvm.plan(df)
    except Exception as e:  # noqa: BLE001 - only Spark's errors are the query's
        if not _is_spark_error(e):
            raise
        return _failed_planning(e)
    with _step("the query cannot be planned"):
        if args.format is None:
            _print_optimized(spark, df)
            print("== ArrNF ==")
            print(_program(spark, df, name))
            return 0
        p = arrnf(df, spark, name=name)
    if args.format == "json":
        print(p.to_json(indent=2))
    elif args.format == "dot":
        print(p.to_dot(), end="")
    elif args.format == "sql":
        print(p.to_sql(dialect=args.dialect or "spark"), end="")
    else:
        print(p, end="")
    return 0


def _check_plot(path: str) -> None:
    """Before Spark starts: matplotlib is there, and it can write ``path``."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError:
        raise ArrnfSetupError(f"--plot needs matplotlib: {VIZ_HINT}") from None
    kinds = FigureCanvasAgg.get_supported_filetypes()
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in kinds:
        raise ArrnfError(f"--plot {path}: name a .png, .svg or .pdf file (the suffix says the format)")
    if not Path(path).resolve().parent.is_dir():
        raise ArrnfError(f"--plot {path}: no such folder {Path(path).parent}")


def cmd_analyze(args) -> int:
    """``arrnf analyze QUERY.sql --tables DIR [--json] [--plot FILE]``: exit status 1 when the query
    failed when run (the report is printed all the same, the error in one line on stderr), or while
    Spark planned it (no report: nothing ran)."""
    from .measure import measure, plot

    if args.plot:
        _check_plot(args.plot)
    sql, name = _inputs(args)
    spark = _session(args)
    names, skipped = _register(spark, args.tables)
    df = _analyzed(spark, sql, skipped, "so it cannot be measured")
    if args.stats:
        df = _sketch_read_tables(spark, df, names, sql, "so it cannot be measured")
    try:
        p = measure(df, spark=spark, name=name)
    except ArrnfPlanningError as e:  # nothing ran: no report, the error in one line
        if not _is_spark_error(e.cause):
            raise e.cause from None
        return _failed_planning(e.cause)
    print(p.to_json(indent=2) if args.json else p)
    if p.rules and not args.json:  # (in the JSON: its "rules")
        print("== Why the rules fired, or declined ==\n" + "\n".join(p.rules))
    sys.stdout.flush()
    if args.plot:
        plot(p, args.plot)
        print(f"-- chart: {args.plot}", file=sys.stderr)
    if p.measurement.status != "ok":
        _say(f"the query failed when run: {p.measurement.error or p.measurement.status}")
        return 1
    return 0


def cmd_stats(args) -> int:
    """``arrnf stats --tables DIR [TABLE ...]``: the sketch pass, one line per table and its time;
    exit status 1 when a table could not be sketched (its line says why)."""
    from .data import table_files

    in_folder = {name.lower(): name for name, _ in table_files(args.tables)}
    wanted = []
    for t in args.table:
        if t.lower() not in in_folder:
            raise ArrnfError(f"no table {t} in {args.tables} (its tables: {', '.join(in_folder.values())})")
        if in_folder[t.lower()] not in wanted:
            wanted.append(in_folder[t.lower()])
    spark = _session(args)
    names, skipped = _register(spark, args.tables)
    for name in wanted:
        if name in skipped:
            raise ArrnfError(f"table {name} cannot be used: {skipped[name]}")
    if not wanted:
        for name, why in skipped.items():
            _say(f"warning: table {name} skipped: {why}")
    lines, failed, seconds = _sketch(spark, wanted or names)
    for line in lines:
        print(line)
    print(f"-- sketch pass: {len(lines)} table{'s' * (len(lines) != 1)} in {seconds:.1f} s")
    sys.stdout.flush()
    if failed:
        _say(f"the sketch pass failed on {len(failed)} of {len(lines)} tables: {failed[0]}")
        return 1
    return 0


def version() -> str:
    """``arrnf 0.1.0 (jar 0.1.0, built for Spark 4.3.0, Scala 2.13.18; PySpark 4.3.0)``, without
    starting Spark."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    from . import __version__
    from .jar import jar_info

    try:
        pyspark = f"PySpark {dist_version('pyspark')}"
    except PackageNotFoundError:
        pyspark = "PySpark not installed"
    try:
        info = jar_info()
        jar = f"jar {info.version}, built for Spark {info.spark_version}, Scala {info.scala_version}"
    except ArrnfSetupError:
        jar = "no extension jar: run 'bash dev/setup', or reinstall pyspark-arrnf"
    return f"arrnf {__version__} ({jar}; {pyspark})"


# ---------------------------------------------------------------------------------------------------
# The parser


class _Parser(argparse.ArgumentParser):
    """Usage errors in the command's one-line form (``arrnf: ...``, exit status 2)."""

    def error(self, message):
        self.exit(2, f"arrnf: {message} (see '{self.prog} --help')\n")


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the versions of arrnf, its jar and PySpark")

    def __call__(self, parser, namespace, values, option_string=None):
        print(version())
        parser.exit(0)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="arrnf", description="Spark queries in Arrangement Normal Form.",
                epilog="Exit status: 0 done, 1 the query (or the sketch pass) failed when run, "
                       "2 bad input or set-up.")
    p.add_argument("--version", action=_Version)
    spark_opts = argparse.ArgumentParser(add_help=False)
    spark_opts.add_argument("--conf", action="append", type=_key_value, metavar="KEY=VALUE",
                            help="a Spark setting (repeatable)")
    spark_opts.add_argument("--spark-log", metavar="FILE",
                            help="append Spark's own log (its JVM's output) to FILE; without it, it is discarded")
    tables_help = ("a folder whose Parquet files/folders are tables by name "
                   "(a table with an unreadable file is skipped, with a warning)")
    query_opts = argparse.ArgumentParser(add_help=False)
    query_opts.add_argument("query", help="a .sql file with one query, or - for standard input")
    query_opts.add_argument("--tables", metavar="DIR", help=tables_help)
    stats_help = ("first take the sketch pass (an aggregate and a sampling job per table) over the tables of "
                  "--tables the query reads, so its estimates can use them (source 'sketch')")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    d = sub.add_parser("demo", parents=[spark_opts],
                       help="generate small TPC-DS data and run a query with and without the extension")
    d.add_argument("--scale", type=_scale, default=0.1)
    d.set_defaults(func=cmd_demo)
    e = sub.add_parser("explain", parents=[query_opts, spark_opts],
                       help="plan a SQL file (not run): optimized plan, why the rules fired or not, "
                            "ArrNF program and costs",
                       description="Plans the query without running it: the optimized plan with the "
                                   "extension, why its rules fired or declined, then the ArrNF program and "
                                   "its cost table.")
    e.add_argument("--stats", action="store_true", help=stats_help + "; without it, explain reads no data")
    how = e.add_mutually_exclusive_group()
    how.add_argument("--format", choices=["text", "json", "dot", "sql"],
                     help="print only the ArrNF program, in this form; sql: one statement, a CTE per block")
    how.add_argument("--compare", action="store_true",
                     help="also plan it without the extension, and run it both ways comparing the results")
    e.add_argument("--dialect", choices=["spark", "duckdb", "postgres"],
                   help="with --format sql only: the SQL's dialect (default spark); duckdb and postgres are "
                        "best effort")
    e.set_defaults(func=cmd_explain)
    a = sub.add_parser("analyze", parents=[query_opts, spark_opts],
                       help="run a SQL file and show estimated vs measured state per ArrNF block")
    a.add_argument("--stats", action="store_true",
                   help=stats_help + "; without it, the estimates beside the measured figures come from "
                        "file metadata and catalog statistics only (analyze runs the query either way)")
    a.add_argument("--json", action="store_true", help="print the measured program as JSON")
    a.add_argument("--plot", metavar="FILE.png|FILE.svg",
                   help=f"also save a bar chart of estimated vs measured bytes (needs matplotlib: {VIZ_HINT})")
    a.set_defaults(func=cmd_analyze)
    s = sub.add_parser("stats", parents=[spark_opts],
                       help="take the sketch pass over tables and show what it finds (it lasts as long as the "
                            "process: explain/analyze --stats use it)",
                       description="Takes the sketch pass over the named tables of DIR (all of them when none "
                                   "is named): one aggregate job per table (row count; per column a distinct "
                                   "count, NULL count, min and max) and a sample of about 2,000 rows (each row "
                                   "kept with the same chance; a smaller table whole). Prints what it "
                                   "finds, a line per table (rows, columns sketched, rows sampled, files), and "
                                   "how long it took. Sketches live only "
                                   "in this process's Spark JVM and end with it: to use them for estimates, "
                                   "pass --stats to explain or analyze.")
    s.add_argument("table", nargs="*", metavar="TABLE", help="a table of DIR (default: all of them)")
    s.add_argument("--tables", metavar="DIR", required=True, help=tables_help)
    s.set_defaults(func=cmd_stats)
    g = sub.add_parser("data", help="generate TPC-H or TPC-DS data and print its folder")
    g.add_argument("kind", choices=["tpch", "tpcds"])
    g.add_argument("--scale", type=_scale, default=0.1)
    g.set_defaults(func=cmd_data)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:  # --help, --version (0) and usage errors (2, said in one line)
        return e.code if isinstance(e.code, int) else 2
    with _quiet_pyspark():
        try:
            return args.func(args)
        except KeyboardInterrupt:
            _say("interrupted")
            return 130
        except BrokenPipeError:  # `arrnf explain ... | head`: the reader has gone, nothing to say
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except OSError:
                pass
            return 1
        except subprocess.CalledProcessError as e:
            _say(f"{Path(str(e.cmd[0])).name} failed (exit status {e.returncode})")
            return 2
        except (ArrnfError, ArrnfSetupError, OSError) as e:
            _say(_one_line(e))
            return 2
        except Exception as e:  # noqa: BLE001 - Spark's errors are bad input; anything else is a bug
            if _is_spark_error(e):
                _say(_one_line(e))
                return 2
            if os.environ.get("ARRNF_DEBUG"):
                raise
            _say(f"unexpected error, please report it: {type(e).__name__}: {_one_line(e)} "
                 f"(ARRNF_DEBUG=1 shows the traceback)")
            return 1


if __name__ == "__main__":
    sys.exit(main())
