"""Dijkstra inside one cell's local graph (Numba): the CPU twin of customization
(every entry to every exit, cells in parallel), keeping each entry's shortest-path
tree when asked (the query's unpacking hints: engine.crp.customization.trees).

Costs are int32 with FORBIDDEN (2^31-1) for "no way"; sums are int64, and a finite
distance that reaches FORBIDDEN sets the overflow flag instead of wrapping.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from engine.core.heaps import pop, push
from engine.crp.metric import FORBIDDEN


@nb.njit(cache=True, _nrt=False)
def _dijkstra(v0, source, nv, edge_first, edge_to, edge_weight, weights, dist, par, hd, hv):
    """Distances from local vertex ``source`` over the cell whose vertices start at the
    global index v0, and each reached vertex's predecessor (local). Returns overflow."""
    for i in range(nv):
        dist[i] = FORBIDDEN
        par[i] = -1
    dist[source] = 0
    size = push(hd, hv, 0, 0, source)
    overflow = False
    while size > 0:
        d, u, size = pop(hd, hv, size)
        if d > dist[u]:
            continue
        for e in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
            w = weights[edge_weight[e]]
            if w == FORBIDDEN:
                continue
            nd = d + w
            x = edge_to[e] - v0
            if nd >= FORBIDDEN:
                overflow = True
                continue
            if nd < dist[x]:
                dist[x] = nd
                par[x] = u
                size = push(hd, hv, size, nd, x)
    return overflow


@nb.njit(cache=True)
def cell_span(c, vertex_first, entry_first, exit_first):
    """Where cell c's local graph lies: (its first vertex, vertices, entries, exits)."""
    v0 = vertex_first[c]
    return (v0, vertex_first[c + 1] - v0, entry_first[c + 1] - entry_first[c],
            exit_first[c + 1] - exit_first[c])


def customize_cells(vertex_first, entry_first, exit_first, edge_first, edge_to, edge_weight,
                    weights, clique_first, out, tree_first=None, trees=None):
    """S[c][r][j] for every cell: a Dijkstra from each entry; with ``tree_first`` and
    ``trees`` (engine.crp.customization.trees) each entry's tree too. Returns overflow."""
    if trees is None:
        tree_first, trees = np.zeros(vertex_first.size, np.int64), np.zeros(0, np.int16)
    return _customize_cells(vertex_first, entry_first, exit_first, edge_first, edge_to,
                            edge_weight, weights, clique_first, out, tree_first, trees)


@nb.njit(cache=True, parallel=True)
def _customize_cells(vertex_first, entry_first, exit_first, edge_first, edge_to, edge_weight,
                     weights, clique_first, out, tree_first, trees):
    num_cells = vertex_first.size - 1
    overflow = np.zeros(num_cells, dtype=np.bool_)
    keep = trees.size > 0
    for c in nb.prange(num_cells):
        v0, nv, ne, nx = cell_span(c, vertex_first, entry_first, exit_first)
        if ne == 0 or nx == 0:
            continue
        ecount = edge_first[v0 + nv] - edge_first[v0]
        dist = np.empty(nv, dtype=np.int64)
        par = np.empty(nv, dtype=np.int64)
        hd = np.empty(ecount + 1, dtype=np.int64)
        hv = np.empty(ecount + 1, dtype=np.int64)
        base = clique_first[c]
        for r in range(ne):
            if _dijkstra(v0, r, nv, edge_first, edge_to, edge_weight, weights, dist, par, hd, hv):
                overflow[c] = True
            for j in range(nx):
                out[base + r * nx + j] = dist[nv - nx + j]
            if keep:
                row = tree_first[c] + r * (nv - ne) - ne
                for v in range(ne, nv):
                    trees[row + v] = par[v]
    return overflow.any()
