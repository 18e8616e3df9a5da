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
from engine.crp.partition.overlay_build import edge_counts, fill_edges, vertex_order
from engine.io.limits import check_allocation

EDGE_BYTES = 8          # a local edge of a level above 0: head vertex and weight index (int32)
SHORTCUT_BYTES = 4      # a customization's S_l entry (int32)
INT32_MAX = np.iinfo(np.int32).max


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
    edge_first: np.ndarray      # int32 [V+1] local CSR by source vertex (int64 past 2^31-1 edges)
    edge_to: np.ndarray         # int32 [E] global local-vertex index of the edge's head
    edge_weight: np.ndarray     # int32 [E] index of the edge's cost in the level below (int64
    #                             where the level below has more than 2^31-1 turns or shortcuts)

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
        self.arc_level = np.zeros(graph.num_arcs, dtype=np.int8)    # levels an arc crosses
        for cells in cell_of:                                        # one arc-sized row at a time
            self.arc_level += cells[graph.tail] != cells[graph.head]
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
        local = self._local_graph(level, cells, num_cells, exit_arc)
        return LevelTopology(level, num_cells, entry_first, entry_arc, exit_first, exit_arc,
                             entry_row, exit_col, clique_first, *local)

    def _local_graph(self, level, cells, num_cells, exit_arc):
        """Local vertices (per cell: entries, inner vertices, exits) and edges, in linear
        time (engine.crp.partition.overlay_build); build scratch is arc-sized int32."""
        g, turns = self.graph, self.turns
        if level == 0:
            inner_arcs = np.arange(g.num_arcs, dtype=np.int32)
        else:
            inner_arcs = self.boundary_arc[self.arc_level[self.boundary_arc] > level - 1]
        if inner_arcs.size + exit_arc.size > INT32_MAX:
            raise ValueError(f"level {level} has more than 2^31-1 local vertices")
        vertex_first, inner_pos, exit_pos = vertex_order(
            cells[g.head[inner_arcs]], self.arc_level[inner_arcs] > level,
            cells[g.tail[exit_arc]], num_cells)
        vertex_arc = np.empty(int(vertex_first[-1]), dtype=np.int32)
        vertex_arc[inner_pos], vertex_arc[exit_pos] = inner_arcs, exit_arc
        inner_vertex = np.full(g.num_arcs, -1, dtype=np.int32)    # arc -> its non-exit vertex
        inner_vertex[inner_arcs] = inner_pos
        exit_vertex = np.full(g.num_arcs, -1, dtype=np.int32)     # arc -> its exit vertex
        exit_vertex[exit_arc] = exit_pos
        del inner_arcs, inner_pos, exit_pos
        if level == 0:
            none = np.zeros(0, dtype=np.int32)
            sub = (g.head, cells, self.arc_to_boundary, none, none, np.zeros(0, np.int64))
            sub_exit_arc, num_weights = none, turns.num_turns
        else:
            t = self.levels[level - 1]
            sub = (g.head, self.cell_of[level - 1], self.arc_to_boundary, t.entry_row,
                   t.exit_first, t.clique_first)
            sub_exit_arc, num_weights = t.exit_arc, t.num_shortcuts
        args = (vertex_arc, exit_vertex, level == 0, turns.first_turn, sub)
        degree = edge_counts(*args)
        edge_first = np.zeros(vertex_arc.size + 1, dtype=_index_dtype(int(degree.sum())))
        np.cumsum(degree, out=edge_first[1:])
        del degree
        edge_to = np.empty(int(edge_first[-1]), dtype=np.int32)
        edge_weight = np.empty(edge_to.size, dtype=_index_dtype(num_weights))
        fill_edges(vertex_arc, exit_vertex, inner_vertex, edge_first, level == 0,
                   turns.first_turn, turns.to_arc, sub, sub_exit_arc, cells, edge_to, edge_weight)
        return vertex_first, vertex_arc, edge_first, edge_to, edge_weight


def _index_dtype(count: int):
    """int32 for indices below ``count`` where they fit, else int64."""
    return np.int32 if count <= INT32_MAX else np.int64


def matrix_bytes(graph, partition) -> tuple[int, int]:
    """(bytes, shortcuts): the peak of building the overlay of ``partition`` and of one
    customization on it, estimated from the cells' entries and exits in O(levels x arcs)
    (nothing of the matrices' size allocated). A level above 0 has one local edge per
    shortcut of the level below, EDGE_BYTES each, built in place (no per-edge scratch:
    engine.crp.partition.overlay_build); customizing adds every S_l and the unpacking
    trees (entries x other local vertices, engine.crp.customization.trees)."""
    tail, head = graph.tail, graph.head
    edges = shortcuts = tree_slots = widest = 0
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
            edges += below
        below, below_crossing = int((ne * nx).sum()), crossing
        shortcuts += below
    metric = SHORTCUT_BYTES * shortcuts + tree_slots * (2 if widest < 2**15 else 4)
    return EDGE_BYTES * edges + metric, shortcuts


def _grouped(arcs: np.ndarray, cell: np.ndarray, num_cells: int, arc_to_boundary: np.ndarray,
             num_boundary: int):
    """Arcs (ascending) sorted by (cell, arc id), the cells' offsets, and each arc's
    position in its cell indexed by level-0 boundary index (-1 for the others)."""
    order = np.argsort(cell, kind="stable")          # arcs come ascending: ties keep arc order
    sorted_arcs = arcs[order].astype(np.int32)
    first = csr_offsets(cell[order], num_cells)
    pos = np.full(num_boundary, -1, dtype=np.int32)
    rank = np.arange(order.size, dtype=np.int64) - first[cell[order]]
    pos[arc_to_boundary[sorted_arcs]] = rank
    return sorted_arcs, first, pos
