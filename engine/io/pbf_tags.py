"""The tags of a decoded PBF block's ways as rows of value ids, in Numba.

engine.io.osm_pbf classifies ways by their *tag combination*: the values of the keys
way_profile reads (engine.io.osm_tags.WAY_KEYS), one row per way. These kernels find
those keys in the block's string table by their bytes, build the rows (the first
value of a repeated key, as osmium's TagList.get answers), and find a block's
distinct rows with a hash table of whole rows (no sort).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["key_slots", "way_rows", "distinct_rows", "packed_keys"]


def packed_keys(keys) -> tuple[np.ndarray, np.ndarray]:
    """(bytes of all keys, offsets) for key_slots."""
    raw = [k.encode() for k in keys]
    first = np.zeros(len(raw) + 1, np.int64)
    np.cumsum([len(k) for k in raw], out=first[1:])
    return np.frombuffer(b"".join(raw), np.uint8).copy(), first


@numba.njit(cache=True, nogil=True)
def key_slots(buf, str_start, str_end, key_blob, key_first):
    """For every string of the table: the index of the key it equals, or -1."""
    out = np.full(str_start.size, -1, np.int32)
    for i in range(str_start.size):
        length = str_end[i] - str_start[i]
        for k in range(key_first.size - 1):
            if key_first[k + 1] - key_first[k] != length:
                continue
            same = True
            for j in range(length):
                if buf[str_start[i] + j] != key_blob[key_first[k] + j]:
                    same = False
                    break
            if same:
                out[i] = k
                break
    return out


@numba.njit(cache=True, nogil=True)
def way_rows(way_ntags, way_k, way_v, slot, num_keys):
    """(rows, used): rows[w, s] = the string index of way w's value of key s (-1 when
    absent; the first of repeated keys), and which strings are such values."""
    rows = np.full((way_ntags.size, num_keys), -1, np.int32)
    used = np.zeros(slot.size, np.bool_)
    t = 0
    for w in range(way_ntags.size):
        for _ in range(way_ntags[w]):
            s = slot[way_k[t]]
            if s >= 0 and rows[w, s] < 0:
                rows[w, s] = way_v[t]
                used[way_v[t]] = True
            t += 1
    return rows, used


@numba.njit(cache=True, nogil=True)
def distinct_rows(rows, need_a, need_b):
    """(candidates, first, inv) for the rows with a value in column need_a or need_b:
    their indices, the index (among them) of the first of each distinct row, and each
    one's distinct row. An open-addressing hash table compares whole rows, so equal
    hashes never merge different rows."""
    n, k = rows.shape
    cand = np.empty(n, np.int64)
    m = 0
    for w in range(n):
        if rows[w, need_a] >= 0 or rows[w, need_b] >= 0:
            cand[m] = w
            m += 1
    size = 16
    while size < 2 * m:
        size *= 2
    slots = np.full(size, -1, np.int64)      # index into first
    first = np.empty(m, np.int64)
    inv = np.empty(m, np.int64)
    d = 0
    for i in range(m):
        w = cand[i]
        x = np.uint64(14695981039346656037)
        for s in range(k):
            x = (x ^ np.uint64(rows[w, s] + 1)) * np.uint64(1099511628211)
        at = np.int64(x & np.uint64(size - 1))
        while True:
            j = slots[at]
            if j < 0:
                slots[at] = d
                first[d] = i
                inv[i] = d
                d += 1
                break
            same = True
            other = cand[first[j]]
            for s in range(k):
                if rows[other, s] != rows[w, s]:
                    same = False
                    break
            if same:
                inv[i] = j
                break
            at = (at + 1) & (size - 1)
    return cand[:m].copy(), first[:d].copy(), inv
