"""Overlay(graph, partition): the CRP topology, with no weights.

Search states are arcs (engine.core.turns). An arc whose tail and head lie in
different cells of level l is a *boundary arc* of level l; it is an *exit* of its
tail's cell and an *entry* of its head's cell. Cell c of level l holds a full
entry x exit matrix of shortcuts: S_l[c][r][j] = the cost of the best path that has
just driven along entry r and ends having driven along exit j, staying in c (the
exit's own cost and the turn onto it included). Cells nest, so a boundary arc of
level l is one of every lower level too; ``arc_level[a]`` counts its levels.

Customization costs a cell of level l on its *local graph*: for l = 0 the arcs with
their head in the cell (entries first) plus the exits, joined by turns; for l > 0 the
boundary arcs of level l-1 with their head in the cell (entries first) plus the
exits, joined by the subcells' shortcut matrices. Every local edge names the index of
its weight in the level below (a turn id for l = 0, a position in S_{l-1} above), so
a new metric only gathers weights: the layout is built here, once.

The matrices grow with entries x exits per cell, so a partition with poor cells (random
ones on NY: hundreds of GiB) is refused before anything is built: ``matrix_bytes``
estimates the overlay and one customization from the partition alone and the Overlay
checks it against the memory budget (engine.io.limits).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.turns import Turns, turn_graph
from engine.core.graph import csr_offsets
from engine.io.limits import check_allocation

EDGE_BYTES, EDGE_BUILD_BYTES = 16, 40   # a local edge of a level above 0 kept; its level's build
SHORTCUT_BYTES = 4                      # a customization's S_l entry (int32)


@dataclass(frozen=True, eq=False)
class LevelTopology:
    """One level's cells: entries, exits, shortcut matrix layout and local graphs."""
    level: int
    num_cells: int
    entry_first: np.ndarray     # int32 [C+1] entries of cell c: entry_arc[entry_first[c]:...]
    entry_arc: np.ndarray       # int32 boundary arcs by head cell, then arc id
    exit_first: np.ndarray      # int32 [C+1]
    exit_arc: np.ndarray        # int32 boundary arcs by tail cell, then arc id
    entry_row: np.ndarray       # int32 [B0] row of each level-0 boundary arc in its head cell (-1)
    exit_col: np.ndarray        # int32 [B0] column in its tail cell (-1)
    clique_first: np.ndarray    # int64 [C+1] offsets of the cells' matrices in S_l
    vertex_first: np.ndarray    # int32 [C+1] local vertices of cell c (entries, inner, exits)
    vertex_arc: np.ndarray      # int32 [V] the arc each local vertex stands for
    edge_first: np.ndarray      # int64 [V+1] local CSR by source vertex
    edge_to: np.ndarray         # int32 [E] global local-vertex index of the edge's head
    edge_weight: np.ndarray     # int64 [E] index of the edge's cost in the level below

    @property
    def num_shortcuts(self) -> int:
        return int(self.clique_first[-1])

    def counts(self, c: int) -> tuple[int, int, int]:
        """(entries, exits, local vertices) of cell c."""
        return (int(self.entry_first[c + 1] - self.entry_first[c]),
                int(self.exit_first[c + 1] - self.exit_first[c]),
                int(self.vertex_first[c + 1] - self.vertex_first[c]))


class Overlay:
    """The multilevel overlay of ``graph`` for ``partition`` (no weights)."""

    def __init__(self, graph, partition, turns: Turns | None = None) -> None:
        import time
        nbytes, shortcuts = matrix_bytes(graph, partition)      # refused before anything is built
        check_allocation(nbytes, f"the CRP overlay of this partition ({shortcuts:,} shortcuts in "
                                 "its cell matrices)", getattr(partition, "source", "") or None)
        t0 = time.perf_counter()
        self.graph = graph
        self.partition = partition
        self.turns = turns if turns is not None else turn_graph(graph)
        cell_of = np.asarray(partition.cell_of)
        self.cell_of = cell_of
        self.query_level = np.asarray(partition.query_level, dtype=bool)
        crossings = cell_of[:, graph.tail] != cell_of[:, graph.head]
        self.arc_level = crossings.sum(axis=0).astype(np.int8)
        self.boundary_arc = np.flatnonzero(self.arc_level > 0).astype(np.int32)
        self.arc_to_boundary = np.full(graph.num_arcs, -1, dtype=np.int32)
        self.arc_to_boundary[self.boundary_arc] = np.arange(self.boundary_arc.size, dtype=np.int32)
        self.levels: list[LevelTopology] = []
        for level in range(cell_of.shape[0]):
            self.levels.append(self._build_level(level))
        self.build_ms = (time.perf_counter() - t0) * 1000

    @property
    def num_levels(self) -> int:
        return len(self.levels)

    def summary(self) -> dict:
        return {
            "levels": self.num_levels, "turns": self.turns.num_turns,
            "banned_turns": self.turns.banned,
            "cells": [t.num_cells for t in self.levels],
            "boundary_arcs": [int((self.arc_level > l).sum()) for l in range(self.num_levels)],
            "shortcuts": [t.num_shortcuts for t in self.levels],
            "query_level": self.query_level.tolist(), "build_ms": round(self.build_ms, 1),
        }

    # ------------------------------------------------------------ construction
    def _build_level(self, level: int) -> LevelTopology:
        g = self.graph
        cells = self.cell_of[level]
        num_cells = int(cells.max()) + 1 if cells.size else 0
        bnd = self.boundary_arc[self.arc_level[self.boundary_arc] > level]
        head_cell, tail_cell = cells[g.head[bnd]], cells[g.tail[bnd]]
        entry_arc, entry_first, entry_row = _grouped(bnd, head_cell, num_cells, self.arc_to_boundary,
                                                       self.boundary_arc.size)
        exit_arc, exit_first, exit_col = _grouped(bnd, tail_cell, num_cells, self.arc_to_boundary,
                                                    self.boundary_arc.size)
        ne = np.diff(entry_first).astype(np.int64)
        nx = np.diff(exit_first).astype(np.int64)
        clique_first = np.zeros(num_cells + 1, dtype=np.int64)
        np.cumsum(ne * nx, out=clique_first[1:])
        local = self._local_graph(level, cells, num_cells, entry_arc, exit_arc, exit_first)
        return LevelTopology(level, num_cells, entry_first, entry_arc, exit_first, exit_arc,
                             entry_row, exit_col, clique_first, *local)

    def _local_graph(self, level, cells, num_cells, entry_arc, exit_arc, exit_first):
        """Local vertices (per cell: entries, inner vertices, exits) and edges."""
        g = self.graph
        if level == 0:
            inner_arcs = np.arange(g.num_arcs, dtype=np.int32)
        else:
            inner_arcs = self.boundary_arc[self.arc_level[self.boundary_arc] > level - 1]
        is_entry = self.arc_level[inner_arcs] > level
        inner_cell = cells[g.head[inner_arcs]]
        exit_cell = cells[g.tail[exit_arc]]
        arcs = np.concatenate([inner_arcs, exit_arc])
        cell = np.concatenate([inner_cell, exit_cell])
        group = np.concatenate([np.where(is_entry, 0, 1), np.full(exit_arc.size, 2)])
        order = np.lexsort((arcs, group, cell))
        vertex_arc = arcs[order].astype(np.int32)
        vertex_first = csr_offsets(cell[order], num_cells)
        position = np.empty(order.size, dtype=np.int64)
        position[order] = np.arange(order.size)
        inner_vertex = np.full(g.num_arcs, -1, dtype=np.int64)      # arc -> its non-exit vertex
        inner_vertex[inner_arcs] = position[:inner_arcs.size]
        exit_vertex = np.full(g.num_arcs, -1, dtype=np.int64)       # arc -> its exit vertex
        exit_vertex[exit_arc] = position[inner_arcs.size:]
        if level == 0:
            src_arc, dst_arc, weight = self.turns.from_arc, self.turns.to_arc, \
                np.arange(self.turns.num_turns, dtype=np.int64)
        else:
            src_arc, dst_arc, weight = self._subcell_edges(level - 1)
        same = cells[g.head[dst_arc]] == cells[g.head[src_arc]]
        src = inner_vertex[src_arc]
        dst = np.where(same, inner_vertex[dst_arc], exit_vertex[dst_arc])
        by_src = np.argsort(src, kind="stable")
        edge_first = csr_offsets(src, vertex_arc.size, np.int64)
        return (vertex_first, vertex_arc, edge_first, dst[by_src].astype(np.int32),
                weight[by_src])

    def _subcell_edges(self, sub: int):
        """(entry arc, exit arc, index in S_sub) of every shortcut of level ``sub``."""
        t = self.levels[sub]
        ne = np.diff(t.entry_first).astype(np.int64)
        nx = np.diff(t.exit_first).astype(np.int64)
        size = ne * nx
        cell = np.repeat(np.arange(t.num_cells, dtype=np.int64), size)
        k = np.arange(int(size.sum()), dtype=np.int64) - np.repeat(t.clique_first[:-1], size)
        r, j = k // nx[cell], k % nx[cell]
        src = t.entry_arc[t.entry_first[cell] + r]
        dst = t.exit_arc[t.exit_first[cell] + j]
        return src, dst, np.arange(size.sum(), dtype=np.int64)


def matrix_bytes(graph, partition) -> tuple[int, int]:
    """(bytes, shortcuts): the peak of building the overlay of ``partition`` and of one
    customization on it, estimated from the cells' entries and exits in O(levels x arcs)
    (nothing of the matrices' size allocated). A level above 0 has one local edge per
    shortcut of the level below; they stay, and building the largest level takes
    EDGE_BUILD_BYTES each for a while; customizing adds every S_l and the unpacking
    trees (entries x other local vertices, engine.crp.customization.trees). Within 15 %
    of the measured peak resident memory on random partitions of Heidelberg (0.4-1.5 GB)."""
    tail, head = graph.tail, graph.head
    edges = largest = shortcuts = tree_slots = widest = 0
    below, below_crossing = 0, None
    for level, cells in enumerate(np.asarray(partition.cell_of)):
        num_cells = int(cells.max()) + 1 if cells.size else 0
        crossing = cells[tail] != cells[head]
        ne = np.bincount(cells[head[crossing]], minlength=num_cells).astype(np.int64)
        nx = np.bincount(cells[tail[crossing]], minlength=num_cells).astype(np.int64)
        if level > 0:
            nv = np.bincount(cells[head[below_crossing]], minlength=num_cells) + nx
            tree_slots += int((ne * (nv - ne)).sum())
            widest = max(widest, int(nv.max(initial=0)))
            edges, largest = edges + below, max(largest, below)
        below, below_crossing = int((ne * nx).sum()), crossing
        shortcuts += below
    metric = SHORTCUT_BYTES * shortcuts + tree_slots * (2 if widest < 2**15 else 4)
    return EDGE_BYTES * edges + max(EDGE_BUILD_BYTES * largest, metric), shortcuts


def _grouped(arcs: np.ndarray, cell: np.ndarray, num_cells: int, arc_to_boundary: np.ndarray,
             num_boundary: int):
    """Arcs sorted by (cell, arc id), the cells' offsets, and each arc's position in its
    cell indexed by level-0 boundary index (-1 for the others)."""
    order = np.lexsort((arcs, cell))
    sorted_arcs = arcs[order].astype(np.int32)
    first = csr_offsets(cell[order], num_cells)
    pos = np.full(num_boundary, -1, dtype=np.int32)
    rank = np.arange(order.size, dtype=np.int64) - first[cell[order]]
    pos[arc_to_boundary[sorted_arcs]] = rank
    return sorted_arcs, first, pos
