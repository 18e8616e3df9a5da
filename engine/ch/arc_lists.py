"""Arc lists for the witness checks of hierarchy files (engine/ch/proof.py,
engine/csp/hierarchy/proof.py): a hierarchy's arcs of each kind grouped by one end, each
group sorted by the other end, so that "is there an arc u -> x" is a binary search in
u's few dozen arcs and two groups meet by a merge. Built in Numba: one counting pass
over the arcs, one fill pass, and an insertion sort per group.
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
def grouped(key, other, kind, n, kinds):
    """(first [kinds, n+1], arc ids, their ``other`` ends as int32): the arcs with
    ``kind`` 0 .. kinds-1 (-1: left out), kind by kind, each kind grouped by ``key`` (a
    CSR over n nodes: kind k's arcs of node v at first[k, v]:first[k, v+1] of the one
    array), each group sorted by ``other``. One counting pass, one fill pass."""
    first = np.zeros((kinds, n + 1), np.int64)
    for a in range(key.size):
        if kind[a] >= 0:
            first[kind[a], key[a] + 1] += 1
    total = 0
    for k in range(kinds):
        first[k, 0] = total
        for v in range(n):
            first[k, v + 1] += first[k, v]
        total = first[k, n]
    fill = first[:, :-1].copy()
    arcs, ends = np.empty(total, np.int64), np.empty(total, np.int32)
    for a in range(key.size):
        k = kind[a]
        if k >= 0:
            p = fill[k, key[a]]
            arcs[p], ends[p], fill[k, key[a]] = a, other[a], p + 1
    for k in range(kinds):
        _sort_groups(first[k], arcs, ends)
    return first, arcs, ends


@numba.njit(cache=True)
def _sort_groups(first, arcs, ends):
    """Insertion sort of each group first[v]:first[v+1] by ``ends``."""
    for v in range(first.size - 1):
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
