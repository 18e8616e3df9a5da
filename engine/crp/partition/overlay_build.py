"""The overlay's local graphs in linear time (Numba), for engine.crp.partition.overlay.

A level's local vertices are grouped by cell, then entries / inner vertices / exits,
then arc id: a stable counting sort (``vertex_order``) instead of a three-key lexsort.
Edges need no sort at all: the out-edges of a local vertex are the turns out of its
arc (level 0: ``Turns`` is a CSR by from-arc) or the row of its arc in its subcell's
shortcut matrix (levels above 0), both already in the order a stable sort by source
gives. So ``local_edges`` counts each vertex's edges, takes offsets, and fills every
vertex's edges in parallel, with no per-edge temporaries.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def vertex_order(inner_cell, is_entry, exit_cell, num_cells):
    """(vertex_first int32 [C+1], position of each inner item, position of each exit)
    of the local vertices sorted by (cell, entry 0 / inner 1 / exit 2), stably: the
    inner items come in arc order, the exits by cell then arc id."""
    start = np.zeros(3 * num_cells + 1, dtype=np.int64)
    for i in range(inner_cell.size):
        start[3 * inner_cell[i] + (0 if is_entry[i] else 1) + 1] += 1
    for j in range(exit_cell.size):
        start[3 * exit_cell[j] + 3] += 1
    for k in range(1, start.size):
        start[k] += start[k - 1]
    vertex_first = np.empty(num_cells + 1, dtype=np.int32)
    for c in range(num_cells + 1):
        vertex_first[c] = start[3 * c]
    inner_pos = np.empty(inner_cell.size, dtype=np.int32)
    for i in range(inner_cell.size):
        k = 3 * inner_cell[i] + (0 if is_entry[i] else 1)
        inner_pos[i] = start[k]
        start[k] += 1
    exit_pos = np.empty(exit_cell.size, dtype=np.int32)
    for j in range(exit_cell.size):
        k = 3 * exit_cell[j] + 2
        exit_pos[j] = start[k]
        start[k] += 1
    return vertex_first, inner_pos, exit_pos


@nb.njit(cache=True, inline="always")
def _row(a, level0, first_turn, sub):
    """(first edge, edges, first weight) of the non-exit vertex of arc a: the turns out
    of a (level 0), or row r of a's subcell's matrix (a is that subcell's entry r).
    ``sub``: (head, the level below's cells, arc_to_boundary, its entry_row, exit_first,
    clique_first)."""
    if level0:
        return (np.int64(first_turn[a]), np.int64(first_turn[a + 1] - first_turn[a]),
                np.int64(first_turn[a]))
    head, sub_cells, arc_to_boundary, entry_row, exit_first, clique_first = sub
    s = sub_cells[head[a]]
    nx = np.int64(exit_first[s + 1] - exit_first[s])
    return (np.int64(exit_first[s]), nx,
            clique_first[s] + np.int64(entry_row[arc_to_boundary[a]]) * nx)


@nb.njit(cache=True, parallel=True)
def edge_counts(vertex_arc, exit_vertex, level0, first_turn, sub):
    """int64 [V]: out-edges of every local vertex (none for an exit vertex)."""
    deg = np.zeros(vertex_arc.size, dtype=np.int64)
    for v in nb.prange(vertex_arc.size):
        a = vertex_arc[v]
        if exit_vertex[a] != v:
            deg[v] = _row(a, level0, first_turn, sub)[1]
    return deg


@nb.njit(cache=True, parallel=True)
def fill_edges(vertex_arc, exit_vertex, inner_vertex, edge_first, level0, first_turn, to_arc,
               sub, sub_exit_arc, cells, edge_to, edge_weight):
    """Each vertex's out-edges at edge_first[v]: the head's local vertex (its inner
    vertex if the head arc ends in the same cell, else its exit vertex) and the index
    of the edge's cost in the level below (a turn id; a position in S_{l-1})."""
    for v in nb.prange(vertex_arc.size):
        a = vertex_arc[v]
        if exit_vertex[a] == v:
            continue
        first, n, weight = _row(a, level0, first_turn, sub)
        head = sub[0]
        cell = cells[head[a]]
        p = edge_first[v]
        for j in range(n):
            b = to_arc[first + j] if level0 else sub_exit_arc[first + j]
            edge_to[p + j] = inner_vertex[b] if cells[head[b]] == cell else exit_vertex[b]
            edge_weight[p + j] = weight + j
