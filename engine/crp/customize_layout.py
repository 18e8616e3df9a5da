"""Device layout of CRP customization, built once per overlay (pure NumPy).

The GPU search pulls: a distance d[v][r] is the minimum over v's IN-edges (u, w) of
d[u][r] + w, so every distance has one writer and no atomics are needed. This module
turns a level's local graph (CSR by source, engine.crp.overlay) into that form:

- ``reverse_csr``: in-edges per local vertex, sources as indices inside the cell,
  sorted by source (neighbouring threads read neighbouring distances);
- ``local_batch`` / ``entry_blocks``: the "local" variant's thread blocks, one per
  (cell, batch of entries), the batch chosen so a block's distances fit in shared
  memory and there are enough blocks to fill the GPU;
- ``pair_first``: the "global" variant's offsets of each cell's [vertex][entry]
  distance matrix in one global array.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.graph import csr_offsets

INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True, eq=False)
class ReverseCsr:
    in_first: np.ndarray    # int32 [V+1] in-edges of local vertex v: in_first[v]..in_first[v+1]
    in_from: np.ndarray     # int32 [E] source vertex, as an index inside its cell
    in_weight: np.ndarray   # int32 [E] index of the edge's cost in the level below
    in_edge: np.ndarray     # int64 [E] the edge's id in the forward CSR


def cells_of_vertices(vertex_first: np.ndarray) -> np.ndarray:
    """int32 [V]: the cell of every local vertex."""
    sizes = np.diff(np.asarray(vertex_first, dtype=np.int64))
    return np.repeat(np.arange(sizes.size, dtype=np.int32), sizes)


def reverse_csr(vertex_first, edge_first, edge_to, edge_weight) -> ReverseCsr:
    """The level's local edges grouped by head vertex (then by source). ValueError if an
    edge leaves its cell or a count or index does not fit in int32."""
    edge_first = np.asarray(edge_first, dtype=np.int64)
    edge_to = np.asarray(edge_to, dtype=np.int64)
    edge_weight = np.asarray(edge_weight, dtype=np.int64)
    num_vertices, num_edges = edge_first.size - 1, edge_to.size
    if num_edges > INT32_MAX or (edge_weight.size and edge_weight.max() > INT32_MAX):
        raise ValueError("a level has more than 2^31-1 local edges or weights")
    if edge_weight.size and edge_weight.min() < 0:
        raise ValueError("a local edge has a negative weight index")
    src = np.repeat(np.arange(num_vertices, dtype=np.int64), np.diff(edge_first))
    cell = cells_of_vertices(vertex_first)
    if num_edges and (edge_to.min() < 0 or edge_to.max() >= num_vertices
                      or np.any(cell[src] != cell[edge_to])):
        raise ValueError("a local edge leaves its cell")
    order = np.lexsort((src, edge_to))
    in_first = csr_offsets(edge_to, num_vertices)
    v0 = np.asarray(vertex_first, dtype=np.int64)[cell[src[order]]]
    return ReverseCsr(in_first, (src[order] - v0).astype(np.int32),
                      edge_weight[order].astype(np.int32), order.astype(np.int64))


def active_cells(entry_first, exit_first) -> np.ndarray:
    """Cells that have shortcuts (entries and exits); the others are never searched."""
    ne, nx = np.diff(entry_first), np.diff(exit_first)
    return np.flatnonzero((ne > 0) & (nx > 0)).astype(np.int32)


def local_batch(vertex_first, entry_first, exit_first, shared_ints: int,
                min_blocks: int = 1) -> int:
    """Entries per block for the local variant: the largest batch whose distance matrix
    [vertices][batch] fits in ``shared_ints`` ints in every cell, made smaller while
    that gives fewer than ``min_blocks`` blocks; 0 when a cell does not fit at all."""
    cells = active_cells(entry_first, exit_first)
    if cells.size == 0:
        return 1
    nv = np.diff(vertex_first)[cells].astype(np.int64)
    ne = np.diff(entry_first)[cells].astype(np.int64)
    batch = int(ne.max())
    while batch > 0 and int((nv * np.minimum(ne, batch)).max()) > shared_ints:
        batch -= 1
    while batch > 1 and int(np.ceil(ne / batch).sum()) < min_blocks:
        batch = (batch + 1) // 2
    return batch


def entry_blocks(entry_first, exit_first, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """(cell, first entry) of every block of the local variant, in cell order."""
    cells = active_cells(entry_first, exit_first)
    per_cell = (np.diff(entry_first)[cells].astype(np.int64) + batch - 1) // batch
    block_cell = np.repeat(cells, per_cell).astype(np.int32)
    start = np.repeat(np.cumsum(per_cell) - per_cell, per_cell)
    block_entry = ((np.arange(block_cell.size) - start) * batch).astype(np.int32)
    return block_cell, block_entry


def shared_bucket(vertex_first, entry_first, exit_first, batch: int, most: int) -> int:
    """Ints of shared memory a block needs, rounded up to a power of two (one compiled
    kernel per bucket), at least 256 and at most ``most``."""
    cells = active_cells(entry_first, exit_first)
    if cells.size == 0:
        return 256
    nv = np.diff(vertex_first)[cells].astype(np.int64)
    need = int((nv * np.minimum(np.diff(entry_first)[cells], batch)).max())
    return min(most, max(256, 1 << (need - 1).bit_length()))


def pair_first(vertex_first, entry_first, exit_first) -> np.ndarray:
    """int64 [C+1]: offsets of the cells' [vertex][entry] distances (none for a cell
    without shortcuts)."""
    ne = np.diff(entry_first).astype(np.int64)
    ne[np.diff(exit_first) == 0] = 0
    first = np.zeros(ne.size + 1, dtype=np.int64)
    np.cumsum(np.diff(vertex_first).astype(np.int64) * ne, out=first[1:])
    return first


DIRTY_BITS = 64              # groups a cell may have for the local variant's dirty mask


def dirty_groups(vertex_first, reverse: ReverseCsr) -> tuple[np.ndarray, np.ndarray]:
    """(watch, mark) int8 [V] for the local variant's skipping of settled vertices.

    A vertex v re-pulls in a round only if bit watch[v] was set in the round before;
    a vertex u whose distance fell sets bit mark[u]. That is exact when mark[u] ==
    watch[v] for every edge u -> v, which holds on levels above 0, where a local edge
    runs from an entry to an exit of one subcell (a group: the subcell's exits watch
    the bit its entries mark). Cells where it does not hold, or with more than
    DIRTY_BITS groups, get -1: always pull, never mark."""
    in_first, in_from = reverse.in_first.astype(np.int64), reverse.in_from.astype(np.int64)
    first = np.asarray(vertex_first, dtype=np.int64)
    num_vertices = in_first.size - 1
    cell = cells_of_vertices(first)
    indeg = np.diff(in_first)
    watch = np.full(num_vertices, -1, dtype=np.int64)
    has_in = indeg > 0
    watch[has_in] = first[cell[has_in]] + in_from[in_first[:-1][has_in]]   # least in-neighbour
    v = np.repeat(np.arange(num_vertices), indeg)
    u = first[cell[v]] + in_from
    mark = np.full(num_vertices, -1, dtype=np.int64)
    mark[u] = watch[v]
    bad = np.zeros(first.size - 1, dtype=bool)
    bad[cell[v[mark[u] != watch[v]]]] = True
    # the groups of a cell numbered 0.. in order of their representative vertex
    reps = np.unique(watch[watch >= 0])
    rep_cell = cell[reps]
    rank = np.arange(reps.size) - np.searchsorted(rep_cell, rep_cell)
    bad[rep_cell[rank >= DIRTY_BITS]] = True
    small = np.full(num_vertices, -1, dtype=np.int64)
    small[reps] = rank
    watch = np.where(watch >= 0, small[np.maximum(watch, 0)], -1)
    mark = np.where(mark >= 0, small[np.maximum(mark, 0)], -1)
    watch[bad[cell]] = mark[bad[cell]] = -1
    return watch.astype(np.int8), mark.astype(np.int8)
