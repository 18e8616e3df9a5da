"""The checks every format's validator is made of: an array's dtype and shape, its
values' range, and CSR offsets. Each failure is a LoadError naming the file and the
array."""
from __future__ import annotations

import numpy as np

from engine.io.errors import LoadError

INT32_MAX = int(np.iinfo(np.int32).max)


def need(path, a, name: str, dtype, shape=None) -> np.ndarray:
    """``a`` as exactly ``dtype`` and ``shape`` (None: any length in that axis)."""
    if not isinstance(a, np.ndarray):
        raise LoadError(path, f"{name} is missing or not an array")
    if a.dtype != np.dtype(dtype):
        raise LoadError(path, f"{name} has dtype {a.dtype.str}, expected {np.dtype(dtype).name}")
    if shape is not None and (a.ndim != len(shape) or
                              any(s is not None and s != t for s, t in zip(shape, a.shape))):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        raise LoadError(path, f"{name} has shape {a.shape}, expected {want}")
    return a


def in_range(path, a: np.ndarray, name: str, low: int, high: int) -> None:
    """Every value of ``a`` in low..high (inclusive)."""
    if a.size and (int(a.min()) < low or int(a.max()) > high):
        bad = a[(a < low) | (a > high)].flat[0]
        raise LoadError(path, f"{name} holds {bad}, out of range {low}..{high}")


def offsets(path, first: np.ndarray, name: str, end: int) -> None:
    """A CSR offset array: starts at 0, never decreases, ends at ``end``."""
    if first.size == 0 or first[0] != 0 or first[-1] != end:
        raise LoadError(path, f"{name} must run from 0 to {end} (an offset array)")
    if np.any(first[1:] < first[:-1]):
        raise LoadError(path, f"{name} decreases (offsets must be monotone)")
