"""Arc lists for the witness checks of hierarchy files (engine/ch/proof.py,
engine/csp/hierarchy/proof.py): a hierarchy's arcs of one kind grouped by one end, each
group sorted by the other end, so that "is there an arc u -> x" is a binary search in
u's few dozen arcs and two groups meet by a merge. Built in Numba: one counting pass
over the arcs, one fill pass, and an insertion sort per group (parallel over groups).
"""
from __future__ import annotations

import numba
import numpy as np


def listed_mask(size: int, *lists) -> np.ndarray:
    """bool [size]: the arcs in any of ``lists`` (ids checked in range by the validator).
    NumPy, not Numba: as a cached Numba function of ``*args`` it crashed here once calls
    with one list and with two had both been cached."""
    mask = np.zeros(size, np.bool_)
    for arcs in lists:
        mask[arcs] = True
    return mask


@numba.njit(cache=True)
def grouped(key, other, keep, n):
    """(first [n+1], arc ids, their ``other`` ends as int32): the arcs with ``keep`` set
    grouped by ``key`` (a CSR over n nodes), each group sorted by ``other``."""
    first = np.zeros(n + 1, np.int64)
    for a in range(key.size):
        if keep[a]:
            first[key[a] + 1] += 1
    for v in range(n):
        first[v + 1] += first[v]
    fill = first[:-1].copy()
    arcs, ends = np.empty(first[n], np.int64), np.empty(first[n], np.int32)
    for a in range(key.size):
        if keep[a]:
            p = fill[key[a]]
            arcs[p], ends[p], fill[key[a]] = a, other[a], p + 1
    _sort_groups(first, arcs, ends)
    return first, arcs, ends


@numba.njit(cache=True, parallel=True)
def _sort_groups(first, arcs, ends):
    """Insertion sort of each group first[v]:first[v+1] by ``ends``."""
    for v in numba.prange(first.size - 1):
        for i in range(first[v] + 1, first[v + 1]):
            a, o = arcs[i], ends[i]
            j = i
            while j > first[v] and ends[j - 1] > o:
                arcs[j], ends[j] = arcs[j - 1], ends[j - 1]
                j -= 1
            arcs[j], ends[j] = a, o


@numba.njit(cache=True, _nrt=False)
def find(ends, lo, hi, x):
    """The first position of x in the sorted ends[lo:hi] (hi when absent)."""
    top = hi
    while lo < hi:
        m = (lo + hi) >> 1
        if ends[m] < x:
            lo = m + 1
        else:
            hi = m
    return lo if lo < top and ends[lo] == x else top
