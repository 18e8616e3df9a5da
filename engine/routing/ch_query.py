"""CH point-to-point query: bidirectional upward search with stall-on-demand on a
Hierarchy, shortcuts unpacked to original arcs, all in Numba.

CU-CH stops contracting at a core of ~K nodes and keeps its all-pairs matrix. Both
searches stop at core nodes (they relax no arcs out of them) and list the core nodes
they settle, in order of distance; the query joins the two lists through
``core_dist``, each loop cut off by the best distance so far. Measured on NY this
beat contracting the core into a small CH of its own in ``__init__`` (with the matrix
as an exact witness oracle): that CH's search relaxed more arcs (~1,900 a query)
than the rest of the query, while the join reads a few hundred matrix entries;
stalling core nodes through the core's arcs did not pay either.

Query state is flat arrays indexed by rank (level, then a z-order of the map), so
the top of the hierarchy, which every query visits, shares few cache lines.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from engine.paths import Path, check_node, unreachable
from engine.routing.bidirectional import heap_pop, heap_push, labels, start

INF = np.iinfo(np.int64).max
LOW = (1 << 32) - 1       # a parent's CSR position, below the parent's rank
ROW, SPLIT = 4, -2        # the unpacking table: original arcs per row; "expand children"


# ----------------------------------------------------------------- the search
@numba.njit(cache=True)
def _stalled(d, u, k, bounds, arc, dist):
    """Stall-on-demand: some higher x reaches u cheaper than k through an arc x -> u
    (forward) or u -> x (backward), both found in the other direction's lists."""
    e = 1 - d
    for i in range(bounds[u, 2 * e], bounds[u, 2 * e + 1]):
        x = arc[e, i, 0]
        if dist[x, d] != INF and dist[x, d] + arc[e, i, 1] < k:
            return True
    return False


@numba.njit(cache=True)
def _search(s, t, first_core, bounds, arc, dist, parent, hkey, hnode, touched, state,
            settled_core, n_core):
    """Both upward searches; each stops once its queue top reaches the best meeting.
    Core nodes (ranks >= first_core) are settled but not expanded: they go to
    settled_core[d], n_core[d] of them. Returns (best distance, meeting rank)."""
    size = np.zeros(2, dtype=np.int64)
    n_touched = start(s, t, dist, hkey, hnode, touched, state, size)
    n_core[:] = 0
    best, meet = INF, -1
    while True:
        live0 = size[0] > 0 and hkey[0, 0] < best
        live1 = size[1] > 0 and hkey[1, 0] < best
        if not (live0 or live1):
            break
        d = 0 if live0 and (not live1 or hkey[0, 0] <= hkey[1, 0]) else 1
        k, u = hkey[d, 0], hnode[d, 0]
        size[d] = heap_pop(hkey[d], hnode[d], size[d])
        if k > dist[u, d] or _stalled(d, u, k, bounds, arc, dist):
            continue
        if dist[u, 1 - d] != INF and k + dist[u, 1 - d] < best:
            best, meet = k + dist[u, 1 - d], u
        if u >= first_core:
            settled_core[d, n_core[d]] = u
            n_core[d] += 1
            continue
        for i in range(bounds[u, 2 * d], bounds[u, 2 * d + 1]):
            v = arc[d, i, 0]
            nd = k + arc[d, i, 1]
            if nd < dist[v, d]:
                if dist[v, d] == INF and dist[v, 1 - d] == INF:
                    touched[n_touched] = v
                    n_touched += 1
                dist[v, d] = nd
                parent[v, d] = (np.int64(u) << 32) | i
                size[d] = heap_push(hkey[d], hnode[d], size[d], nd, v)
    state[0] = n_touched
    return best, meet


@numba.njit(cache=True)
def _join(best, meet, first_core, dist, settled_core, n_core, core_dist):
    """The best s -> f -> b -> t through the core matrix, f and b settled core nodes.
    Both lists are sorted by distance, so each loop stops at the bound
    d(s, f) + d(b, t) >= best. Returns (best, f, b); f = b = meet if nothing better."""
    best_f, best_b = meet, meet
    if n_core[1] == 0:
        return best, best_f, best_b
    least_b = dist[settled_core[1, 0], 1]
    for i in range(n_core[0]):
        f = settled_core[0, i]
        if dist[f, 0] + least_b >= best:
            break
        row = core_dist[f - first_core]
        for b in settled_core[1, :n_core[1]]:
            bound = dist[f, 0] + dist[b, 1]
            if bound >= best:
                break
            if row[b - first_core] != INF and bound + row[b - first_core] < best:
                best, best_f, best_b = bound + row[b - first_core], f, b
    return best, best_f, best_b


# ------------------------------------------------------------------- the path
@numba.njit(cache=True)
def _chain(s, t, f, b, first_core, parent, harc, core_pred, core_arc):
    """Hierarchy arcs s -> f (forward parents), f -> b (core predecessors), b -> t
    (backward parents), in path order. A parent is (rank << 32) | CSR position."""
    count, v = 0, f
    while v != s:
        v, count = parent[v, 0] >> 32, count + 1
    n_up, i, j = count, f - first_core, b - first_core
    while j != i:
        j, count = core_pred[i, j], count + 1
    n_core, v = count, b
    while v != t:
        v, count = parent[v, 1] >> 32, count + 1
    chain = np.empty(count, dtype=np.int64)
    v = f
    for x in range(n_up - 1, -1, -1):
        chain[x] = harc[0, parent[v, 0] & LOW]
        v = parent[v, 0] >> 32
    j = b - first_core
    for x in range(n_core - 1, n_up - 1, -1):
        chain[x] = core_arc[core_pred[i, j], j]
        j = core_pred[i, j]
    v = b
    for x in range(n_core, count):
        chain[x] = harc[1, parent[v, 1] & LOW]
        v = parent[v, 1] >> 32
    return chain


@numba.njit(cache=True)
def _unpack(source, chain, rows, ulen, head):
    """Original arcs and nodes of a chain of hierarchy arcs from ``source``; see
    _unpack_rows for the table."""
    total = 0
    for a in chain:
        total += ulen[a]
    arcs = np.empty(total, dtype=np.int32)
    stack = np.empty(total + 1, dtype=np.int64)
    n_arcs = 0
    for a in chain:
        stack[0], top = a, 1
        while top:
            top -= 1
            x = stack[top]
            if rows[x, 2] == SPLIT:
                stack[top], stack[top + 1] = rows[x, 1], rows[x, 0]
                top += 2
            else:
                for j in range(ROW):
                    if rows[x, j] < 0:
                        break
                    arcs[n_arcs] = rows[x, j]
                    n_arcs += 1
    nodes = np.empty(total + 1, dtype=np.int32)
    nodes[0] = source
    for i in range(total):
        nodes[i + 1] = head[arcs[i]]
    return arcs, nodes


@numba.njit(cache=True)
def _route(source, s, t, first_core, bounds, arc, dist, parent, hkey, hnode, touched,
           state, settled_core, n_core, core_dist, harc, core_pred, core_arc, rows, ulen,
           head):
    best, meet = _search(s, t, first_core, bounds, arc, dist, parent, hkey, hnode,
                         touched, state, settled_core, n_core)
    best, f, b = _join(best, meet, first_core, dist, settled_core, n_core, core_dist)
    if best == INF:
        return best, np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    chain = _chain(s, t, f, b, first_core, parent, harc, core_pred, core_arc)
    arcs, nodes = _unpack(source, chain, rows, ulen, head)
    return best, arcs, nodes


# ------------------------------------------------------------ preprocessing
@numba.njit(cache=True)
def _core_arcs(ct, ch, w, ids, k):
    """The hierarchy arc id of the core's cheapest arc per pair [k, k]: a core path of
    core_pred steps over exactly these arcs."""
    W = np.full((k, k), INF, dtype=np.int64)
    A = np.full((k, k), -1, dtype=np.int32)
    for i in range(ct.size):
        a, b = ct[i], ch[i]
        if a != b and w[i] < W[a, b]:
            W[a, b] = w[i]
            A[a, b] = ids[i]
    return A


@numba.njit(cache=True)
def _csr(key, n):
    """(first [n+1], permutation) grouping entries by ``key`` (stable counting sort)."""
    first = np.zeros(n + 1, dtype=np.int64)
    for x in key:
        first[x + 1] += 1
    for i in range(n):
        first[i + 1] += first[i]
    fill = first[:-1].copy()
    perm = np.empty(key.size, dtype=np.int64)
    for i in range(key.size):
        perm[fill[key[i]]] = i
        fill[key[i]] += 1
    return first, perm


@numba.njit(cache=True)
def _unpack_rows(child1, child2):
    """The unpacking table: a row per hierarchy arc lists its original arcs when there
    are at most ROW of them (-1 after), else holds (child1, child2, SPLIT, -1). Each
    row is 16 bytes, so a path costs about a cache line per ROW arcs, not two per arc.
    Also the number of original arcs of each (children always have smaller ids)."""
    rows = np.full((child1.size, ROW), -1, dtype=np.int32)
    ulen = np.empty(child1.size, dtype=np.int64)
    for a in range(child1.size):
        c1, c2 = child1[a], child2[a]
        if c1 < 0:
            ulen[a] = 1
            rows[a, 0] = a
            continue
        ulen[a] = ulen[c1] + ulen[c2]
        if ulen[a] > ROW:
            rows[a, 0], rows[a, 1], rows[a, 2] = c1, c2, SPLIT
            continue
        for j in range(ulen[c1]):
            rows[a, j] = rows[c1, j]
        for j in range(ulen[c2]):
            rows[a, ulen[c1] + j] = rows[c2, j]
    return rows, ulen


def _check(h) -> None:
    """Ranges of every index the Numba query follows (principle 10)."""
    n, H, k = h.num_nodes, h.arc_tail.size, h.core_nodes.size
    ids = np.arange(H)
    shortcut = h.arc_child1 >= 0
    if (h.arc_tail.min(initial=0) < 0 or h.arc_tail.max(initial=0) >= n or
            h.arc_head.min(initial=0) < 0 or h.arc_head.max(initial=0) >= n or
            np.any((h.arc_child1 >= ids) | (h.arc_child2 >= ids) | (h.arc_child1 < -1)) or
            np.any(shortcut != (h.arc_child2 >= 0)) or np.any(shortcut[:h.num_original_arcs]) or
            np.any(~shortcut[h.num_original_arcs:]) or np.any(h.arc_weight < 0)):
        raise ValueError("damaged hierarchy: an arc or shortcut child is out of range")
    for harcs in (h.up_harc, h.down_harc):
        if harcs.size and (harcs.min() < 0 or harcs.max() >= H):
            raise ValueError("damaged hierarchy: an up/down arc id is out of range")
    core = h.core_nodes
    if core.size and (core.min() < 0 or core.max() >= n or np.unique(core).size != core.size):
        raise ValueError("damaged hierarchy: core node ids out of range or repeated")
    if h.core_dist.shape != (k, k) or h.core_pred.shape != (k, k) or \
            (k and (h.core_pred.min() < -1 or h.core_pred.max() >= k)):
        raise ValueError("damaged hierarchy: the core matrices do not fit the core")
    if np.count_nonzero(h.node_level == h.num_levels) != k or \
            (k and np.any(h.node_level[core] != h.num_levels)):
        raise ValueError("damaged hierarchy: the core is not exactly the top level")


def _map_order(graph) -> np.ndarray:
    """A z-order key of each node's place, so that nodes near each other on the map
    sit near each other in memory; node ids when there are no coordinates."""
    if graph.xy is None:
        return np.arange(graph.num_nodes, dtype=np.int64)
    xy = graph.xy - graph.xy.min(axis=0)
    cells = (xy / max(float(xy.max()), 1e-9) * 65535).astype(np.uint64)
    key = np.zeros(graph.num_nodes, dtype=np.uint64)
    for bit in range(16):
        for dim in range(2):
            key |= ((cells[:, dim] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(2 * bit + dim)
    return key.astype(np.int64)


def _ranks(h) -> np.ndarray:
    """Rank of every node: by level, then z-order; the core last, in core index order."""
    secondary = _map_order(h.graph)
    secondary[h.core_nodes] = np.arange(h.core_nodes.size)
    order = np.lexsort((secondary, h.node_level))
    rank_of = np.empty(h.num_nodes, dtype=np.int32)
    rank_of[order] = np.arange(h.num_nodes, dtype=np.int32)
    return rank_of


def _lists(h, rank_of):
    """Per direction the arcs (other end's rank, weight, hierarchy arc id) grouped by
    rank: upward arcs forward, reversed downward arcs backward. Core nodes have none:
    the searches never expand them."""
    out = []
    for harcs, key, other in ((h.up_harc, h.arc_tail, h.arc_head),
                              (h.down_harc, h.arc_head, h.arc_tail)):
        first, perm = _csr(rank_of[key[harcs]].astype(np.int64), h.num_nodes)
        out.append((first, rank_of[other[harcs]][perm], h.arc_weight[harcs][perm], harcs[perm]))
    return out


class ChQuery:
    """Exact point-to-point routes on an attached Hierarchy (Router interface). Owns
    the search graph by rank, the core matrices, the unpacking table and the buffers
    every query reuses (reset through the list of touched nodes, never in O(n))."""

    name = "ch"
    label = "CH query"

    def __init__(self, hierarchy) -> None:
        h = hierarchy
        if h.graph is None:
            raise ValueError("the hierarchy is not attached to its graph (Hierarchy.attach)")
        started = time.perf_counter()
        _check(h)
        self.hierarchy, self.graph, self.metric = h, h.graph, h.metric
        n, k = h.num_nodes, h.core_nodes.size
        self._first_core = n - k
        self._rank_of = _ranks(h)
        self._core(h)
        self._search_graph(h)
        self._rows, self._ulen = _unpack_rows(h.arc_child1, h.arc_child2)
        self._dist, self._parent = labels(n)
        cap = self._arc.shape[1] + 1                  # a push per improving arc
        self._hkey = np.empty((2, cap), dtype=np.int64)
        self._hnode = np.empty((2, cap), dtype=np.int32)
        self._touched = np.empty(n + 2, dtype=np.int32)
        self._state = np.zeros(1, dtype=np.int64)     # number of touched nodes
        self._settled_core = np.empty((2, max(k, 1)), dtype=np.int32)
        self._n_core = np.zeros(2, dtype=np.int64)
        self.init_ms = (time.perf_counter() - started) * 1000

    def _core(self, h) -> None:
        """The core's matrices, and its cheapest arc per pair (to unpack core paths)."""
        k = h.core_nodes.size
        pos = np.full(h.num_nodes, -1, dtype=np.int64)
        pos[h.core_nodes] = np.arange(k)
        cc = np.flatnonzero((pos[h.arc_tail] >= 0) & (pos[h.arc_head] >= 0))
        ct, ch = pos[h.arc_tail[cc]], pos[h.arc_head[cc]]
        w = h.arc_weight[cc].astype(np.int64)
        self._core_dist = np.ascontiguousarray(h.core_dist, dtype=np.int64)
        self._core_pred = np.ascontiguousarray(h.core_pred, dtype=np.int32)
        if np.any(w < self._core_dist[ct, ch]) or np.any(np.diagonal(self._core_dist) != 0):
            raise ValueError("the hierarchy's core distance matrix does not match its core arcs")
        self._core_arc = _core_arcs(ct, ch, w, cc, k)
        pred = self._core_pred
        if np.any((pred >= 0) & (self._core_arc[np.maximum(pred, 0), np.arange(k)] < 0)):
            raise ValueError("the hierarchy's core predecessors step over arcs it does not have")

    def _search_graph(self, h) -> None:
        fwd, bwd = _lists(h, self._rank_of)
        n = h.num_nodes
        self._bounds = np.empty((n, 4), dtype=np.int32)
        size = max(fwd[1].size, bwd[1].size)
        small = max(fwd[2].max(initial=0), bwd[2].max(initial=0)) < 2**31
        self._arc = np.zeros((2, size, 2), dtype=np.int32 if small else np.int64)
        self._harc = np.zeros((2, size), dtype=np.int32)
        for d, (first, other, weight, ids) in enumerate((fwd, bwd)):
            self._bounds[:, 2 * d], self._bounds[:, 2 * d + 1] = first[:-1], first[1:]
            self._arc[d, :other.size, 0], self._arc[d, :other.size, 1] = other, weight
            self._harc[d, :other.size] = ids

    def route(self, source: int, target: int) -> Path:
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        s, t = int(source), int(target)
        best, arcs, nodes = _route(
            s, self._rank_of[s], self._rank_of[t], self._first_core, self._bounds, self._arc,
            self._dist, self._parent, self._hkey, self._hnode, self._touched, self._state,
            self._settled_core, self._n_core, self._core_dist, self._harc, self._core_pred,
            self._core_arc, self._rows, self._ulen, g.head)
        if best == INF:
            raise unreachable(g, s, t)
        return Path(s, t, self.metric, int(best), nodes, arcs)
