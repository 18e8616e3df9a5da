"""UPDATE: record level l in the hierarchy.

The contracted nodes get their level; their arcs in G_l become the hierarchy's
upward arcs (w -> higher v) and downward arcs (higher u -> w); new shortcuts get
hierarchy-arc ids whose two children say how they unpack, so a path (and the
midpoint of any shortcut) can be recovered.
"""
from __future__ import annotations

from engine.ch.overlay import Overlay
from engine.ch.shortcut import Shortcuts


class ArcTable:
    """Every arc the hierarchy knows: original arcs first, then shortcuts in order."""

    def __init__(self, xp, tail, head, weight):
        m = tail.size
        self.xp = xp
        self.parts = {"tail": [tail], "head": [head], "weight": [weight],
                      "child1": [xp.full(m, -1, dtype=xp.int64)],
                      "child2": [xp.full(m, -1, dtype=xp.int64)]}
        self.size = int(m)

    def add_shortcuts(self, g: Overlay, sc: Shortcuts):
        xp = self.xp
        k = int(sc.tail.size)
        ids = xp.arange(self.size, self.size + k, dtype=xp.int64)
        for name, values in (("tail", sc.tail), ("head", sc.head), ("weight", sc.weight),
                             ("child1", g.harc[sc.in_arc]), ("child2", g.harc[sc.out_arc])):
            self.parts[name].append(values)
        self.size += k
        return ids

    def arrays(self):
        xp = self.xp
        return {name: xp.concatenate(chunks) for name, chunks in self.parts.items()}


def level_arcs(g: Overlay, contracted):
    """(up_harc, down_head, down_harc): the hierarchy ids of the arcs of G_l that
    leave the contracted nodes, and the heads and ids of those that enter them."""
    xp = g.xp
    up = xp.flatnonzero(contracted[g.tail])
    down = xp.flatnonzero(contracted[g.head])
    return g.harc[up], g.head[down], g.harc[down]
