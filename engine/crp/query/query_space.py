"""The query's own numbering of arcs: boundary arcs of the highest level first, then
of each lower level, then the rest; within a group by the cells around the head.

Arcs sort by level first, so an arc crosses level l exactly when its query id is
below ``crossing[l]``. A query settles few arcs but relaxes whole shortcut rows; in this numbering the top
levels' arcs, and a cell's exits, sit close together, so the search's state arrays
stay in cache. The turn CSR and the cells' entry and exit lists are renumbered
alike; a boundary arc's index among the boundary arcs is its query id.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.arc_order import counting_order, gather


@dataclass(frozen=True, eq=False)
class QuerySpace:
    q_of_arc: np.ndarray      # int32 [m]
    arc_of_q: np.ndarray      # int32 [m]
    turn_order: np.ndarray    # int32 [T] turn ids in the query's turn order
    first_turn: np.ndarray    # int32 [m+1] by from query id
    to_q: np.ndarray          # int32 [T]
    from_q: np.ndarray        # int32 [T]
    first_turn_in: np.ndarray  # int32 [m+1]
    turn_in: np.ndarray       # int32 [T] (query turn order) sorted by to_q
    head: np.ndarray          # int32 [m] head node of each query id
    tail: np.ndarray
    arc_level: np.ndarray     # int8 [m]
    a2b: np.ndarray           # int32 [m]: the query id itself for boundary arcs, else -1
    cell_base: np.ndarray
    entry_first: np.ndarray
    entry_q: np.ndarray       # int32 query ids of the cells' entries
    exit_first: np.ndarray
    exit_q: np.ndarray
    clique_first: np.ndarray
    entry_row: np.ndarray     # int32 [L, B0] by query id
    exit_col: np.ndarray
    head_rec: np.ndarray      # int32 [B0, L, 2] (cell, its row's first shortcut) at the head
    tail_rec: np.ndarray      # int32 [B0, L, 2] (cell, its column's first shortcut) at the tail
    crossing: np.ndarray      # int64 [L]: query ids below crossing[l] cross level l


def query_space(overlay, flat) -> QuerySpace:
    """The query's numbering of ``overlay`` (metric-independent: built once per overlay
    by whoever keeps it, the Customizer or the CrpQuery; a new metric only permutes
    turn weights)."""
    g, turns = overlay.graph, overlay.turns
    m = g.num_arcs
    arc_of_q = _arc_order(overlay).astype(np.int32)
    q_of_arc = np.empty(m, dtype=np.int32)
    q_of_arc[arc_of_q] = np.arange(m, dtype=np.int32)
    from_q = gather(q_of_arc, turns.from_arc)              # per turn: gathers on all cores
    turn_order, first_turn = counting_order(from_q, m)
    from_q = gather(from_q, turn_order)
    to_q = gather(q_of_arc, gather(turns.to_arc, turn_order))
    turn_in, first_turn_in = counting_order(to_q, m)
    b0 = overlay.boundary_arc.size
    arc_level = overlay.arc_level[arc_of_q]
    a2b = np.where(arc_level > 0, np.arange(m, dtype=np.int32), -1).astype(np.int32)
    old_b = overlay.arc_to_boundary[arc_of_q[:b0]]      # boundary index of query id k < b0
    entry_row = np.ascontiguousarray(flat.entry_row[:, old_b])
    exit_col = np.ascontiguousarray(flat.exit_col[:, old_b])
    exit_q = q_of_arc[flat.exit_arc]
    return QuerySpace(
        q_of_arc, arc_of_q, turn_order, first_turn.astype(np.int32), to_q, from_q,
        first_turn_in.astype(np.int32), turn_in,
        g.head[arc_of_q], g.tail[arc_of_q], arc_level, a2b, flat.cell_base,
        flat.entry_first, q_of_arc[flat.entry_arc], flat.exit_first, exit_q,
        flat.clique_first, entry_row, exit_col,
        _records(overlay, flat, g.head[arc_of_q[:b0]], entry_row, True),
        _records(overlay, flat, g.tail[arc_of_q[:b0]], exit_col, False),
        (arc_level[:, None] > np.arange(overlay.num_levels)).sum(axis=0))


def _arc_order(overlay) -> np.ndarray:
    """Arcs by level crossed (highest first), then by the cells around the head from
    the top level down, then by id. Where every level's cells are numbered in the
    order of their parents (a valid partition is: engine.io.partition_file), the
    level-0 cell alone orders the levels above, and one counting sort by (level,
    level-0 cell) does it in linear time (24 M nodes: seconds, not a minute)."""
    g, cells = overlay.graph, overlay.cell_of
    levels = cells.shape[0]
    level_key = (overlay.num_levels - overlay.arc_level.astype(np.int64))
    if levels and _nested(cells):
        num_cells = int(cells[0].max(initial=-1)) + 1
        keys = level_key * num_cells + cells[0, g.head]
        return counting_order(keys, (overlay.num_levels + 1) * num_cells)[0]
    keys = [np.arange(g.num_arcs)] + [cells[l, g.head] for l in range(levels)] + [level_key]
    return np.lexsort(keys)                                  # last key sorts first


def _nested(cells: np.ndarray) -> bool:
    """Whether every level-0 cell lies in one cell of each level above, and those
    parents never decrease along the level-0 cell ids."""
    low = cells[0]
    for l in range(1, cells.shape[0]):
        parent = np.full(int(low.max(initial=-1)) + 1, -1, dtype=np.int64)
        parent[low] = cells[l]
        if np.any(parent < 0) or np.any(np.diff(parent) < 0) or np.any(parent[low] != cells[l]):
            return False
    return True


def _records(overlay, flat, nodes, index, rows):
    """Per boundary arc and level, its cell around ``nodes`` (as an index into the
    flat cell arrays) and where its row (rows) or column starts in the shortcuts;
    one arc's levels share a cache line, and the search reads no node's cells.
    -1 where the arc does not cross that level."""
    levels = overlay.num_levels
    rec = np.full((nodes.size, levels, 2), -1, dtype=np.int64)
    for l in range(levels):
        cb = flat.cell_base[l] + overlay.cell_of[l, nodes]
        nx = flat.exit_first[cb + 1] - flat.exit_first[cb]
        k = index[l]
        ok = k >= 0
        rec[ok, l, 0] = cb[ok]
        rec[ok, l, 1] = flat.clique_first[cb[ok]] + (k[ok] * nx[ok] if rows else k[ok])
    if rec.size and rec.max() >= np.iinfo(np.int32).max:
        raise ValueError("too many shortcuts for int32 offsets")
    return rec.astype(np.int32)
