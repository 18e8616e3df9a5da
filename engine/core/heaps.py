"""Binary min-heaps for the Numba searches (Dijkstra, label-setting, the CRP query):
one sift code, two kinds, two key shapes, and a packed variant.

- plain: ``push(key, item, size, k, v)`` and ``pop(key, item, size) -> (k, v, size)``.
  An item may be in it several times; the search skips the stale entries it pops
  (lazy deletion). Room: one entry per push.
- packed (the CRP query): ``packed_push_or_decrease(heap, rec, pc, size, k, arc)``,
  ``packed_pop`` and ``packed_forget``. An addressable heap of int64 entries
  ``k << 32 | arc`` whose slots live in column ``pc`` of the search's own arc records
  ``rec``: one int64 compare orders two entries (key, then arc id) and a relaxation
  touches one cache line of search state instead of three arrays. Keys are
  non-negative int32 costs.
- addressable: ``push_or_decrease(key, item, pos, size, k, v)`` inserts item v or
  lowers its key, ``pop_addressable(key, item, pos, size)``, and ``forget(item, pos,
  size)`` to leave ``pos`` clean when a search stops early. Each item is in it at
  most once (``pos[v]``: its slot, -1 when absent), so it needs no more room than
  there are items.

Keys are compared as numbers when ``key`` is 1-D, and as (primary, tie) pairs in
lexicographic order when it is [n, 2] (cost-budgeted labels: length, then cost);
``k`` is then a 2-tuple. ``size`` is the number of entries; the arrays are the
caller's, never grown here (see engine.core.arrays.grow). Equal keys leave in no
promised order.

All are compiled with ``_nrt=False`` and called (LLVM inlines them), ``forget``
alone is ``inline='always'``: no reference counting, which matters, since each array
argument of a call with it costs an atomic incref/decref. They are not inlined at
Numba's level: a search that is itself inlined (csp labeling's _expand) would nest
the inlining, which Numba 0.68 miscompiled here (bidirectional Dijkstra returned
wrong distances). Numba's cache of a caller is not invalidated when this file
changes: after editing it, delete the callers' cached ``*.nbi``/``*.nbc`` files.
"""
from __future__ import annotations

import numba
from numba import types
from numba.extending import overload


# ------------------------------------------------- key and position access
def _key_at(key, i):
    """key[i] (1-D) or the pair (key[i, 0], key[i, 1]) ([n, 2])."""


def _set_key(key, i, k):
    """key[i] = k (1-D) or key[i, :] = the pair k ([n, 2])."""


def _set_pos(pos, v, i):
    """pos[v] = i, or nothing when ``pos`` is None (a plain heap)."""


@overload(_key_at, inline="always")
def _key_at_impl(key, i):
    if key.ndim == 1:
        return lambda key, i: key[i]
    return lambda key, i: (key[i, 0], key[i, 1])


@overload(_set_key, inline="always")
def _set_key_impl(key, i, k):
    if key.ndim == 1:
        def one(key, i, k):
            key[i] = k
        return one

    def pair(key, i, k):
        key[i, 0] = k[0]
        key[i, 1] = k[1]
    return pair


@overload(_set_pos, inline="always")
def _set_pos_impl(pos, v, i):
    if isinstance(pos, types.NoneType):
        return lambda pos, v, i: None

    def store(pos, v, i):
        pos[v] = i
    return store


# ------------------------------------------------------------ the sifts
@numba.njit(cache=True, _nrt=False)
def _place(key, item, pos, i, k, v):
    """Entry (k, v) into slot i."""
    _set_key(key, i, k)
    item[i] = v
    _set_pos(pos, v, i)


@numba.njit(cache=True, _nrt=False)
def _sift_up(key, item, pos, i, k, v):
    """Place (k, v) at or above slot i: parents with larger keys move down into the hole."""
    while i > 0:
        p = (i - 1) >> 1
        if not k < _key_at(key, p):
            break
        _place(key, item, pos, i, _key_at(key, p), item[p])
        i = p
    _place(key, item, pos, i, k, v)


@numba.njit(cache=True, _nrt=False)
def _sift_down(key, item, pos, size, k, v):
    """Place (k, v) at or below the root of a heap of ``size`` entries: the smaller
    child moves up into the hole while its key is smaller than k."""
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _key_at(key, c + 1) < _key_at(key, c):
            c += 1
        if not _key_at(key, c) < k:
            break
        _place(key, item, pos, i, _key_at(key, c), item[c])
        i = c
    _place(key, item, pos, i, k, v)


@numba.njit(cache=True, _nrt=False)
def _pop(key, item, pos, size):
    """The top (k, v) and the new size; the last entry sinks from the root's hole."""
    k, v = _key_at(key, 0), item[0]
    _set_pos(pos, v, -1)
    size -= 1
    if size > 0:
        _sift_down(key, item, pos, size, _key_at(key, size), item[size])
    return k, v, size


# ------------------------------------------------------------ plain heap
@numba.njit(cache=True, _nrt=False)
def push(key, item, size, k, v):
    """Push (k, v) on a heap of ``size`` entries; returns the new size."""
    _sift_up(key, item, None, size, k, v)
    return size + 1


@numba.njit(cache=True, _nrt=False)
def pop(key, item, size):
    """Remove the top of a heap of ``size`` > 0 entries: (its key, its item, new size)."""
    return _pop(key, item, None, size)


# ------------------------------------------------------- addressable heap
@numba.njit(cache=True, _nrt=False)
def push_or_decrease(key, item, pos, size, k, v):
    """Insert item v with key k, or move it up to k (callers pass only a k below its
    current key); returns the new size."""
    i = pos[v]
    if i < 0:
        i = size
        size += 1
    _sift_up(key, item, pos, i, k, v)
    return size


@numba.njit(cache=True, _nrt=False)
def pop_addressable(key, item, pos, size):
    """Remove the top: (its key, its item, new size); its ``pos`` becomes -1."""
    return _pop(key, item, pos, size)


@numba.njit(cache=True, inline="always")
def forget(item, pos, size):
    """Mark the ``size`` items still in the heap absent (pos -1): the heap is empty."""
    for i in range(size):
        pos[item[i]] = -1


# ------------------------------------------------------------ packed heap
LOW = 0xFFFFFFFF


@numba.njit(cache=True, _nrt=False)
def _packed_place(heap, rec, pc, i, e):
    """Entry e into slot i, and its arc's record points at it."""
    heap[i] = e
    rec[e & LOW, pc] = i


@numba.njit(cache=True, _nrt=False)
def _packed_sift_up(heap, rec, pc, i, e):
    """Place entry e at or above slot i (parents with larger entries move down)."""
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= e:
            break
        _packed_place(heap, rec, pc, i, heap[p])
        i = p
    _packed_place(heap, rec, pc, i, e)


@numba.njit(cache=True, _nrt=False)
def packed_push_or_decrease(heap, rec, pc, size, key, arc):
    """Insert ``arc`` with ``key`` or lower its key (callers pass only a lower one);
    returns the new size."""
    i = rec[arc, pc]
    if i < 0:
        i = size
        size += 1
    _packed_sift_up(heap, rec, pc, i, (numba.int64(key) << 32) | arc)
    return size


@numba.njit(cache=True, _nrt=False)
def packed_pop(heap, rec, pc, size):
    """Remove the top: (its key, its arc, the new size); its slot becomes -1."""
    top = heap[0]
    rec[top & LOW, pc] = -1
    size -= 1
    if size > 0:
        e = heap[size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and heap[c + 1] < heap[c]:
                c += 1
            if heap[c] >= e:
                break
            _packed_place(heap, rec, pc, i, heap[c])
            i = c
        _packed_place(heap, rec, pc, i, e)
    return top >> 32, top & LOW, size


@numba.njit(cache=True, _nrt=False)
def packed_forget(heap, rec, pc, size):
    """Mark the arcs still in the heap absent: the heap is empty."""
    for i in range(size):
        rec[heap[i] & LOW, pc] = -1
