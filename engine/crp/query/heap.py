"""The CRP query's heap (Numba): a binary min-heap of packed int64 entries, key << 32 |
arc, whose slots live in the search's own arc records (column ``pc`` of ``rec``).

One int64 compare orders two entries (key first, then arc id), one load reads an
entry, and the slot of an arc shares the cache line of its distance and parent, so
a relaxation touches one line of the search state, not three arrays. Keys are
non-negative int32 costs (below FORBIDDEN). Compiled with ``_nrt=False``, not inlined
at Numba's level (engine.core.heaps says why).
"""
from __future__ import annotations

import numba as nb
import numpy as np

LOW = 0xFFFFFFFF


@nb.njit(cache=True, _nrt=False)
def sift_up(heap, rec, pc, i, e):
    """Place entry e at or above slot i (parents with larger entries move down)."""
    while i > 0:
        p = (i - 1) >> 1
        q = heap[p]
        if q <= e:
            break
        heap[i] = q
        rec[q & LOW, pc] = i
        i = p
    heap[i] = e
    rec[e & LOW, pc] = i


@nb.njit(cache=True, _nrt=False)
def push_or_decrease(heap, rec, pc, size, key, arc):
    """Insert ``arc`` with ``key`` or lower its key (callers pass only a lower one);
    returns the new size."""
    i = rec[arc, pc]
    if i < 0:
        i = size
        size += 1
    sift_up(heap, rec, pc, i, (np.int64(key) << 32) | arc)
    return size


@nb.njit(cache=True, _nrt=False)
def pop(heap, rec, pc, size):
    """Remove the top: (its key, its arc, the new size); its slot becomes -1."""
    top = heap[0]
    arc = top & LOW
    rec[arc, pc] = -1
    size -= 1
    if size > 0:
        e = heap[size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            hc = heap[c]
            if c + 1 < size and heap[c + 1] < hc:
                c += 1
                hc = heap[c]
            if hc >= e:
                break
            heap[i] = hc
            rec[hc & LOW, pc] = i
            i = c
        heap[i] = e
        rec[e & LOW, pc] = i
    return top >> 32, arc, size


@nb.njit(cache=True, _nrt=False)
def forget(heap, rec, pc, size):
    """Mark the arcs still in the heap absent: the heap is empty."""
    for i in range(size):
        rec[heap[i] & LOW, pc] = -1
