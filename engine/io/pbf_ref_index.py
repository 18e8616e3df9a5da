"""Node refs of the kept ways as rows of the used nodes, where the file's node ids are
compact (generated or renumbered files): an id -> row table instead of a sort of all
refs, in parallel Numba passes (engine.io.osm_pbf._index_refs).

The result is np.unique(refs, return_inverse=True)'s: the used ids in increasing order
and each ref's index among them. Every pass writes each element from one iteration
(marking a node used writes the same True from any ref), so the result does not
depend on the thread count.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["compact_index"]


def compact_index(refs: np.ndarray, ids: np.ndarray, xs: np.ndarray, ys: np.ndarray):
    """(unique_ids, ref_u, xy) of refs into the file's nodes (ids sorted, unique, with
    ids[-1] - ids[0] small), or None when a ref is not a node of the file."""
    small = ids.size < 2**31
    row = np.empty(int(ids[-1] - ids[0]) + 1, np.int32 if small else np.int64)
    pos = np.empty(refs.size, row.dtype)
    used = np.zeros(ids.size, np.bool_)
    if not _rows_of_refs(refs, ids, row, pos, used):
        return None
    del row
    rank = np.cumsum(used, dtype=np.int32 if small else np.int64) - 1
    ref_u = np.empty(refs.size, rank.dtype)
    _take(rank, pos, ref_u)
    return ids[used], ref_u, np.stack([xs[used], ys[used]], axis=1)


@numba.njit(cache=True, nogil=True, parallel=True)
def _rows_of_refs(refs, ids, row, pos, used):
    """Fill the id -> row table, each ref's row (pos) and which nodes are used; False
    when a ref is outside the table or names no node."""
    base = ids[0]
    row[:] = -1
    for i in numba.prange(ids.size):
        row[ids[i] - base] = i
    bad = 0
    for i in numba.prange(refs.size):
        k = refs[i] - base
        p = row[k] if 0 <= k < row.size else -1
        pos[i] = p
        if p < 0:
            bad += 1
        else:
            used[p] = True
    return bad == 0


@numba.njit(cache=True, nogil=True, parallel=True)
def _take(values, index, out):
    for i in numba.prange(index.size):
        out[i] = values[index[i]]
