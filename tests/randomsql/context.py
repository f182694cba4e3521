"""One query's drawing context (:class:`_Ctx`) and the small helpers every shape uses to write SQL."""
from __future__ import annotations

from hypothesis import strategies as st

from .integers import INT


class _Ctx:
    """One query's drawing context: fresh alias names, the domain, the kind of failing expression
    (or None), whether unseeded samples may be drawn, and the tags set while drawing."""

    def __init__(self, dom=INT, fail=None, unseeded=False, plain=False):
        self.i = 0
        self.dom, self.fail, self.unseeded, self.plain = dom, fail, unseeded, plain
        self.tags: set[str] = set()
        self.failing = 0  # failing expressions drawn so far

    @property
    def tags_now(self):
        return self.tags | ({"fail"} if self.failing else set())

    def __call__(self, prefix="q"):
        self.i += 1
        return f"{prefix}{self.i}"


def _cols(n):
    return [f"c{i}" for i in range(n)]


def _select(exprs) -> str:
    return ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))


def _width(draw):
    return draw(st.integers(1, 3))
