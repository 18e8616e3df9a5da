"""The graph the labeling searches on a ParetoHierarchy: up, across the core, down.

Every Pareto-optimal path has a copy in the hierarchy that climbs from the source
over arcs to higher levels, crosses the core, and descends to the target (or peaks
below the core). The layered graph makes that shape its only one:

- node v (0 <= v < n) is v while climbing ("up copy"; a core node is just itself);
- node n + v is v while descending ("down copy", contracted nodes only);
- arcs: up copy -> up copy (or core) along an arc to a higher level; core -> core;
  core or up copy -> down copy, and down copy -> down copy, along an arc to a lower
  level; and a zero arc from each up copy to its down copy (a path that peaks there).

Any path of it unpacks to a path of the graph with the same length and cost, so the
labeling (CPU or GPU, unchanged) stays exact and its answers are a few dozen arcs
deep. Per query, the down copies from which the target cannot be reached get INF
bounds (``down_set``), so labels never wander down a dead end.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.csp.hierarchy.contract import csr
from engine.csp.hierarchy.build import ParetoHierarchy
from engine.core.arrays import grow

INF = np.iinfo(np.int64).max


@numba.njit(cache=True)
def _down_set(target, down_first, down_rows, down_tail, core, seen):
    """The contracted nodes whose down copy reaches ``target``'s (``seen`` all False
    on entry, set for them); returns them."""
    out = np.empty(16, np.int64)
    out[0], count, done = target, 1, 0
    seen[target] = True
    while done < count:
        x = out[done]
        done += 1
        for i in range(down_first[x], down_first[x + 1]):
            y = down_tail[down_rows[i]]
            if core[y] or seen[y]:
                continue
            seen[y] = True
            if count == out.size:
                out = grow(out, count + 1)
            out[count] = y
            count += 1
    return out[:count]


@dataclass(eq=False)
class LayeredGraph:
    hierarchy: ParetoHierarchy
    num_nodes: int              # 2n
    first_out: np.ndarray       # int32 [2n+1]
    head: np.ndarray            # int32 [k]
    length: np.ndarray          # int64 [k]
    cost: np.ndarray            # int64 [k]
    harc: np.ndarray            # int64 [k] the hierarchy arc of each arc; -1 for the zero arcs
    down_first: np.ndarray      # the descending arcs into each contracted node ...
    down_rows: np.ndarray
    down_tail: np.ndarray       # ... and their tails

    @property
    def num_arcs(self) -> int:
        return int(self.head.size)

    @classmethod
    def of(cls, h: ParetoHierarchy) -> "LayeredGraph":
        n, core = h.num_nodes, h.core
        a = h.arcs.astype(np.int64)
        t, w = h.arc_tail[a].astype(np.int64), h.arc_head[a].astype(np.int64)
        across = core[t] & core[w]
        up = ~across & (h.level[t] < h.level[w])
        down = ~across & ~up
        down_from_core, down_from_below = down & core[t], down & ~core[t]
        lower = np.flatnonzero(~core)
        parts = [(t[across], w[across], a[across]),
                 (t[up], w[up], a[up]),
                 (t[down_from_core], n + w[down_from_core], a[down_from_core]),
                 (t[down_from_below], n + w[down_from_below], a[down_from_below]),
                 (n + t[down_from_below], n + w[down_from_below], a[down_from_below]),
                 (lower, n + lower, np.full(lower.size, -1, np.int64))]
        tails = np.concatenate([p[0] for p in parts])
        first, order = csr(tails, 2 * n)
        heads = np.concatenate([p[1] for p in parts])[order]
        harc = np.concatenate([p[2] for p in parts])[order]
        real = np.maximum(harc, 0)
        zero = harc < 0
        length = np.where(zero, 0, h.arc_length[real])
        cost = np.where(zero, 0, h.arc_cost[real])
        down_first, down_rows = csr(w[down], n)
        return cls(h, 2 * n, first.astype(np.int32), heads.astype(np.int32), length, cost, harc,
                   down_first, down_rows, t[down])

    def target(self, t: int) -> int:
        """The node the labeling ends at for the graph's node t."""
        h = self.hierarchy
        return int(t) if h.level[t] == h.num_levels else h.num_nodes + int(t)

    def original(self, x):
        """The graph's node of layered node(s) x."""
        return x % self.hierarchy.num_nodes

    def down_set(self, t: int) -> np.ndarray:
        """The contracted nodes whose down copies can reach the target t (none when t
        is in the core: labels reach it across the core)."""
        core = self.hierarchy.core
        if core[t]:
            return np.zeros(0, np.int64)
        return _down_set(int(t), self.down_first, self.down_rows, self.down_tail, core,
                         np.zeros(core.size, np.bool_))

    def node_values(self, values: np.ndarray, down: np.ndarray) -> np.ndarray:
        """A per-node array of the graph (bounds, completions) for the layered nodes:
        the up copies get the node's value, the down copies in ``down`` too, the
        others INF (the target is out of their reach; csp_lift on the GPU)."""
        lower = np.full(values.size, INF, np.int64)
        lower[down] = values[down]
        return np.concatenate([values, lower])

    def unpack(self, arcs) -> np.ndarray:
        """The graph's arcs along layered arcs ``arcs``."""
        harcs = self.harc[np.asarray(arcs, np.int64)]
        return self.hierarchy.unpack(harcs[harcs >= 0])
