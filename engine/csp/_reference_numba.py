"""The compiled plain label-setting search behind reference_csp_compiled (its own heap,
nothing shared with the engine's search)."""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def plain_label_setting(first_out, head, length, cost, source, target, budget):
    """(length, cost) of the least-length path within ``budget``, (-1, -1) if none."""
    n = first_out.size - 1
    best_cost = np.full(n, np.iinfo(np.int64).max, np.int64)
    cap = 1 << 16
    hl, hc, hv = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    size = 0
    hl[0], hc[0], hv[0] = 0, 0, source
    size = 1
    while size > 0:
        l, c, v = hl[0], hc[0], hv[0]
        size -= 1                                      # pop: sift the last entry down
        xl, xc, xv = hl[size], hc[size], hv[size]
        i = 0
        while True:
            k = 2 * i + 1
            if k >= size:
                break
            if k + 1 < size and (hl[k + 1] < hl[k] or (hl[k + 1] == hl[k] and hc[k + 1] < hc[k])):
                k += 1
            if hl[k] < xl or (hl[k] == xl and hc[k] < xc):
                hl[i], hc[i], hv[i] = hl[k], hc[k], hv[k]
                i = k
            else:
                break
        if size > 0:
            hl[i], hc[i], hv[i] = xl, xc, xv
        if c >= best_cost[v]:
            continue                                   # a label that left before dominates it
        best_cost[v] = c
        if v == target:
            return l, c
        for a in range(first_out[v], first_out[v + 1]):
            nc = c + cost[a]
            w = head[a]
            if nc > budget or nc >= best_cost[w]:
                continue
            if size == hl.size:                        # grow the heap
                hl2, hc2, hv2 = np.empty(2 * size, np.int64), np.empty(2 * size, np.int64), \
                    np.empty(2 * size, np.int64)
                hl2[:size], hc2[:size], hv2[:size] = hl, hc, hv
                hl, hc, hv = hl2, hc2, hv2
            j = size                                   # push: sift up
            nl = l + length[a]
            size += 1
            while j > 0:
                p = (j - 1) >> 1
                if nl < hl[p] or (nl == hl[p] and nc < hc[p]):
                    hl[j], hc[j], hv[j] = hl[p], hc[p], hv[p]
                    j = p
                else:
                    break
            hl[j], hc[j], hv[j] = nl, nc, w
    return -1, -1
