"""FactorizeUnionOfJoins against vanilla Spark: ``bench/run.py`` on the issue's three-branch case
(a shared input with payload joined with three 4M-row inputs, shuffle joins; every row built, and under a row count) and the twelve TPC-DS
queries with a UNION ALL of joins, broadcast joins on and off.

    .venv/bin/python bench/bench_factorize.py                    # TPC-DS at scale factor 1
    .venv/bin/python bench/bench_factorize.py --scale 0.1 --broadcast off --runs 5

Any option of ``bench/run.py`` can be added. The report (``bench/results/<time>/report.md``) lists
every query with its run-time ratio, noise and Exchange / Sort / join counts, vanilla → extension.
"""
from __future__ import annotations

import sys

from run import main

TPCDS = ["q71", "q76", "q33", "q56", "q60", "q66", "q75", "q80", "q14a", "q14b", "q23a", "q23b"]
ONLY = [f"tpcds:{q}" for q in TPCDS] + ["synthetic:factorize_3_branches", "synthetic:factorize_3_branches_count"]

if __name__ == "__main__":
    sys.exit(main(["--kinds", "tpcds,synthetic", "--only", ",".join(ONLY), *sys.argv[1:]]))
