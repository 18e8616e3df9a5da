"""APSP: the core (the last level graph, fewer than K nodes) as a complete distance matrix.

GPU: blocked Floyd-Warshall, three launches per 32 pivots (engine/kernels/ch.cu),
with predecessors. CPU: scipy's Dijkstra from every core node (faster than a Python
Floyd-Warshall loop), with predecessors. Distances are identical; among equally
short core paths the predecessors may differ, which queries never see.
"""
from __future__ import annotations

import numpy as np

from engine.ch.level_graph import LevelGraph

INF = np.iinfo(np.int64).max
_ZERO = 1e-9   # scipy drops explicit zeros as non-arcs; see engine/routing/reference.py


def core_apsp(g: LevelGraph, core_nodes, backend=None):
    """(dist int64 [k, k] with INF for no path, pred int32 [k, k] core indices, -1 none)."""
    backend = backend or g.backend
    xp = backend.xp
    k = int(core_nodes.size)
    position = xp.full(g.n, -1, dtype=xp.int64)
    position[core_nodes] = xp.arange(k)
    ct, ch, w = position[g.tail], position[g.head], g.weight
    if backend.is_gpu:
        return _floyd_warshall(backend, k, ct, ch, w)
    import scipy.sparse as sp
    from scipy.sparse import csgraph
    matrix = sp.csr_matrix((np.where(w == 0, _ZERO, w.astype(float)), (ct, ch)), shape=(k, k))
    dist, pred = csgraph.shortest_path(matrix, method="D", directed=True, return_predecessors=True)
    finite = np.isfinite(dist)
    out = np.where(finite, np.rint(np.where(finite, dist, 0)), 0).astype(np.int64)
    out[~finite] = INF
    return out, np.where(pred < 0, -1, pred).astype(np.int32)


def _floyd_warshall(backend, k, ct, ch, w):
    xp = backend.xp
    tile = 32                                  # FW_TILE in ch.cu
    rounds = (k + tile - 1) // tile
    P = rounds * tile                          # padding nodes have no arcs
    big = xp.int64(2**61)      # INF stand-in that survives one addition
    dist = xp.full((P, P), big, dtype=xp.int64)
    dist[ct, ch] = w           # one arc per pair in a level graph
    pred = xp.full((P, P), -1, dtype=xp.int32)
    pred[ct, ch] = ct.astype(xp.int32)
    idx = xp.arange(P)
    dist[idx, idx] = 0
    threads = (tile, tile)
    for b in range(rounds):
        args = (dist, pred, P, b)
        backend.launch("ch", "ch_fw_diagonal", args, grid=1, block=threads)
        backend.launch("ch", "ch_fw_cross", args, grid=(rounds, 2), block=threads)
        backend.launch("ch", "ch_fw_rest", args, grid=(rounds, rounds), block=threads)
    dist, pred = xp.ascontiguousarray(dist[:k, :k]), xp.ascontiguousarray(pred[:k, :k])
    dist[dist >= big] = INF
    return dist, pred
