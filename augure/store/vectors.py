"""Vectors as stored in state.db: float32, unit length, compared by dot product.

Plain Python (`array`, and `math.sumprod` where the interpreter has it): the sqlite3 module
of common Python builds cannot load an extension such as sqlite-vec, and numpy is no
dependency of Augure. The figures are in docs/performance.md.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Sequence

_sumprod = getattr(math, "sumprod", None)  # Python 3.12+: one C loop


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    if _sumprod is not None:
        return float(_sumprod(a, b))
    return float(sum(map(operator.mul, a, b)))


def normalised(values: Sequence[float]) -> array[float]:
    """A float32 vector of unit length (a zero vector stays zero)."""
    length = math.sqrt(sum(v * v for v in values)) or 1.0
    return array("f", (v / length for v in values))


def unpack(blob: bytes) -> array[float]:
    vector = array("f")
    vector.frombytes(blob)
    return vector
