"""CH point-to-point query: bidirectional upward search with stall-on-demand on a
Hierarchy, shortcuts unpacked to original arcs, one Numba call per query.

CU-CH stops contracting at a core of ~K nodes and keeps its all-pairs matrix. Both
searches stop at core nodes and list those they settle, by distance; the query joins
the lists through the matrix, cut off by the best distance so far (on NY this beat a
CH over the core built in ``__init__``, and stalling core nodes by the core's arcs).

A query is bound by cache misses (NY: ~210 nodes reached, ~45 core rows, ~100 table
rows), so the layout is about lines: nodes ranked by level then z-order of the map
(the core too), a node's arcs of both directions in one block whose offsets share
the node's 32-byte label row, blocks prefetched when a node is first reached, int32
where values fit, and the large arrays on 2 MB pages.
"""
from __future__ import annotations

import time

import numba
import numpy as np

from engine.core.arrays import huge, prefetch
from engine.core.heaps import pop, push
from engine.core.paths import Path, check_node, unreachable
from engine.routing.bidirectional import start

INF = np.iinfo(np.int64).max
INF32 = np.iinfo(np.int32).max
ROW = 4                   # entries per row of the unpacking table


# ----------------------------------------------------------------- the search
@numba.njit(cache=True, inline="always")
def _span(lab, u, d):
    """u's arcs of direction d: forward lab[u,4]:lab[u,5], backward lab[u,5]:lab[u,6]
    (relaxation and stall check read one block)."""
    return lab[u, 4 + d], lab[u, 5 + d]


@numba.njit(cache=True)
def _stalled(d, u, k, adj, lab, inf):
    """Stall-on-demand: some higher x reaches u cheaper than k through an arc x -> u
    (forward) or u -> x (backward), both found in the other direction's arcs."""
    lo, hi = _span(lab, u, 1 - d)
    for i in range(lo, hi):
        x = adj[i, 0]
        if lab[x, d] != inf and lab[x, d] + adj[i, 1] < k:
            return True
    return False


@numba.njit(cache=True)
def _search(s, t, first_core, adj, lab, inf, hkey, hnode, touched, state,
            settled_core, n_core):
    """Both upward searches (labels: see __init__); each stops once its queue top reaches
    the best meeting. Core nodes (ranks >= first_core) are settled, not expanded: they
    go to settled_core[d], n_core[d] of them. Returns (best distance, meeting rank)."""
    size = np.zeros(2, dtype=np.int64)
    n_touched = start(s, t, lab, inf, hkey, hnode, touched, state, size)
    n_core[:] = 0
    best, meet = INF, -1
    while True:
        live0 = size[0] > 0 and hkey[0, 0] < best
        live1 = size[1] > 0 and hkey[1, 0] < best
        if not (live0 or live1):
            break
        d = 0 if live0 and (not live1 or hkey[0, 0] <= hkey[1, 0]) else 1
        k, u, size[d] = pop(hkey[d], hnode[d], size[d])
        if k > lab[u, d] or _stalled(d, u, k, adj, lab, inf):
            continue
        if lab[u, 1 - d] != inf and k + lab[u, 1 - d] < best:
            best, meet = k + lab[u, 1 - d], u
        if u >= first_core:
            settled_core[d, n_core[d]] = u
            n_core[d] += 1
            continue
        lo, hi = _span(lab, u, d)
        for i in range(lo, hi):
            v = adj[i, 0]
            nd = k + adj[i, 1]
            if nd < lab[v, d]:
                if lab[v, d] == inf and lab[v, 1 - d] == inf:
                    touched[n_touched] = v
                    n_touched += 1
                    prefetch(adj, lab[v, 4])        # v's block, read when v settles
                    prefetch(adj, lab[v, 4] + 8)
                lab[v, d], lab[v, 2 + d] = nd, u
                size[d] = push(hkey[d], hnode[d], size[d], nd, v)
    state[0] = n_touched
    return best, meet


@numba.njit(cache=True)
def _join(best, meet, first_core, lab, settled_core, n_core, core_dist, core_inf):
    """The best s -> f -> b -> t through the core matrix, f and b settled core nodes;
    each loop stops at d(s, f) + d(b, t) >= best. (best, f, b), f = b = meet if none."""
    best_f, best_b = meet, meet
    if n_core[1] == 0:
        return best, best_f, best_b
    least_b = lab[settled_core[1, 0], 1]
    for i in range(n_core[0]):
        f = settled_core[0, i]
        df = np.int64(lab[f, 0])
        if df + least_b >= best:
            break
        row = core_dist[f - first_core]
        for b in settled_core[1, :n_core[1]]:
            bound = df + lab[b, 1]
            if bound >= best:
                break
            x = row[b - first_core]
            if x != core_inf and bound + x < best:
                best, best_f, best_b = bound + x, f, b
    return best, best_f, best_b


# ------------------------------------------------------------------- the path
@numba.njit(cache=True)
def _arc_to(adj, harc, lab, u, v, d):
    """The hierarchy arc u - v (direction d) whose weight closes the labels' gap."""
    lo, hi = _span(lab, u, d)
    for i in range(lo, hi):
        if adj[i, 0] == v and lab[u, d] + adj[i, 1] == lab[v, d]:
            return harc[i]
    return -1


@numba.njit(cache=True)
def _chain(s, t, f, b, first_core, adj, harc, lab, core_pred, core_arc):
    """Hierarchy arcs s -> f (forward parents), f -> b (core predecessors), b -> t
    (backward parents), in path order."""
    count, v = 0, f
    while v != s:
        v, count = lab[v, 2], count + 1
    n_up, i, j = count, f - first_core, b - first_core
    while j != i:
        j, count = core_pred[i, j], count + 1
    n_core, v = count, b
    while v != t:
        v, count = lab[v, 3], count + 1
    chain = np.empty(count, dtype=np.int64)
    v = f
    for x in range(n_up - 1, -1, -1):
        chain[x] = _arc_to(adj, harc, lab, lab[v, 2], v, 0)
        v = lab[v, 2]
    j = b - first_core
    for x in range(n_core - 1, n_up - 1, -1):
        chain[x] = core_arc[core_pred[i, j], j]
        j = core_pred[i, j]
    v = b
    for x in range(n_core, count):
        chain[x] = _arc_to(adj, harc, lab, lab[v, 3], v, 1)
        v = lab[v, 3]
    return chain


@numba.njit(cache=True)
def _unpack(source, chain, rows, ulen, head):
    """Original arcs and nodes of a chain of hierarchy arcs from ``source``: a
    depth-first walk of _unpack_rows's table in path order (an entry e >= 0 is an
    original arc, e <= -2 the hierarchy arc -e - 2 to expand). A row is prefetched
    when pushed, so the walk waits on fewer misses one after another."""
    total = 0
    for a in chain:
        total += ulen[a]
        prefetch(rows, a)
    arcs = np.empty(total, dtype=np.int32)
    stack = np.empty(total + ROW, dtype=np.int64)    # entries on it cover disjoint arcs
    n_arcs = 0
    for a in chain:
        stack[0], top = -a - 2, 1
        while top:
            top -= 1
            e = stack[top]
            if e >= 0:
                arcs[n_arcs], n_arcs = e, n_arcs + 1
                continue
            x = -e - 2
            for j in range(ROW - 1, -1, -1):            # reversed: popped in path order
                e = rows[x, j]
                if e != -1:
                    stack[top], top = e, top + 1
                    if e < -1:
                        prefetch(rows, -e - 2)
    nodes = np.empty(total + 1, dtype=np.int32)
    nodes[0] = source
    for i in range(total):
        nodes[i + 1] = head[arcs[i]]
    return arcs, nodes


@numba.njit(cache=True)
def _route(source, target, rank_of, first_core, adj, lab, inf, hkey, hnode,
           touched, state, settled_core, n_core, core_dist, core_inf, core_pred,
           core_arc, harc, rows, ulen, head):
    """One call per query: search, core join, chain of hierarchy arcs, unpacking."""
    s, t = rank_of[source], rank_of[target]
    best, meet = _search(s, t, first_core, adj, lab, inf, hkey, hnode, touched, state,
                         settled_core, n_core)
    best, f, b = _join(best, meet, first_core, lab, settled_core, n_core, core_dist,
                       core_inf)
    if best == INF:
        return best, np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    chain = _chain(s, t, f, b, first_core, adj, harc, lab, core_pred, core_arc)
    arcs, nodes = _unpack(source, chain, rows, ulen, head)
    return best, arcs, nodes


# ------------------------------------------------------------ preprocessing
@numba.njit(cache=True)
def _unpack_rows(child1, child2):
    """(table, original arcs per arc). A 16-byte row lists an arc's original arcs
    (e >= 0) if at most ROW, else up to ROW pieces: its children (-x - 2 for arc x
    to expand), each spliced into its own row where it fits; four pieces a row, not
    two, halve the rows a path reads. -1 after the entries."""
    rows = np.full((child1.size, ROW), -1, dtype=np.int32)
    ulen = np.empty(child1.size, dtype=np.int64)
    for a in range(child1.size):
        c1, c2 = child1[a], child2[a]
        if c1 < 0:
            ulen[a], rows[a, 0] = 1, a
            continue
        ulen[a] = ulen[c1] + ulen[c2]
        w1, w2 = _width(rows, c1), _width(rows, c2)
        both = w1 + w2 <= ROW                         # always so when ulen[a] <= ROW
        left = both or w1 < ROW
        n = _put(rows, a, 0, c1, left)
        _put(rows, a, n, c2, both or (not left and w2 < ROW))
    return rows, ulen


@numba.njit(cache=True, inline="always")
def _put(rows, a, n, c, splice):
    """Append to a's row from entry n: c's own entries (splice) or c to expand."""
    if not splice:
        rows[a, n] = -c - 2
        return n + 1
    for j in range(_width(rows, c)):
        rows[a, n + j] = rows[c, j]
    return n + _width(rows, c)


@numba.njit(cache=True, inline="always")
def _width(rows, a):
    n = 0
    while n < ROW and rows[a, n] != -1:
        n += 1
    return n


def _check(h) -> None:
    """Ranges of every index the Numba query follows (principle 10)."""
    n, H, k, core = h.num_nodes, h.arc_tail.size, h.core_nodes.size, h.core_nodes
    ids, shortcut, ends = np.arange(H), h.arc_child1 >= 0, np.concatenate((h.arc_tail, h.arc_head))
    if (ends.min(initial=0) < 0 or ends.max(initial=0) >= n or
            np.any((h.arc_child1 >= ids) | (h.arc_child2 >= ids) | (h.arc_child1 < -1)) or
            np.any(shortcut != (h.arc_child2 >= 0)) or np.any(shortcut[:h.num_original_arcs]) or
            np.any(~shortcut[h.num_original_arcs:]) or np.any(h.arc_weight < 0)):
        raise ValueError("damaged hierarchy: an arc or shortcut child is out of range")
    harcs = np.concatenate((h.up_harc, h.down_harc))
    if harcs.size and (harcs.min() < 0 or harcs.max() >= H):
        raise ValueError("damaged hierarchy: an up/down arc id is out of range")
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
    """Rank of every node: by level, then z-order (the core too, so that the core
    nodes one search settles are near each other in the core matrix's rows)."""
    order = np.lexsort((_map_order(h.graph), h.node_level))
    rank_of = np.empty(h.num_nodes, dtype=np.int32)
    rank_of[order] = np.arange(h.num_nodes, dtype=np.int32)
    return rank_of


def _blocks(h, rank_of):
    """(first [n+1, 2], (other end's rank, weight) [m, 2], hierarchy arc [m]): per rank
    its upward arcs then its reversed downward arcs (none for core nodes)."""
    n = h.num_nodes
    ends = [(rank_of[h.arc_tail[h.up_harc]], rank_of[h.arc_head[h.up_harc]], h.up_harc),
            (rank_of[h.arc_head[h.down_harc]], rank_of[h.arc_tail[h.down_harc]], h.down_harc)]
    count = [np.bincount(owner, minlength=n) for owner, _, _ in ends]
    first = np.zeros((n + 1, 2), dtype=np.int64)
    first[1:, 0] = np.cumsum(count[0] + count[1])
    first[:-1, 1], first[n, 1] = first[:-1, 0] + count[0], first[n, 0]
    small = h.arc_weight.max(initial=0) < 2**31
    adj = np.zeros((int(first[n, 0]), 2), dtype=np.int32 if small else np.int64)
    harc = np.zeros(adj.shape[0], dtype=np.int32)
    for d, (owner, other, ids) in enumerate(ends):
        _fill(first[:-1, d].copy(), owner, other, h.arc_weight[ids], ids, adj, harc)
    return first, adj, harc


@numba.njit(cache=True)
def _fill(at, owner, other, weight, ids, adj, harc):
    """Append each arc to its owner's list, at[owner] onwards (a counting sort)."""
    for i in range(owner.size):
        p = at[owner[i]]
        adj[p, 0], adj[p, 1], harc[p] = other[i], weight[i], ids[i]
        at[owner[i]] = p + 1


class ChQuery:
    """Exact point-to-point routes on an attached Hierarchy (Router interface). Owns
    the search graph, core matrices, unpacking table and the buffers every query
    reuses (reset through the list of touched nodes, never in O(n))."""

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
        self._n, self._rank_of = n, _ranks(h)
        first, adj, harc = _blocks(h, self._rank_of)
        rows, ulen = _unpack_rows(h.arc_child1, h.arc_child2)
        # per node (distance forward, backward, parent rank forward, backward, arc block
        # offsets): 32 bytes when int32 holds every upward distance (<= levels arcs)
        small = (h.num_levels + 1) * int(adj[:, 1].max(initial=0)) < INF32
        lab = huge(np.zeros((n, 8), dtype=np.int32 if small else np.int64))
        inf = lab.dtype.type(INF32 if small else INF)
        lab[:, :2], lab[:, 2:4] = inf, -1
        lab[:, 4], lab[:, 5], lab[:, 6] = first[:-1, 0], first[:-1, 1], first[1:, 0]
        cap = adj.shape[0] + 1                            # a push per improving arc
        heap = np.empty((2, cap), dtype=np.int64), np.empty((2, cap), dtype=np.int32)
        touched = np.empty(n + 2, dtype=np.int32), np.zeros(1, dtype=np.int64)  # and how many
        settled = np.empty((2, max(k, 1)), dtype=np.int32), np.zeros(2, dtype=np.int64)
        # one tuple: a query's Python side is a few hundred ns over the Numba call
        self._args = (self._rank_of, n - k, huge(adj), lab, inf, *heap, *touched, *settled,
                      *self._core(h, n - k), huge(harc), huge(rows), huge(ulen),
                      huge(h.graph.head))
        self.init_ms = (time.perf_counter() - started) * 1000

    def _core(self, h, first_core) -> tuple:
        """The core's (distances, their infinity, predecessors, cheapest arc per pair,
        to unpack core paths) by core rank; distances int32 when they fit, which
        halves the lines a join reads (a row is 4 KB for k = 1000)."""
        k = h.core_nodes.size
        p_of_c = self._rank_of[h.core_nodes].astype(np.int64) - first_core
        by_rank = np.ix_(np.argsort(p_of_c), np.argsort(p_of_c))
        pos = np.full(h.num_nodes, -1, dtype=np.int64)
        pos[h.core_nodes] = p_of_c
        cc = np.flatnonzero((pos[h.arc_tail] >= 0) & (pos[h.arc_head] >= 0))
        ct, ch, w = pos[h.arc_tail[cc]], pos[h.arc_head[cc]], h.arc_weight[cc].astype(np.int64)
        dist = np.asarray(h.core_dist, dtype=np.int64)[by_rank]
        pred = np.asarray(h.core_pred, dtype=np.int64)[by_rank]
        pred = np.where(pred >= 0, p_of_c[np.maximum(pred, 0)], -1).astype(np.int32)
        if np.any(w < dist[ct, ch]) or np.any(np.diagonal(dist) != 0):
            raise ValueError("the hierarchy's core distance matrix does not match its core arcs")
        keep = np.flatnonzero(ct != ch)          # the cheapest arc per pair steps a core path
        key = ct[keep] * k + ch[keep]
        order = np.lexsort((w[keep], key))
        pairs, cheapest = np.unique(key[order], return_index=True)
        arc = np.full(k * k, -1, dtype=np.int32)
        arc[pairs] = cc[keep][order[cheapest]]
        arc = arc.reshape(k, k)
        if np.any((pred >= 0) & (arc[np.maximum(pred, 0), np.arange(k)] < 0)):
            raise ValueError("the hierarchy's core predecessors step over arcs it does not have")
        if dist[dist != INF].max(initial=0) < INF32:
            return huge(np.where(dist == INF, INF32, dist).astype(np.int32)), np.int32(INF32), \
                huge(pred), huge(arc)
        return huge(dist), INF, huge(pred), huge(arc)

    def route(self, source: int, target: int) -> Path:
        s, t = int(source), int(target)
        if not (0 <= s < self._n and 0 <= t < self._n):
            check_node(self.graph, s)
            check_node(self.graph, t)
        best, arcs, nodes = _route(s, t, *self._args)
        if best == INF:
            raise unreachable(self.graph, s, t)
        return Path(s, t, self.metric, int(best), nodes, arcs)
