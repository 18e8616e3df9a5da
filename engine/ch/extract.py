"""EXTRACT: G_{l+1} in fresh compact arrays: the arcs between surviving nodes plus
the new shortcuts, one cheapest arc per node pair (rebuilding beats carrying dead
arcs, as the paper found)."""
from __future__ import annotations

from engine.ch.overlay import Overlay, normalized
from engine.ch.shortcut import Shortcuts


def next_overlay(g: Overlay, contracted, sc: Shortcuts, shortcut_ids) -> Overlay:
    xp = g.xp
    keep = ~(contracted[g.tail] | contracted[g.head])
    return normalized(xp, g.n,
                      xp.concatenate([g.tail[keep], sc.tail]),
                      xp.concatenate([g.head[keep], sc.head]),
                      xp.concatenate([g.weight[keep], sc.weight]),
                      xp.concatenate([g.harc[keep], shortcut_ids]))
