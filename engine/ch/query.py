"""CH point-to-point query: bidirectional upward search with stall-on-demand on a
Hierarchy, shortcuts unpacked to original arcs, one Numba call per query.

CU-CH stops contracting at a core of ~K nodes and keeps its all-pairs matrix. Both
searches stop at core nodes and collect those they reach; the query joins them
through the matrix (on NY this beat a CH over the core built in ``__init__``).

The searches take nodes level by level rather than by distance (every hierarchy arc
goes up a level, so a label is final once the levels below are done): no priority
queue, each node settled once (engine/ch/query_search.py says why stalling and
pruning stay exact). A query is bound by cache misses (NY: ~210 nodes reached, ~85
core nodes, ~400 original arcs unpacked), so the layout is about lines: nodes ranked
by level, a rank's labels, parents and arc ranges in one 32-byte row (int32 when
every upward distance fits), its arcs prefetched when it is first reached; shortcuts
are unpacked a round of children at a time so that their misses overlap.
``__init__`` is a few Numba passes over the hierarchy's arrays, streams and scatters
by arc id (engine/ch/query_build.py); the core's predecessors are read in place, and
the core's arcs (to unpack core paths) are listed on the first route through it.
This code assumes nothing of road networks: any hierarchy ``contract`` builds (a turn
graph's included) is routed the same way.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from engine.ch import query_build
from engine.ch.query_build import DamagedHierarchy
from engine.ch.query_search import INF, NEED_CORE_ARCS, chain, join, search, unpack
from engine.core.paths import Path, check_node, unreachable

TREE = 1 << 12           # unpacking scratch: tree nodes before it grows for one query
_NONE, _NONE2 = np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int64)  # no core arcs yet


@numba.njit(cache=True)
def _route(source, target, rank_of, levels, level_of, level_first, adj, up, down, lab, inf,
           bucket, count, touched, state, core_dist, core_inf, core_pred, core_order, core_first,
           core_arcs, scratch, path, m, kids, head, tree):
    """One call per query: search, core join, chain of hierarchy arcs, unpacking.
    (distance, arcs, nodes); distance INF if unreachable, else DAMAGED or
    NEED_CORE_ARCS (see chain)."""
    s, t = rank_of[source], rank_of[target]
    best, meet = search(s, t, levels, level_of, level_first, adj, lab, inf, bucket, count,
                        touched, state)
    best, f, b = join(best, meet, levels, level_first, lab, bucket, count, core_dist, core_inf,
                      scratch)
    if best == INF:
        return best, np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    n_chain = chain(s, t, f, b, adj, up, down, lab, core_dist, core_pred, core_order, core_first,
                    core_arcs, path)
    if n_chain < 0:
        return np.int64(n_chain), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    arcs, nodes = unpack(source, path, n_chain, m, kids, head, tree)
    return best, arcs, nodes


class ChQuery:
    """Exact point-to-point routes on an attached Hierarchy (Router interface). Owns
    the search graph and the buffers every query reuses (reset through the list of
    touched nodes, never in O(n))."""

    name = "ch"
    label = "CH query"

    def __init__(self, hierarchy) -> None:
        h = hierarchy
        if h.graph is None:
            raise ValueError("the hierarchy is not attached to its graph (Hierarchy.attach)")
        started = time.perf_counter()
        self.hierarchy, self.graph, self.metric = h, h.graph, h.metric
        if h.num_original_arcs != h.graph.num_arcs:
            raise DamagedHierarchy("damaged hierarchy: its arc table does not fit its graph")
        a = query_build.build(h)
        n, levels, k = h.num_nodes, h.num_levels, h.core_nodes.size
        self._n, self._labels, self._core_dist, self._level = n, a["lab"], a["core_dist"], a["level"]
        bucket = np.empty((2, n), dtype=np.int32)           # per level: its ranks reached
        count = np.zeros((2, levels + 1), dtype=np.int64)
        touched, state = np.empty(n + 2, dtype=np.int32), np.zeros(1, dtype=np.int64)
        path = np.empty(2 * levels + k + 2, dtype=np.int32)  # hierarchy arcs of one route
        # one list: a query's Python side is a few hundred ns over the Numba call
        self._args = [a["rank_of"], levels, a["level_of"], a["level_first"], a["adj"], a["up"],
                      a["down"], a["lab"], a["inf"], bucket, count, touched, state, a["core_dist"],
                      a["core_inf"], a["core_pred"], a["core_order"], _NONE, _NONE2,
                      np.empty((6, k), np.int64), path, h.num_original_arcs, a["kids"],
                      np.ascontiguousarray(h.graph.head, dtype=np.int32),
                      np.empty((3, TREE), dtype=np.int32)]
        self._core_arcs_at = next(i for i, x in enumerate(self._args) if x is _NONE)
        self.init_ms = (time.perf_counter() - started) * 1000

    def route(self, source: int, target: int) -> Path:
        s, t = int(source), int(target)
        if not (0 <= s < self._n and 0 <= t < self._n):
            check_node(self.graph, s)
            check_node(self.graph, t)
        best, arcs, nodes = _route(s, t, *self._args)
        if best < 0:
            best, arcs, nodes = self._again(s, t, best)
        if best == INF:
            raise unreachable(self.graph, s, t)
        return Path(s, t, self.metric, int(best), nodes, arcs)

    def _again(self, s: int, t: int, status: int):
        """The first route through the core lists the core's arcs (a scan of every
        hierarchy arc, done once), then runs again."""
        h = self.hierarchy
        if status == NEED_CORE_ARCS:
            first, arcs = query_build.core_arcs(h.arc_tail, h.arc_head, h.arc_weight,
                                                self._level, h.num_levels, self._args[0],
                                                self._labels)
            if first.size:
                at = self._core_arcs_at
                self._args[at:at + 2] = first, arcs
                status, arcs, nodes = _route(s, t, *self._args)
                if status >= 0:
                    return status, arcs, nodes
        raise DamagedHierarchy("damaged hierarchy: a core path steps over an arc it does not "
                               "have, or an arc's end is out of range")
