"""Comparing results as bags, with a tolerance for floating point."""
from __future__ import annotations

import decimal
import math


def norm(v):
    """A sort key for a value: floats rounded (tolerance), NaN and None made comparable."""
    if v is None:
        return (0, "")
    if isinstance(v, float):
        if math.isnan(v):
            return (1, "nan")
        return (2, float(f"{v:.6g}"))
    if isinstance(v, (int, decimal.Decimal)):
        return (2, v)
    return (3, str(v))


def row_key(row):
    return tuple(norm(v) for v in row)


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def same_bag(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(sorted(a, key=row_key), sorted(b, key=row_key)):
        if len(x) != len(y) or not all(_same_value(u, v) for u, v in zip(x, y)):
            return False
    return True
