"""Bidirectional Dijkstra on the graph itself: no preprocessing, exact, one pair.

The forward search runs on the CSR (``first_out``/``head``), the backward search on
the reverse CSR (``graph.backward``); the smaller queue top moves next, and the search
stops when top_f + top_b >= the best meeting seen. Parents are arc ids, so parallel
arcs are told apart; zero-cost arcs are fine (improvements are strict, so parent
pointers never form a cycle). All state lives in buffers owned by the router and is
reset through a list of the nodes the previous query touched, never in O(n).
"""
from __future__ import annotations

import numba
import numpy as np

from engine.paths import Path, check_node, unreachable

INF = np.iinfo(np.int64).max


@numba.njit(cache=True, inline="always")
def heap_push(key, node, size, k, v):
    """Push (k, v) on the binary min-heap key/node of ``size`` entries; new size."""
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if key[p] <= k:
            break
        key[i] = key[p]
        node[i] = node[p]
        i = p
    key[i] = k
    node[i] = v
    return size + 1


@numba.njit(cache=True, inline="always")
def heap_pop(key, node, size):
    """Remove the top of a heap of ``size`` > 0 entries; returns the new size."""
    size -= 1
    k, v = key[size], node[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and key[c + 1] < key[c]:
            c += 1
        if key[c] >= k:
            break
        key[i] = key[c]
        node[i] = node[c]
        i = c
    key[i] = k
    node[i] = v
    return size


@numba.njit(cache=True)
def _reset(dist, parent, touched, state):
    for i in range(state[0]):
        v = touched[i]
        dist[0, v] = INF
        dist[1, v] = INF
        parent[0, v] = -1
        parent[1, v] = -1
    state[0] = 0


@numba.njit(cache=True)
def _search(s, t, first, other, weight, arc_id, dist, parent, hkey, hnode, touched, state):
    """Both searches; first/other/weight/arc_id are [2, ...] stacks of the forward
    (first_out, head, w, arange) and backward (first_in, tail, w[in_arc], in_arc)
    CSR. Returns (best distance, meeting node)."""
    _reset(dist, parent, touched, state)
    n_touched = 0
    dist[0, s] = 0
    dist[1, t] = 0
    touched[0] = s
    touched[1] = t
    n_touched = 2
    size = np.zeros(2, dtype=np.int64)
    size[0] = heap_push(hkey[0], hnode[0], 0, 0, s)
    size[1] = heap_push(hkey[1], hnode[1], 0, 0, t)
    best, meet = INF, -1
    if s == t:
        best, meet = 0, s
    while size[0] > 0 and size[1] > 0 and hkey[0, 0] + hkey[1, 0] < best:
        d = 0 if hkey[0, 0] <= hkey[1, 0] else 1
        k, u = hkey[d, 0], hnode[d, 0]
        size[d] = heap_pop(hkey[d], hnode[d], size[d])
        if k > dist[d, u]:
            continue                      # a stale entry
        for i in range(first[d, u], first[d, u + 1]):
            v = other[d, i]
            nd = k + weight[d, i]
            if nd < dist[d, v]:
                if dist[d, v] == INF and dist[1 - d, v] == INF:
                    touched[n_touched] = v
                    n_touched += 1
                dist[d, v] = nd
                parent[d, v] = arc_id[d, i]
                size[d] = heap_push(hkey[d], hnode[d], size[d], nd, v)
                if dist[1 - d, v] != INF and nd + dist[1 - d, v] < best:
                    best, meet = nd + dist[1 - d, v], v
    state[0] = n_touched
    return best, meet


@numba.njit(cache=True)
def _path_arcs(s, t, meet, tail, head, parent):
    """Arc ids s -> meet (forward parents) then meet -> t (backward parents)."""
    count_f, v = 0, meet
    while v != s:
        v = tail[parent[0, v]]
        count_f += 1
    count_b, v = 0, meet
    while v != t:
        v = head[parent[1, v]]
        count_b += 1
    arcs = np.empty(count_f + count_b, dtype=np.int32)
    v = meet
    for i in range(count_f - 1, -1, -1):
        arcs[i] = parent[0, v]
        v = tail[arcs[i]]
    v = meet
    for i in range(count_f, count_f + count_b):
        arcs[i] = parent[1, v]
        v = head[arcs[i]]
    return arcs


class BidirectionalDijkstra:
    """Exact point-to-point routes on ``graph`` under one metric (Router interface)."""

    name = "bidirectional_dijkstra"
    label = "bidirectional Dijkstra"

    def __init__(self, graph, metric: str | None = None) -> None:
        self.graph = graph
        self.metric = graph.metric_of(metric).name
        w = graph.metric(self.metric).astype(np.int64)
        back = graph.backward
        n, m = graph.num_nodes, graph.num_arcs
        self._first = np.stack([graph.first_out, back.first_in]).astype(np.int64)
        self._other = np.stack([graph.head, back.tail]).astype(np.int32)
        self._weight = np.stack([w, w[back.in_arc]])
        self._arc_id = np.stack([np.arange(m, dtype=np.int32), back.in_arc.astype(np.int32)])
        self._dist = np.full((2, n), INF, dtype=np.int64)
        self._parent = np.full((2, n), -1, dtype=np.int32)
        self._hkey = np.empty((2, m + 1), dtype=np.int64)    # a push per improving arc
        self._hnode = np.empty((2, m + 1), dtype=np.int32)
        self._touched = np.empty(n + 2, dtype=np.int32)
        self._state = np.zeros(1, dtype=np.int64)             # number of touched nodes

    def route(self, source: int, target: int) -> Path:
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        s, t = int(source), int(target)
        best, meet = _search(s, t, self._first, self._other, self._weight, self._arc_id,
                             self._dist, self._parent, self._hkey, self._hnode,
                             self._touched, self._state)
        if meet < 0:
            raise unreachable(g, s, t)
        arcs = _path_arcs(s, t, meet, g.tail, g.head, self._parent)
        nodes = np.empty(arcs.size + 1, dtype=np.int32)
        nodes[0] = s
        nodes[1:] = g.head[arcs]
        return Path(s, t, self.metric, int(best), nodes, arcs)
