"""Bidirectional Dijkstra on the graph itself: no preprocessing, exact, one pair.

The forward search runs on the CSR (``first_out``/``head``), the backward search on
the reverse CSR (``graph.backward``); the smaller queue top moves next, and the search
stops when top_f + top_b >= the best meeting seen. Parents are arc ids, so parallel
arcs are told apart; zero-cost arcs are fine (improvements are strict, so parent
pointers never form a cycle). A node with no way on in a search's direction is never
queued there unless it is that search's goal: no path to the goal can pass it (in a
turn model, engine.model, these are the end nodes forward and the start nodes backward).
A node with exactly one way on is not queued either: its one arc is relaxed at once, as
its pop would (a chain in a turn model: arc -> end -> start of a free crossing). It is
still labelled, so paths and meetings through it are found; a later improvement
relaxes the chain again, so every node popped has its final distance. All state lives
in buffers owned by the router and is reset through a list of the nodes the previous
query touched, never in O(n). The heap (engine.core.heaps) and the 2 MB-page copy
(engine.core.arrays) are shared with every search.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.core.arrays import huge
from engine.core.heaps import pop, push
from engine.core.paths import Path, check_node, unreachable

INF = np.iinfo(np.int64).max


@numba.njit(cache=True, nogil=True)
def start(s, t, dist, inf, hkey, hnode, touched, state, size):
    """Reset the distances (dist[v, :2]) of the nodes the last query touched (state[0]
    of them) to ``inf``, then seed s forward and t backward; returns the number of
    touched nodes."""
    for i in range(state[0]):
        dist[touched[i], 0] = inf
        dist[touched[i], 1] = inf
    dist[s, 0] = 0
    dist[t, 1] = 0
    touched[0], touched[1] = s, t
    size[0] = push(hkey[0], hnode[0], 0, 0, s)
    size[1] = push(hkey[1], hnode[1], 0, 0, t)
    return 2


@numba.njit(cache=True, nogil=True)
def _search(s, t, bounds, arc, dist, parent, hkey, hnode, touched, state):
    """Both searches over ``arc[d]`` (other end, weight, arc id) in the ranges
    ``bounds[u, 2d:2d+2]``: d = 0 the forward CSR, 1 the reverse one. A node's two
    distances and parents share 32 bytes. Returns (best distance, meeting node)."""
    size = np.zeros(2, dtype=np.int64)
    n_touched = start(s, t, dist, INF, hkey, hnode, touched, state, size)
    best, meet = INF, -1
    if s == t:
        best, meet = 0, s
    while size[0] > 0 and size[1] > 0 and hkey[0, 0] + hkey[1, 0] < best:
        d = 0 if hkey[0, 0] <= hkey[1, 0] else 1
        goal = t if d == 0 else s
        k, u, size[d] = pop(hkey[d], hnode[d], size[d])
        if k > dist[u, d]:
            continue                      # a stale entry
        for i in range(bounds[u, 2 * d], bounds[u, 2 * d + 1]):
            v, nd, via = arc[d, i, 0], k + arc[d, i, 1], arc[d, i, 2]
            while nd < dist[v, d]:
                lo, hi = bounds[v, 2 * d], bounds[v, 2 * d + 1]
                if lo == hi and v != goal:
                    break                 # a dead end this way (a turn model's end node)
                if dist[v, d] == INF and dist[v, 1 - d] == INF:
                    touched[n_touched] = v
                    n_touched += 1
                dist[v, d], parent[v, d] = nd, via
                if dist[v, 1 - d] != INF and nd + dist[v, 1 - d] < best:
                    best, meet = nd + dist[v, 1 - d], v
                if hi - lo != 1 or v == goal:
                    size[d] = push(hkey[d], hnode[d], size[d], nd, v)
                    break
                v, nd, via = arc[d, lo, 0], nd + arc[d, lo, 1], arc[d, lo, 2]   # one way on
    state[0] = n_touched
    return best, meet


@numba.njit(cache=True, nogil=True)
def _path_arcs(s, t, meet, tail, head, parent):
    """Arc ids s -> meet (forward parents) then meet -> t (backward parents)."""
    count_f, v = 0, meet
    while v != s:
        v = tail[parent[v, 0]]
        count_f += 1
    count_b, v = 0, meet
    while v != t:
        v = head[parent[v, 1]]
        count_b += 1
    arcs = np.empty(count_f + count_b, dtype=np.int32)
    v = meet
    for i in range(count_f - 1, -1, -1):
        arcs[i] = parent[v, 0]
        v = tail[arcs[i]]
    v = meet
    for i in range(count_f, count_f + count_b):
        arcs[i] = parent[v, 1]
        v = head[arcs[i]]
    return arcs


def labels(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(distances int64 [n, 2] = INF, parents [n, 2] = -1), views of one int64 [n, 4]
    array on a 64-byte boundary, so that a node's four values share a cache line."""
    raw = np.empty(n * 4 + 8, dtype=np.int64)
    skip = (-raw.ctypes.data % 64) // 8
    both = raw[skip:skip + n * 4].reshape(n, 4)
    both[:, :2], both[:, 2:] = INF, -1
    return both[:, :2], both[:, 2:]


class BidirectionalDijkstra:
    """Exact point-to-point routes on ``graph`` under one metric (Router interface)."""

    name = "bidirectional_dijkstra"
    label = "bidirectional Dijkstra"

    def __init__(self, graph, metric: str | None = None) -> None:
        self.graph = graph
        self.metric = graph.metric_of(metric).name
        w = graph.metric(self.metric)
        back = graph.backward
        n, m = graph.num_nodes, graph.num_arcs
        self._bounds = np.empty((n, 4), dtype=np.int32)
        self._bounds[:, 0], self._bounds[:, 1] = graph.first_out[:-1], graph.first_out[1:]
        self._bounds[:, 2], self._bounds[:, 3] = back.first_in[:-1], back.first_in[1:]
        arc = np.empty((2, m, 3), dtype=np.int32)            # other end, weight, arc id
        arc[0, :, 0], arc[0, :, 1], arc[0, :, 2] = graph.head, w, np.arange(m)
        arc[1, :, 0], arc[1, :, 1], arc[1, :, 2] = back.tail, w[back.in_arc], back.in_arc
        self._arc = huge(arc)
        self._dist, self._parent = labels(n)
        self._hkey = np.empty((2, m + 1), dtype=np.int64)    # a push per improving arc
        self._hnode = np.empty((2, m + 1), dtype=np.int32)
        self._touched = np.empty(n + 2, dtype=np.int32)
        self._state = np.zeros(1, dtype=np.int64)             # number of touched nodes

    def route(self, source: int, target: int) -> Path:
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        s, t = int(source), int(target)
        best, meet = _search(s, t, self._bounds, self._arc, self._dist, self._parent,
                             self._hkey, self._hnode, self._touched, self._state)
        if meet < 0:
            raise unreachable(g, s, t)
        arcs = _path_arcs(s, t, meet, g.tail, g.head, self._parent)
        nodes = np.empty(arcs.size + 1, dtype=np.int32)
        nodes[0] = s
        nodes[1:] = g.head[arcs]
        return Path(s, t, self.metric, int(best), nodes, arcs)
