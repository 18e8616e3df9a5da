"""APSP: the core (the last overlay, fewer than K nodes) as a complete distance matrix.

GPU: Floyd-Warshall, one fused in-place kernel per pivot (engine/kernels/ch.cu),
with predecessors. CPU: scipy's Dijkstra from every core node (faster than a Python
Floyd-Warshall loop), with predecessors. Distances are identical; among equally
short core paths the predecessors may differ, which queries never see.
"""
from __future__ import annotations

import numpy as np

from engine.backend import load_module
from engine.ch.overlay import Overlay

INF = np.iinfo(np.int64).max
_ZERO = 1e-9   # scipy drops explicit zeros as non-arcs; see engine/reference.py


def core_apsp(g: Overlay, core_nodes, backend):
    """(dist int64 [k, k] with INF for no path, pred int32 [k, k] core indices, -1 none)."""
    xp = g.xp
    k = int(core_nodes.size)
    position = xp.full(g.n, -1, dtype=xp.int64)
    position[core_nodes] = xp.arange(k)
    ct, ch, w = position[g.tail], position[g.head], g.weight
    if backend.is_gpu:
        return _floyd_warshall(xp, k, ct, ch, w)
    import scipy.sparse as sp
    from scipy.sparse import csgraph
    matrix = sp.csr_matrix((np.where(w == 0, _ZERO, w.astype(float)), (ct, ch)), shape=(k, k))
    dist, pred = csgraph.shortest_path(matrix, method="D", directed=True, return_predecessors=True)
    finite = np.isfinite(dist)
    out = np.where(finite, np.rint(np.where(finite, dist, 0)), 0).astype(np.int64)
    out[~finite] = INF
    return out, np.where(pred < 0, -1, pred).astype(np.int32)


def _floyd_warshall(xp, k, ct, ch, w):
    big = xp.int64(2**61)      # INF stand-in that survives one addition
    dist = xp.full((k, k), big, dtype=xp.int64)
    dist[ct, ch] = w           # one arc per pair in an overlay
    pred = xp.full((k, k), -1, dtype=xp.int32)
    pred[ct, ch] = ct.astype(xp.int32)
    idx = xp.arange(k)
    dist[idx, idx] = 0
    pivot = load_module("ch").get_function("ch_fw_pivot")
    blocks = ((k + 255) // 256, k)
    for p in range(k):
        pivot(blocks, (256,), (dist, pred, np.int64(k), np.int64(p)))
    dist[dist >= big] = INF
    return dist, pred
