"""The ``arrnf`` command line.

    arrnf demo                               # generated TPC-DS data, the product at work
    arrnf explain QUERY.sql --tables DIR     # a SQL file against the Parquet tables in DIR
    arrnf explain QUERY.sql --tables DIR --format text|json|dot   # only its ArrNF program
    arrnf data tpcds --scale 0.1             # generate data and print its folder
    arrnf analyze QUERY.sql --tables DIR     # run it: estimated beside measured state per block
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import ArrnfError, ArrnfSetupError

DEMO_QUERY = """\
-- Which item brands sold on one day, per channel: a UNION ALL of joins that share date_dim.
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


def _session(args):
    from .session import session

    conf = {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    for kv in getattr(args, "conf", None) or []:
        k, _, v = kv.partition("=")
        conf[k] = v
    spark = session(conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cmd_data(args) -> int:
    from .data import generate

    print(generate(args.kind, args.scale))
    return 0


def _program(spark, df, name: str) -> str:
    """The ArrNF text of ``df`` followed by its cost table."""
    from .normalize import arrnf

    p = arrnf(df, spark, name=name)
    table = p.cost_frame()[["block", "head", "arrangements", "rows", "bytes", "source", "sharing"]]
    return f"{p}\n== ArrNF costs ({p.arrangements} arrangements) ==\n{table.to_string(index=False)}"


def _show(spark, sql: str, name: str = "query") -> None:
    from .compare import arrnf_enabled, optimized_plan

    with arrnf_enabled(spark, False):
        off = spark.sql(sql)
        print("== Optimized plan, vanilla Spark ==")
        print(optimized_plan(off))
        off_rows = off.collect()
    with arrnf_enabled(spark, True):
        on = spark.sql(sql)
        print("== Optimized plan, with pyspark-arrnf ==")
        print(optimized_plan(on))
        print("== ArrNF ==")
        print(_program(spark, on, name))
        on_rows = on.collect()
    same = sorted(map(tuple, on_rows), key=repr) == sorted(map(tuple, off_rows), key=repr)
    print(f"== Results: {len(on_rows)} rows with the extension, {len(off_rows)} without; "
          f"{'equal' if same else 'DIFFERENT'} ==")
    for r in on_rows[:10]:
        print("  ", tuple(r))
    if not same:
        raise SystemExit("results differ with and without the extension: please report this query")


def cmd_demo(args) -> int:
    from .data import generate, register_tables

    folder = generate("tpcds", args.scale)
    spark = _session(args)
    register_tables(spark, folder)
    print(f"-- TPC-DS at scale factor {args.scale:g}, generated in {folder}\n{DEMO_QUERY}")
    _show(spark, DEMO_QUERY, name="demo")
    return 0


def cmd_explain(args) -> int:
    from .data import register_tables

    sql = Path(args.query).read_text() if args.query != "-" else sys.stdin.read()
    spark = _session(args)
    if args.tables:
        register_tables(spark, args.tables)
    name = Path(args.query).stem if args.query != "-" else "query"
    if args.format is None:
        _show(spark, sql, name=name)
        return 0
    from .normalize import arrnf

    p = arrnf(sql, spark, name=name)
    if args.format == "json":
        print(p.to_json(indent=2))
    elif args.format == "dot":
        print(p.to_dot(), end="")
    elif args.format == "sql":
        print(p.to_sql(dialect=args.dialect), end="")
    else:
        print(p, end="")
    return 0


def cmd_analyze(args) -> int:
    """``arrnf analyze QUERY.sql --tables DIR [--json] [--plot FILE]``: exit status 1 when the query
    failed (the report is printed all the same)."""
    from .data import register_tables
    from .measure import measure, plot

    sql = Path(args.query).read_text() if args.query != "-" else sys.stdin.read()
    spark = _session(args)
    if args.tables:
        register_tables(spark, args.tables)
    p = measure(sql.strip().rstrip(";"), spark=spark)
    print(p.to_json(indent=2) if args.json else p)
    if args.plot:
        plot(p, args.plot)
        print(f"-- chart: {args.plot}", file=sys.stderr)
    return 1 if p.measurement.status != "ok" else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="arrnf", description="Spark queries in Arrangement Normal Form.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="generate small TPC-DS data and show the extension at work")
    d.add_argument("--scale", type=float, default=0.1)
    d.add_argument("--conf", action="append", metavar="KEY=VALUE")
    d.set_defaults(func=cmd_demo)
    e = sub.add_parser("explain", help="explain a SQL file against Parquet tables")
    e.add_argument("query", help="a .sql file, or - for standard input")
    e.add_argument("--tables", help="a folder whose Parquet files/folders are tables by name")
    e.add_argument("--conf", action="append", metavar="KEY=VALUE")
    e.add_argument("--format", choices=["text", "json", "dot", "sql"],
                   help="print only the ArrNF program, in this form; sql: one statement, a CTE per block "
                        "(without it: plans, ArrNF, costs and a run with and without the extension)")
    e.add_argument("--dialect", choices=["spark", "duckdb", "postgres"], default="spark",
                   help="with --format sql: duckdb and postgres are best effort")
    e.set_defaults(func=cmd_explain)
    a = sub.add_parser("analyze", help="run a SQL file and show estimated vs measured state per ArrNF block")
    a.add_argument("query", help="a .sql file, or - for standard input")
    a.add_argument("--tables", help="a folder whose Parquet files/folders are tables by name")
    a.add_argument("--conf", action="append", metavar="KEY=VALUE")
    a.add_argument("--json", action="store_true", help="print the measured program as JSON")
    a.add_argument("--plot", metavar="FILE.png|FILE.svg", help="also save a bar chart of estimated vs measured bytes")
    a.set_defaults(func=cmd_analyze)
    g = sub.add_parser("data", help="generate TPC-H or TPC-DS data and print its folder")
    g.add_argument("kind", choices=["tpch", "tpcds"])
    g.add_argument("--scale", type=float, default=0.1)
    g.set_defaults(func=cmd_data)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except (ArrnfSetupError, ArrnfError) as e:
        print(f"arrnf: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"arrnf: {e.filename}: no such file", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
