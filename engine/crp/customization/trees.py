"""Unpacking hints (the query's path unpacking, engine.crp.query.unpack): for every
cell of a level l >= 1 and every entry r, the shortest-path tree of the cell's local
graph from r, as the predecessor of each non-entry local vertex (an inner vertex or
an exit: entries have no edges into them). The CPU twin's Dijkstra
(engine.crp.customization.cpu) records it as it costs the cell, so a level-l
shortcut r -> x unpacks into its level-(l-1) shortcuts by walking predecessors from
x back to r instead of searching the cell again.

Layout (metric-independent, here): one flat array over all levels, level 0 empty
(its microinstructions keep no tree; its cells are small and searched at unpacking).
Cell c of level l holds ``entries x (vertices - entries)`` values from
``first[l][c]``, entry r's row at ``r * (vertices - entries)``; a value is the
predecessor's local index within c (int16 while every cell has < 32768 vertices).
Metrics without trees (the GPU customizer's) unpack by search, exactly as before.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TreeLayout:
    first: list            # per level: int64 [C+1] offsets in the flat array (level 0: zeros)
    size: int              # values over all levels
    dtype: type            # np.int16 or np.int32

    def empty(self) -> np.ndarray:
        return np.empty(self.size, dtype=self.dtype)


def tree_layout(overlay) -> TreeLayout:
    """Where each cell's trees lie in the flat array of every level >= 1."""
    first, total, widest = [], 0, 0
    for topo in overlay.levels:
        ne = np.diff(topo.entry_first).astype(np.int64)
        nv = np.diff(topo.vertex_first).astype(np.int64)
        offsets = np.zeros(topo.num_cells + 1, dtype=np.int64)
        if topo.level > 0:
            np.cumsum(ne * (nv - ne), out=offsets[1:])
            widest = max(widest, int(nv.max()) if nv.size else 0)
        offsets += total
        total = int(offsets[-1])
        first.append(offsets)
    return TreeLayout(first, total, np.int16 if widest < 2**15 else np.int32)


__all__ = ["TreeLayout", "tree_layout"]
