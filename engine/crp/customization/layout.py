"""Device layout of CRP customization, built once per overlay (NumPy, and Numba for the
reverse CSR).

The GPU search pulls: a distance d[v][r] is the minimum over v's IN-edges (u, w) of
d[u][r] + w, so every distance has one writer and no atomics are needed. This module
turns a level's local graph (CSR by source, engine.crp.partition.overlay) into that form:

- ``reverse_csr``: in-edges per local vertex, sources as indices inside the cell,
  sorted by source (neighbouring threads read neighbouring distances);
- ``local_batch`` / ``entry_blocks``: the "local" variant's thread blocks, one per
  (cell, batch of entries), the batch chosen so a block's distances fit in shared
  memory and there are enough blocks to fill the GPU;
- ``pair_first``: the "global" variant's offsets of each cell's [vertex][entry]
  distance matrix in one global array;
- ``minplus_layout`` / ``minplus_batch`` / ``minplus_shape``: the min-plus variant's
  rows, entries per block and block shape (threads, rows loaded at once).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from engine.core.graph import csr_offsets

INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True, eq=False)
class ReverseCsr:
    in_first: np.ndarray    # int32 [V+1] in-edges of local vertex v: in_first[v]..in_first[v+1]
    in_from: np.ndarray     # int32 [E] source vertex, as an index inside its cell
    in_weight: np.ndarray   # int32 [E] index of the edge's cost in the level below
    in_edge: np.ndarray     # int32 [E] the edge's id in the forward CSR


def cells_of_vertices(vertex_first: np.ndarray) -> np.ndarray:
    """int32 [V]: the cell of every local vertex."""
    sizes = np.diff(np.asarray(vertex_first, dtype=np.int64))
    return np.repeat(np.arange(sizes.size, dtype=np.int32), sizes)


def reverse_csr(vertex_first, edge_first, edge_to, edge_weight) -> ReverseCsr:
    """The level's local edges grouped by head vertex (then by source). ValueError if an
    edge leaves its cell or a count or index does not fit in int32. One counting sort
    (Numba) straight into the int32 result: no int64 copies of the edges (level 0 of a
    1 M-node network has 7.2 M of them)."""
    edge_weight = np.asarray(edge_weight)
    num_vertices, num_edges = len(edge_first) - 1, len(edge_to)
    if num_edges > INT32_MAX or (edge_weight.size and edge_weight.max() > INT32_MAX):
        raise ValueError("a level has more than 2^31-1 local edges or weights")
    if edge_weight.size and edge_weight.min() < 0:
        raise ValueError("a local edge has a negative weight index")
    in_first = np.zeros(num_vertices + 1, dtype=np.int32)
    in_from = np.empty(num_edges, dtype=np.int32)
    in_weight = np.empty(num_edges, dtype=np.int32)
    in_edge = np.empty(num_edges, dtype=np.int32)
    if not _reverse(np.asarray(vertex_first), np.asarray(edge_first), np.asarray(edge_to),
                    edge_weight, in_first, in_from, in_weight, in_edge):
        raise ValueError("a local edge leaves its cell")
    return ReverseCsr(in_first, in_from, in_weight, in_edge)


@nb.njit(cache=True)
def _reverse(vertex_first, edge_first, edge_to, edge_weight, in_first, in_from, in_weight,
             in_edge):
    """Counting sort of the edges by head (sources ascending: the forward CSR's order);
    False if an edge's head lies outside its source's cell."""
    num_vertices = in_first.size - 1
    for e in range(edge_to.size):
        if edge_to[e] < 0 or edge_to[e] >= num_vertices:
            return False
        in_first[edge_to[e] + 1] += 1
    for v in range(num_vertices):
        in_first[v + 1] += in_first[v]
    pos = in_first[:-1].copy()
    for c in range(vertex_first.size - 1):
        v0, v1 = vertex_first[c], vertex_first[c + 1]
        for v in range(v0, v1):
            for e in range(edge_first[v], edge_first[v + 1]):
                w = edge_to[e]
                if w < v0 or w >= v1:
                    return False
                p = pos[w]
                pos[w] += 1
                in_from[p], in_weight[p], in_edge[p] = v - v0, edge_weight[e], e
    return True


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


# ------------------------------------------------------------ min-plus variant
@dataclass(frozen=True, eq=False)
class MinplusLayout:
    """Level l > 0 seen as min-plus products: a cell's rows are its subcells' entries,
    subcell by subcell (a *slot* per subcell with entries), then the cell's exits. A
    round multiplies the rows of each slot by that subcell's matrix in S_{l-1} and
    keeps the smaller value in the row each column leads to."""
    slot_first: np.ndarray      # int32 [C+1] slots of cell c
    slot_cell: np.ndarray       # int32 [K] the level-(l-1) cell of each slot
    slot_row: np.ndarray        # int32 [K] cell-local row of the slot's first entry
    exit_row: np.ndarray        # int32 [X_{l-1}] row that column (exit) of S_{l-1} leads to
    exit_slot: np.ndarray       # int8 [X_{l-1}] the slot of that row (< 64), -1: none to mark
    entry_row: np.ndarray       # int32 [N_l] row of each cell entry
    entry_slot: np.ndarray      # int8 [N_l]

    @property
    def max_slots(self) -> int:
        return int(np.diff(self.slot_first).max(initial=0))


MARKED_SLOTS = 64            # slots a cell may mark; the others run every round


def minplus_layout(overlay, level: int) -> MinplusLayout:
    """The min-plus layout of ``level`` (> 0) of ``overlay`` (engine.crp.partition.overlay)."""
    if level < 1:
        raise ValueError("the min-plus layout exists for levels above 0")
    g, top, sub = overlay.graph, overlay.levels[level], overlay.levels[level - 1]
    cells, sub_cells = overlay.cell_of[level], overlay.cell_of[level - 1]
    nin = np.diff(sub.entry_first).astype(np.int64)
    subs = np.flatnonzero(nin > 0)
    parent = cells[g.head[sub.entry_arc[sub.entry_first[subs]]]]
    order = np.lexsort((subs, parent))
    slot_cell, slot_parent = subs[order], parent[order]
    slot_first = csr_offsets(slot_parent, top.num_cells)
    start = np.cumsum(nin[slot_cell]) - nin[slot_cell]
    slot_row = start - start[slot_first[slot_parent]] if slot_cell.size else start
    rank = np.arange(slot_cell.size) - slot_first[slot_parent]
    row_of, slot_of = np.full(sub.num_cells, -1, np.int64), np.full(sub.num_cells, -1, np.int64)
    row_of[slot_cell], slot_of[slot_cell] = slot_row, rank
    nv = np.diff(top.vertex_first).astype(np.int64)
    nx = np.diff(top.exit_first).astype(np.int64)
    rows = np.zeros(top.num_cells, dtype=np.int64)
    np.add.at(rows, slot_parent, nin[slot_cell])
    if np.any(rows != nv - nx):
        raise ValueError(f"level {level}: the subcells' entries are not the cell's rows")

    def entered(arcs):                      # (row, slot) of level-(l-1) entries
        b = sub_cells[g.head[arcs]]
        return row_of[b] + sub.entry_row[overlay.arc_to_boundary[arcs]], slot_of[b]

    x = sub.exit_arc
    leaves = overlay.arc_level[x] > level
    tail = cells[g.tail[x]]
    row_in, slot_in = entered(x)
    exit_row = np.where(leaves, nv[tail] - nx[tail] + top.exit_col[overlay.arc_to_boundary[x]],
                        row_in)
    exit_slot = np.where(leaves | (slot_in >= MARKED_SLOTS), -1, slot_in)
    entry_row, entry_slot = entered(top.entry_arc)
    entry_slot = np.where(entry_slot >= MARKED_SLOTS, -1, entry_slot)
    return MinplusLayout(slot_first, slot_cell.astype(np.int32), slot_row.astype(np.int32),
                         exit_row.astype(np.int32), exit_slot.astype(np.int8),
                         entry_row.astype(np.int32), entry_slot.astype(np.int8))


def minplus_batch(vertex_first, entry_first, exit_first, shared_ints: int, min_blocks: int = 1,
                  per_slot_ints: int = 0) -> tuple[int, int]:
    """(entries per block, padded row length) for the min-plus variant: a block's rows
    [vertices][padded batch] plus ``per_slot_ints`` fit in ``shared_ints``; rows are
    padded to 4 ints (batch <= 4) or to a multiple of 8. (0, 0) when nothing fits."""
    cells = active_cells(entry_first, exit_first)
    if cells.size == 0:
        return 1, 4
    nv = int(np.diff(vertex_first)[cells].max())
    ne = np.diff(entry_first)[cells].astype(np.int64)
    batch = int(ne.max())
    while batch > 0 and nv * minplus_stride(batch) + per_slot_ints > shared_ints:
        batch -= 1
    while batch > 1 and int(np.ceil(ne / batch).sum()) < min_blocks:
        batch = (batch + 1) // 2
    return batch, (minplus_stride(batch) if batch else 0)


def minplus_stride(batch: int) -> int:
    return 4 if batch <= 4 else (batch + 7) // 8 * 8


# Min-plus block shapes, measured on an H100 (generated 8 M-node network, one GPU,
# levels 1-4: 28.0 ms before, one shape for all: 256 threads, rows one at a time,
# blocks as large as 96 KB allow; NY and 2 M for the levels with few blocks). Many
# blocks of a few warps hide what one block waits for (its round's longest task, its
# weights' round trips to L2) behind the others, where there are blocks enough for
# several waves of the GPU; a big cell cannot be cut so, and runs wide blocks.
SMALL_BLOCK_INTS = 12000      # rows + tables of a small block at most (48 KB)
SMALL_BLOCK_ENTRIES = 40      # entries a small block aims at
SMALL_BLOCK_UNROLL = 4        # rows whose weights a task loads at once
SMALL_BLOCK_WAVES = 5         # small blocks only where they fill the GPU this many times
WIDE_BLOCK_THREADS = 256      # otherwise: the widest block
BIG_CELL_UNROLL = 8           # ... a cell whose rows at 8 entries pass SMALL_BLOCK_INTS


@dataclass(frozen=True)
class MinplusShape:
    shared_ints: int        # a block's rows and tables at most
    threads: int
    unroll: int


def minplus_shape(vertex_first, entry_first, exit_first, lay: MinplusLayout, below_exit_first,
                  per_slot_ints: int, most: int, min_blocks: int,
                  gpu: tuple[int, int]) -> MinplusShape:
    """The block shape of a min-plus level whose cells are ``vertex_first`` (rows), with
    ``per_slot_ints`` of tables a block and ``most`` ints of shared memory at most, on a
    GPU of ``gpu`` = (multiprocessors, shared bytes each). Small cells, where there are
    blocks for SMALL_BLOCK_WAVES waves: blocks of about SMALL_BLOCK_ENTRIES entries, one
    thread per three tasks of the largest cell's full round (64-256). Otherwise the
    widest block, rows 8 at a time for a big cell, one at a time for a small one."""
    rows = int(np.diff(vertex_first).max(initial=0))
    if rows * 8 + per_slot_ints > min(most, SMALL_BLOCK_INTS):
        return MinplusShape(most, WIDE_BLOCK_THREADS, BIG_CELL_UNROLL)
    shared = min(most, SMALL_BLOCK_INTS, rows * SMALL_BLOCK_ENTRIES + per_slot_ints)
    batch, stride = minplus_batch(vertex_first, entry_first, exit_first, shared, min_blocks,
                                  per_slot_ints)
    blocks = entry_blocks(entry_first, exit_first, batch)[0].size
    at_once = gpu[0] * max(1, gpu[1] // (4 * (rows * stride + per_slot_ints)))
    if blocks < SMALL_BLOCK_WAVES * at_once:
        return MinplusShape(most, WIDE_BLOCK_THREADS, 1)
    c = int(np.argmax(np.diff(vertex_first)))
    slots = lay.slot_cell[lay.slot_first[c]:lay.slot_first[c + 1]]
    tiles = int(((np.diff(below_exit_first)[slots] + 3) // 4).sum())     # TJ = 4 exits
    tasks = (batch + 7) // 8 * tiles                                       # KT = 8 entries
    third = max(1, (tasks + 2) // 3)
    return MinplusShape(shared, int(min(256, max(64, 1 << (third - 1).bit_length()))),
                        SMALL_BLOCK_UNROLL)
