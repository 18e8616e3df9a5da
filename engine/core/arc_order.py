"""Putting arcs in tail order for RoadGraph.from_arcs, in linear time and on all cores.

The order is the one a stable sort by tail of the kept arcs (self loops dropped)
gives, so the graph is the same arc for arc: a counting sort by tail (two passes over
the arcs, the count doubling as the CSR offsets ``first_out``) instead of an
O(m log m) argsort. Arcs that come already sorted without self loops (a graph's own
arrays, a file written from one) are detected in one parallel pass and need no order.
The per-arc arrays are then gathered by the order in parallel Numba loops: each output
element is written by exactly one iteration, so the result does not depend on the
number of threads.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["tail_order", "counting_order", "gather", "gather_ragged", "new_of_old",
           "strictly_increasing"]


def tail_order(tail: np.ndarray, head: np.ndarray, num_nodes: int):
    """(order, first_out): the kept arcs' indices stably sorted by tail (None when that
    is every arc in the given order) and the int32 CSR offsets of the kept arcs."""
    if tail.size and _sorted_without_loops(tail, head):
        return None, _offsets_of_sorted(tail, num_nodes)
    return _counting_order(tail, head, num_nodes)


@numba.njit(cache=True, nogil=True, parallel=True)
def _sorted_without_loops(tail, head):
    """Whether tail never decreases and no arc is a self loop (one pass, all cores)."""
    m = tail.size
    chunks = 64
    step = (m + chunks - 1) // chunks
    bad = np.zeros(chunks, np.bool_)
    for c in numba.prange(chunks):
        for i in range(c * step, min(m, (c + 1) * step)):
            if tail[i] == head[i] or (i > 0 and tail[i] < tail[i - 1]):
                bad[c] = True
                break
    return not bad.any()


@numba.njit(cache=True, nogil=True)
def _offsets_of_sorted(tail, num_nodes):
    """first_out of arcs sorted by tail: the first arc of each node by a binary
    search (n + 1 searches, no pass over the arcs)."""
    return np.searchsorted(tail, np.arange(num_nodes + 1)).astype(np.int32)


@numba.njit(cache=True, nogil=True)
def _counting_order(tail, head, num_nodes):
    """Counting sort by tail of the arcs that are not self loops: counts, an exclusive
    prefix sum (the start of each node's arcs), then each arc in given order to the
    next free place of its tail, which keeps equal tails in given order (stable)."""
    first = np.zeros(num_nodes + 1, np.int32)
    kept = 0
    for i in range(tail.size):
        if tail[i] != head[i]:
            first[tail[i] + 1] += 1
            kept += 1
    for v in range(num_nodes):
        first[v + 1] += first[v]
    order = np.empty(kept, np.int32)   # arc ids fit int32 (a graph's head array is int32)
    for i in range(tail.size):   # first[t] is the next free place of tail t
        t = tail[i]
        if t != head[i]:
            order[first[t]] = i
            first[t] += 1
    # every first[v] now holds the end of v's arcs, the start of v + 1's: shift back
    for v in range(num_nodes, 0, -1):
        first[v] = first[v - 1]
    first[0] = 0
    return order, first


def counting_order(keys: np.ndarray, num_keys: int):
    """(order, first): the indices of ``keys`` (integers in 0..num_keys-1) stably sorted
    by key (int32 while they fit: at 24 M nodes the turns' order is 0.7 GB less), and the
    int64 offsets [num_keys + 1] of each key's run; linear time (what
    np.argsort(kind="stable") gives in O(n log n) for keys wider than 16 bits)."""
    keys = np.ascontiguousarray(keys)
    if keys.size and (int(keys.min()) < 0 or int(keys.max()) >= num_keys):
        raise ValueError(f"keys outside 0..{num_keys - 1}")
    order = np.empty(keys.size, np.int32 if keys.size <= np.iinfo(np.int32).max else np.int64)
    return order, _counting_keys(keys, int(num_keys), order)


@numba.njit(cache=True, nogil=True)
def _counting_keys(keys, num_keys, order):
    first = np.zeros(num_keys + 1, np.int64)
    for i in range(keys.size):
        first[keys[i] + 1] += 1
    for k in range(num_keys):
        first[k + 1] += first[k]
    free = first[:-1].copy()          # the next free place of each key
    for i in range(keys.size):
        k = keys[i]
        order[free[k]] = i
        free[k] += 1
    return first


@numba.njit(cache=True, nogil=True, parallel=True)
def _gather(values, order, out):
    for i in numba.prange(order.size):
        out[i] = values[order[i]]
    return out


def gather(values: np.ndarray, order, dtype=None) -> np.ndarray:
    """values[order] cast to ``dtype`` (values' own by default), in parallel; with no
    order, values themselves (no copy) where they already have that dtype."""
    values = np.asarray(values)
    dtype = values.dtype if dtype is None else np.dtype(dtype)
    if order is None:
        return values.astype(dtype, copy=False)
    if values.ndim != 1 or values.dtype.kind not in "biuf" or values.dtype == np.float16:
        return values[order].astype(dtype, copy=False)   # rare shapes: NumPy's take
    out = np.empty(order.size, dtype)
    return _gather(values, order, out)


def gather_ragged(first: np.ndarray, values: np.ndarray, order):
    """(first, values) of a ragged array (rows values[first[i]:first[i+1]]) with its
    rows in ``order``; the given arrays when there is no order."""
    if order is None:
        return first, values
    lengths = _gather(np.diff(first), order, np.empty(order.size, np.int64))
    new_first = np.zeros(order.size + 1, np.int64)
    np.cumsum(lengths, out=new_first[1:])
    out = np.empty((int(new_first[-1]),) + values.shape[1:], values.dtype)
    if out.shape[0]:
        _gather_rows(first, values.reshape(values.shape[0], -1), order, new_first,
                     out.reshape(out.shape[0], -1))
    return new_first, out


@numba.njit(cache=True, nogil=True, parallel=True)
def _gather_rows(first, values, order, new_first, out):
    for i in numba.prange(order.size):
        src = first[order[i]]
        for k in range(new_first[i + 1] - new_first[i]):
            for c in range(values.shape[1]):
                out[new_first[i] + k, c] = values[src + k, c]


@numba.njit(cache=True, nogil=True, parallel=True)
def _inverse(order, m):
    out = np.full(m, -1, np.int32)
    for i in numba.prange(order.size):
        out[order[i]] = i
    return out


def new_of_old(order, m: int) -> np.ndarray:
    """Each given arc's new index (-1 for a dropped self loop); identity without order."""
    return np.arange(m, dtype=np.int32) if order is None else _inverse(order, m)


@numba.njit(cache=True, nogil=True, parallel=True)
def strictly_increasing(values):
    """Whether every value is above the one before (one pass, all cores)."""
    bad = 0
    for i in numba.prange(1, values.size):
        if values[i] <= values[i - 1]:
            bad += 1
    return bad == 0
