"""UPDATE: record level l in the hierarchy.

The contracted nodes get their level (in contract); the arcs of G_l that touch
them leave the level graph at this level: the ones out of a contracted node become
the hierarchy's upward arcs of level l, the ones into it its downward arcs. New
shortcuts get hierarchy-arc ids whose two children say how they unpack, so a
path (and the midpoint of any shortcut) can be recovered. Only the level at
which each arc leaves is recorded per iteration; the upward and downward lists
are gathered once, at the end (``level_arcs``).
"""
from __future__ import annotations

import numpy as np

from engine.ch.level_graph import LevelGraph, lex_order
from engine.ch.shortcut import Shortcuts


class ArcTable:
    """Every arc the hierarchy knows: original arcs first, then shortcuts in order;
    ``leave[id]`` is the level at which arc ``id`` left the level graphs, or -1 (never
    in one, replaced by a shortcut, or in the core). The original arcs' columns
    stay with the caller; the table keeps their ends, which ``level_arcs`` needs."""

    def __init__(self, backend, tail, head):
        m = int(tail.size)
        self.backend = backend
        self.xp = xp = backend.xp
        self.original_ends = {"tail": tail, "head": head}
        self.shortcuts = {name: [] for name in ("tail", "head", "weight", "child1", "child2")}
        self.num_original = m
        self.size = m
        self.leave = xp.full(2 * m, -1, dtype=xp.int32)   # grown geometrically

    def add_shortcuts(self, g: LevelGraph, sc: Shortcuts):
        xp = self.xp
        k = int(sc.tail.size)
        ids = xp.arange(self.size, self.size + k, dtype=xp.int64)
        for name, values in (("tail", sc.tail), ("head", sc.head), ("weight", sc.weight),
                             ("child1", g.harc[sc.in_arc]), ("child2", g.harc[sc.out_arc])):
            self.shortcuts[name].append(values)
        self.size += k
        if self.size > self.leave.size:
            grown = xp.full(2 * self.size, -1, dtype=xp.int32)
            grown[:self.leave.size] = self.leave
            self.leave = grown
        return ids

    def record_leaving(self, g: LevelGraph, contracted, level: int) -> None:
        """The arcs of G_l with a contracted end leave at ``level`` (one kernel on the GPU)."""
        if self.backend.is_gpu:
            self.backend.launch("ch", "ch_leave", (g.tail, g.head, g.harc, contracted, g.num_arcs,
                                                   np.int32(level), self.leave),
                                threads=g.num_arcs)
            return
        touched = contracted[g.tail] | contracted[g.head]
        self.leave[g.harc[touched]] = level

    def host_arrays(self, originals):
        """Every column as a host int64 array: the original arcs' from ``originals``
        (already on the host) or -1 (children), the shortcuts' copied once."""
        backend, m = self.backend, self.num_original
        out = {}
        for name, chunks in self.shortcuts.items():
            column = backend.host_empty(self.size, np.int64)       # pinned on the GPU
            column[:m] = originals.get(name, -1)
            if self.size > m:
                backend.to_host(self.xp.concatenate(chunks), out=column[m:])
            out[name] = column
        return out

    def level_arcs(self, node_level, levels: int):
        """(up_harc, up_first, down_harc, down_first): arcs that left at level l
        from a node of level l go up, the others (into one) go down. Upward arcs
        are ordered by (level, tail, head), downward ones by (level, head, id) as
        PHAST's sweep wants; ``*_first`` delimit the levels."""
        xp = self.xp
        n = int(node_level.size)
        ids = xp.flatnonzero(self.leave[:self.size] >= 0)
        level = self.leave[ids].astype(xp.int64)
        tail, head = (xp.concatenate([self.original_ends[name], *self.shortcuts[name]])[ids]
                      for name in ("tail", "head"))
        up = node_level[tail] == level
        down = ~up
        # node ids are int32, so (tail, head) packs into one int64 key
        up_order = lex_order(xp, level[up], tail[up] * n + head[up])
        if n * self.size < 2**62:
            down_order = lex_order(xp, level[down], head[down] * self.size + ids[down])
        else:
            down_order = lex_order(xp, level[down], head[down], ids[down])
        out = []
        for mask, order in ((up, up_order), (down, down_order)):
            sorted_level = level[mask][order]
            first = xp.searchsorted(sorted_level, xp.arange(levels + 1))
            out += [ids[mask][order], first]
        return tuple(out)
