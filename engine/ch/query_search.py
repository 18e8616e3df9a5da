"""The CH query's Numba side (engine/ch/query.py): both upward searches, the join
through the core matrix, the chain of hierarchy arcs and its unpacking.

Nodes are ranks (by level, engine/ch/query_build.py). Label row of rank r, ``lab[r]``:
distance forward, backward (``inf``: unreached), parent forward, backward, then where
r's arcs are in ``adj`` (other end, weight): upward ``lab[r, 4]:lab[r, 5]``, reversed
downward ``lab[r, 6]:lab[r, 7]``; a core rank has none, and ``lab[r, 4]`` is its core
rank. ``level_of[r]`` is r's level.

**Level order, not distance order.** Every arc of the search goes up at least one
level, so a node's label is final once every lower level is done: each search takes
its reached nodes level by level (a bucket per level, ``bucket[d, level_first[l]:]``,
room for the whole level) and settles each exactly once, with no priority queue, no
stale entries and no decrease-key. Stall-on-demand stays exact in this order: a
higher neighbour x with ``lab[x] + w(x, u) < lab[u]`` proves a shorter path to u
whatever x's label is (any finite label is the length of a real path), and a node
of a shortest up-down path is never stalled, nor pruned by ``lab >= best``. The best
meeting is updated on every relaxation, so ``best`` prunes as soon as both sides meet.
Core nodes are collected in the top bucket, not expanded, and joined through the core
matrix.

**Unpacking in rounds.** A shortcut's children are read a whole round at a time
(every shortcut of the round prefetched first), so the cache misses of one round
overlap instead of following one another down each shortcut's left spine; the
rounds build a small tree in scratch memory, walked in path order at the end.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.core.arrays import prefetch

INF = np.iinfo(np.int64).max
DAMAGED = -2
NEED_CORE_ARCS = -3         # a path crosses the core, and its arcs are not listed yet


# ----------------------------------------------------------------- the search
@numba.njit(cache=True, _nrt=False)
def _stalled(d, u, k, adj, lab, inf):
    """Some higher x reaches u cheaper than k through an arc x -> u (forward) or
    u -> x (backward), found in u's block of the other direction."""
    for i in range(lab[u, 6 - 2 * d], lab[u, 7 - 2 * d]):
        x = adj[i, 0]
        if lab[x, d] != inf and lab[x, d] + adj[i, 1] < k:
            return True
    return False


@numba.njit(cache=True, _nrt=False)
def _reach(d, v, n_touched, adj, lab, inf, level_of, level_first, bucket, count, touched):
    """v's first label of direction d: into its level's bucket; listed as touched (its
    arcs prefetched, read when it is settled) if the other side has not reached it."""
    lv = level_of[v]
    bucket[d, level_first[lv] + count[d, lv]] = v
    count[d, lv] += 1
    if lab[v, 1 - d] == inf:
        touched[n_touched] = v
        n_touched += 1
        prefetch(adj, lab[v, 4])
        prefetch(adj, lab[v, 6])
    return n_touched


@numba.njit(cache=True, _nrt=False)
def _expand(d, u, k, best, meet, n_touched, adj, lab, inf, level_of, level_first, bucket, count,
            touched):
    """Relax u's arcs of direction d; (best, meeting rank, touched count)."""
    for i in range(lab[u, 4 + 2 * d], lab[u, 5 + 2 * d]):
        v = adj[i, 0]
        nd = k + adj[i, 1]
        if nd < lab[v, d]:
            if lab[v, d] == inf:
                n_touched = _reach(d, v, n_touched, adj, lab, inf, level_of, level_first, bucket,
                                   count, touched)
            lab[v, d], lab[v, 2 + d] = nd, u
            if lab[v, 1 - d] != inf and nd + lab[v, 1 - d] < best:
                best, meet = nd + lab[v, 1 - d], v
    return best, meet, n_touched


@numba.njit(cache=True, _nrt=False)
def search(s, t, levels, level_of, level_first, adj, lab, inf, bucket, count, touched, state):
    """Both upward searches, level by level below the core (see the module docstring);
    the last query's labels are reset first through its touched list (``state[0]`` of
    them). Returns (best distance through a non-core meeting, meeting rank)."""
    for i in range(state[0]):
        lab[touched[i], 0] = inf
        lab[touched[i], 1] = inf
    for lv in range(levels + 1):
        count[0, lv] = 0
        count[1, lv] = 0
    n_touched = _reach(0, s, 0, adj, lab, inf, level_of, level_first, bucket, count, touched)
    lab[s, 0] = 0
    n_touched = _reach(1, t, n_touched, adj, lab, inf, level_of, level_first, bucket, count,
                       touched)
    lab[t, 1] = 0
    best, meet = (np.int64(0), s) if s == t else (INF, np.int32(-1))
    for lv in range(min(level_of[s], level_of[t]), levels):
        base = level_first[lv]
        for d in range(2):
            for j in range(count[d, lv]):
                u = bucket[d, base + j]
                k = lab[u, d]
                if k >= best or _stalled(d, u, k, adj, lab, inf):
                    continue
                best, meet, n_touched = _expand(d, u, k, best, meet, n_touched, adj, lab, inf,
                                                level_of, level_first, bucket, count, touched)
    state[0] = n_touched
    return best, meet


@numba.njit(cache=True, _nrt=False)
def _gather_core(d, best, base, lab, bucket, count, levels, out):
    """The core nodes search d reached closer than ``best``, as rows (node, core rank,
    distance) of ``out`` sorted by distance (insertion sort: a few dozen); how many."""
    k = 0
    for j in range(count[d, levels]):
        v = bucket[d, base + j]
        x = lab[v, d]
        if x < best:
            i = k
            while i > 0 and out[2, i - 1] > x:
                out[0, i], out[1, i], out[2, i] = out[0, i - 1], out[1, i - 1], out[2, i - 1]
                i -= 1
            out[0, i], out[1, i], out[2, i], k = v, lab[v, 4], x, k + 1
    return k


@numba.njit(cache=True, _nrt=False)
def join(best, meet, levels, level_first, lab, bucket, count, core_dist, core_inf, scratch):
    """The best s -> f -> b -> t through the core matrix, f and b the core nodes each
    search reached: (best, f, b), f = b = meet when no core path is shorter. Both sides
    sorted by distance (scratch[0:3] forward, [3:6] backward), so each loop stops at
    d(s, f) + d(b, t) >= best."""
    base = level_first[levels]
    nf = _gather_core(0, best, base, lab, bucket, count, levels, scratch[0:3])
    nb = _gather_core(1, best, base, lab, bucket, count, levels, scratch[3:6])
    best_f, best_b = meet, meet
    if nb == 0:
        return best, best_f, best_b
    cols, dists = scratch[4], scratch[5]
    for i in range(nf):
        fi, df = scratch[1, i], scratch[2, i]
        if df + dists[0] >= best:
            break
        for j in range(nb):
            bound = df + dists[j]
            if bound >= best:
                break
            x = core_dist[fi, cols[j]]
            if x != core_inf and bound + x < best:
                best, best_f, best_b = bound + x, scratch[0, i], scratch[3, j]
    return best, best_f, best_b


# ------------------------------------------------------------------- the path
@numba.njit(cache=True, _nrt=False)
def _arc_to(adj, up, down, lab, u, v, d):
    """The hierarchy arc u - v (u's arcs of direction d) whose weight closes the
    labels' gap; -1 if none."""
    for i in range(lab[u, 4 + 2 * d], lab[u, 5 + 2 * d]):
        if adj[i, 0] == v and lab[u, d] + adj[i, 1] == lab[v, d]:
            return up[i] if d == 0 else down[i - up.size]
    return -1


@numba.njit(cache=True, _nrt=False)
def _core_arc(core_first, core_arcs, p, q, w):
    """The hierarchy arc from core row p to q of weight w; -1 if none."""
    for i in range(core_first[p], core_first[p + 1]):
        if core_arcs[i, 0] == q and core_arcs[i, 1] == w:
            return core_arcs[i, 2]
    return -1


@numba.njit(cache=True, _nrt=False)
def chain(s, t, f, b, adj, up, down, lab, core_dist, core_pred, core_order, core_first,
          core_arcs, out):
    """Hierarchy arcs s -> f (forward parents), f -> b (core predecessors), b -> t
    (backward parents) into ``out`` in path order: their number, DAMAGED, or
    NEED_CORE_ARCS when f != b and the core's arcs are not given (``core_first`` empty).
    core_pred is by core index, the rest by core rank (core_order maps both ways)."""
    n_up, v = 0, f
    while v != s:
        v, n_up = lab[v, 2], n_up + 1
    n_core, k = 0, core_pred.shape[0]
    i, j = lab[f, 4], lab[b, 4]
    if f != b:
        if core_first.size == 0:
            return NEED_CORE_ARCS
        row = core_order[0, i]
        while j != i and n_core <= k:
            p = core_pred[row, core_order[0, j]]
            if p < 0:
                return DAMAGED
            j, n_core = core_order[1, p], n_core + 1
        if j != i:
            return DAMAGED
    n_down, v = 0, b
    while v != t:
        v, n_down = lab[v, 3], n_down + 1
    count = n_up + n_core + n_down
    if count > out.size:
        return DAMAGED
    v = f
    for x in range(n_up - 1, -1, -1):
        out[x] = _arc_to(adj, up, down, lab, lab[v, 2], v, 0)
        v = lab[v, 2]
    j = lab[b, 4]
    for x in range(n_up + n_core - 1, n_up - 1, -1):
        p = core_order[1, core_pred[core_order[0, i], core_order[0, j]]]
        out[x] = _core_arc(core_first, core_arcs, p, j, core_dist[i, j] - core_dist[i, p])
        j = p
    v = b
    for x in range(n_up + n_core, count):
        out[x] = _arc_to(adj, up, down, lab, lab[v, 3], v, 1)
        v = lab[v, 3]
    for x in range(count):
        if out[x] < 0:
            return DAMAGED
    return count


@numba.njit(cache=True)
def _rounds(tree, n_chain, m, kids):
    """Expand the tree's shortcuts a round at a time: tree[0, j] an arc, tree[1, j] the
    index of its first child (the second follows it), -1 for an original arc; a
    shortcut a >= m has the children kids[a - m]. Branch-free inner loops (whether an
    arc is a shortcut is a coin toss the predictor loses). Returns (tree, grown when it
    had no room; number of original arcs; number of tree nodes)."""
    lo, hi, total = 0, n_chain, 0
    while lo < hi:
        if hi + 2 * (hi - lo) + 2 > tree.shape[1]:
            bigger = np.empty((3, 2 * (hi + 2 * (hi - lo) + 2)), dtype=np.int32)
            bigger[:, :hi] = tree[:, :hi]
            tree = bigger
        for j in range(lo, hi):
            prefetch(kids, max(tree[0, j] - m, 0))
        nxt = hi
        for j in range(lo, hi):
            a = tree[0, j]
            short = a >= m
            x = a - m if short else 0
            tree[0, nxt], tree[0, nxt + 1] = kids[x, 0], kids[x, 1]
            tree[1, j] = nxt if short else -1
            nxt += 2 * short
            total += 1 - short
        lo, hi = hi, nxt
    return tree, total, hi


@numba.njit(cache=True, _nrt=False)
def _place(tree, n_chain, hi, arcs):
    """The original arcs (leaves of the tree, ``hi`` nodes) into arcs[:-1] in path
    order: leaf counts bottom-up (children follow their parent), then each subtree's
    first slot top-down, both in tree[2]; branch-free, a leaf's writes to its children
    and an internal node's write of an arc go to spare slots (tree[:, hi], arcs[-1])."""
    spare, dump = hi, arcs.size - 1
    tree[1, spare] = -1
    for j in range(hi - 1, -1, -1):
        c = tree[1, j]
        cc = c if c >= 0 else spare
        tree[2, j] = 1 if c < 0 else tree[2, cc] + tree[2, cc + 1]
    at = 0
    for j in range(n_chain):
        at, tree[2, j] = at + tree[2, j], at
    for j in range(hi):
        c = tree[1, j]
        cc = c if c >= 0 else spare
        first = tree[2, j]
        tree[2, cc + 1] = first + tree[2, cc]
        tree[2, cc] = first
        arcs[first if c < 0 else dump] = tree[0, j]


@numba.njit(cache=True)
def unpack(source, path, n_chain, m, kids, head, tree):
    """Original arcs and nodes of the first ``n_chain`` hierarchy arcs of ``path`` from
    ``source`` (children checked when kids was built)."""
    if n_chain + 2 > tree.shape[1]:
        tree = np.empty((3, 2 * n_chain + 2), dtype=np.int32)
    tree[0, :n_chain] = path[:n_chain]
    tree, total, hi = _rounds(tree, n_chain, m, kids)
    arcs = np.empty(total + 1, dtype=np.int32)
    _place(tree, n_chain, hi, arcs)
    nodes = np.empty(total + 1, dtype=np.int32)
    nodes[0] = source
    for i in range(total):
        nodes[i + 1] = head[arcs[i]]
    return arcs[:total], nodes
