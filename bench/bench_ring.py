"""The ring laws against vanilla Spark: ``bench/run.py`` on the synthetic cases of the ring rules
(each a query where its law fires, on a 2M-row table with NULLs, duplicates and a double column).

    .venv/bin/python bench/bench_ring.py                 # broadcast on and off, 4 timed runs per side
    .venv/bin/python bench/bench_ring.py --broadcast on --runs 5 --synthetic-scale 0.5

Any option of ``bench/run.py`` can be added; the report goes to ``bench/results/<time>/``.
"""
from __future__ import annotations

import sys

from run import main
from cases import CASES

RING_CASES = [c.name for c in CASES if c.rule != "FactorizeUnionOfJoins"]

if __name__ == "__main__":
    sys.exit(main(["--kinds", "synthetic", "--only", ",".join(f"synthetic:{n}" for n in RING_CASES), *sys.argv[1:]]))
