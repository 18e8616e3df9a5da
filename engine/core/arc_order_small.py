"""engine.core.arc_order's steps in NumPy, for small graphs: the same order and the
same arrays, with no Numba. A file of a few thousand arcs (``routelab info``, a route
from a small cache, the tests' graphs) then loads without importing Numba (0.3 s) or
compiling anything; RoadGraph.from_arcs picks this module below SMALL_ARCS arcs."""
from __future__ import annotations

import numpy as np

SMALL_ARCS = 1 << 22     # 4 M arcs: argsort about 0.4 s, and it releases the GIL (a Numba
                         # compile on the engine thread would not: the window would freeze)


def tail_order(tail: np.ndarray, head: np.ndarray, num_nodes: int):
    """(order, first_out) as arc_order.tail_order: the kept arcs stably sorted by tail
    (None when that is every arc in the given order), int32 CSR offsets."""
    keep = tail != head
    if keep.all() and (tail.size < 2 or bool(np.all(tail[1:] >= tail[:-1]))):
        return None, np.searchsorted(tail, np.arange(num_nodes + 1)).astype(np.int32)
    kept = np.flatnonzero(keep)
    order = kept[np.argsort(tail[kept], kind="stable")]
    first = np.zeros(num_nodes + 1, np.int32)
    np.cumsum(np.bincount(tail[order], minlength=num_nodes), out=first[1:])
    return order, first


def gather(values: np.ndarray, order, dtype=None) -> np.ndarray:
    values = np.asarray(values)
    dtype = values.dtype if dtype is None else np.dtype(dtype)
    if order is None:
        return values.astype(dtype, copy=False)
    return values[order].astype(dtype, copy=False)


def gather_ragged(first: np.ndarray, values: np.ndarray, order):
    if order is None:
        return first, values
    lengths = np.diff(first)[order]
    new_first = np.zeros(order.size + 1, np.int64)
    np.cumsum(lengths, out=new_first[1:])
    rows = np.repeat(first[order], lengths) + (np.arange(int(new_first[-1]))
                                               - np.repeat(new_first[:-1], lengths))
    return new_first, values[rows]


def new_of_old(order, m: int) -> np.ndarray:
    if order is None:
        return np.arange(m, dtype=np.int64)
    out = np.full(m, -1, np.int64)
    out[order] = np.arange(order.size)
    return out


def strictly_increasing(values) -> bool:
    return values.size < 2 or bool(np.all(values[1:] > values[:-1]))
