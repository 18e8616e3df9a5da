"""APSP: the core (the last overlay, fewer than K nodes) as a complete distance matrix.

GPU: blocked Floyd-Warshall, three launches per 32 pivots (engine/kernels/ch.cu),
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
    tile = 32                                  # FW_TILE in ch.cu
    rounds = (k + tile - 1) // tile
    P = rounds * tile                          # padding nodes have no arcs
    big = xp.int64(2**61)      # INF stand-in that survives one addition
    dist = xp.full((P, P), big, dtype=xp.int64)
    dist[ct, ch] = w           # one arc per pair in an overlay
    pred = xp.full((P, P), -1, dtype=xp.int32)
    pred[ct, ch] = ct.astype(xp.int32)
    idx = xp.arange(P)
    dist[idx, idx] = 0
    module = load_module("ch")
    diagonal, cross, rest = (module.get_function(f"ch_fw_{name}")
                             for name in ("diagonal", "cross", "rest"))
    threads = (tile, tile)
    for b in range(rounds):
        args = (dist, pred, np.int64(P), np.int64(b))
        diagonal((1,), threads, args)
        cross((rounds, 2), threads, args)
        rest((rounds, rounds), threads, args)
    dist, pred = xp.ascontiguousarray(dist[:k, :k]), xp.ascontiguousarray(pred[:k, :k])
    dist[dist >= big] = INF
    return dist, pred
