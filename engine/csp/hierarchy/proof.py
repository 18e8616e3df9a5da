"""The witness check of a bi-criteria hierarchy (``.rlb``): a proof, from its arrays
alone, that no shortcut is missing, so that cost-budgeted answers on it stay exact.

The labeling searches the layered graph (engine/csp/hierarchy/layered.py): paths that
climb over search arcs to higher levels, cross the core over core arcs and descend.
It is exact when every path of the graph has such a copy as short and as cheap. The
file validator (engine/io/pareto_hierarchy_file.py) proves every shortcut a real
path and every arc the search leaves out dominated by a search arc; what it cannot
see is a shortcut that is not there. This check's condition, for every contracted
node v of level l and every pair of search arcs u -> v and v -> x (``u != x``) from
and to higher nodes, with (L, C) the pair's summed length and cost:

    the hierarchy has a path u ~> x of search arcs with length <= L and cost <= C
    whose inner nodes lie above level l, or one with length + cost < L + C.

It is enough, as for contraction hierarchies (engine/ch/proof.py): replacing such a
*valley* u -> v -> x by its way around makes (length + cost, the multiset of levels
read from the top) decrease in a well-founded order, and a path with no valley left
climbs, crosses the core and descends, dominated-or-equal to where it started. And
it refuses exactly the hierarchies in which some pair of nodes has a path that no
climb-core-descent dominates (an answer the labeling could miss).

A pair is answered, cheapest first: by a search arc u -> x that dominates it, by two
arcs u -> y -> x (binary searches in the sorted arc lists of engine/ch/arc_lists.py),
and only then by bi-criteria label-setting bounded by (L, C): a climb from u (up
arcs, core arcs) that ends at x or at an arc down into x, else a climb from x over
the arcs down, reversed, that must meet one of its labels. Numba kernels run by
threads over chunks of nodes (engine/ch/proof_work.py, with its work bounds). Memory
while it runs: 20 bytes per search arc and 32 per node for the lists, 32 per node per
thread for the searches (NY: 41 MB, then 8 MB a thread).
"""
from __future__ import annotations

import time

import numba
import numpy as np

from engine.ch.arc_lists import find, grouped, listed_mask
from engine.ch.proof import Proof
from engine.ch.proof_work import effort, gave_up, in_chunks, workers
from engine.core.heaps import pop, push
from engine.io.errors import LoadError

INF = np.iinfo(np.int64).max


@numba.njit(cache=True, _nrt=False)
def _kind(u, x, level, levels):
    """Which of u's lists would hold an arc u -> x: 0 up, 1 down, 2 core, -1 none."""
    if level[x] > level[u]:
        return 0
    if level[x] < level[u]:
        return 1
    return 2 if level[u] == levels else -1


@numba.njit(cache=True, _nrt=False)
def _direct(u, x, big_l, big_c, g):
    """A search arc u -> x with length <= big_l and cost <= big_c?"""
    level, levels, first, ends, lens, costs = g[0], g[1], g[2], g[3], g[4], g[5]
    k = _kind(u, x, level, levels)
    if k < 0:
        return False
    r, end = find(ends, first[k, u], first[k, u + 1], x), first[k, u + 1]
    while r < end and ends[r] == x:
        if lens[r] <= big_l and costs[r] <= big_c:
            return True
        r += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _two_arcs(u, x, l, big_l, big_c, g):
    """Search arcs u -> y -> x within (big_l, big_c), y above level l, or at l and
    strictly shorter in length + cost? (y over u's three lists, x found in y's.)"""
    level, levels, first, ends, lens, costs = g[0], g[1], g[2], g[3], g[4], g[5]
    for k in range(3):
        for r in range(first[k, u], first[k, u + 1]):
            y = ends[r]
            j = _kind(y, x, level, levels)
            if level[y] < l or y == x or j < 0:
                continue
            q, end = find(ends, first[j, y], first[j, y + 1], x), first[j, y + 1]
            while q < end and ends[q] == x:
                a, b = lens[r] + lens[q], costs[r] + costs[q]
                if a <= big_l and b <= big_c and (level[y] > l or a + b < big_l + big_c):
                    return True
                q += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _one_down(y, d, c, x, big_l, big_c, g, near):
    """Does label (d, c) at y reach x within the bounds: y is x, or an arc y -> x from
    above (``near[y]``: its first position in x's sorted list of them, else -1)?"""
    if y == x:
        return True
    r = near[y]
    if r < 0:
        return False
    in_first, in_end, in_len, in_cost = g[7], g[8], g[9], g[10]
    while r < in_first[x + 1] and in_end[r] == y:
        if d + in_len[r] <= big_l and c + in_cost[r] <= big_c:
            return True
        r += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _climb(g, x, big_l, big_c, near, settled, head, lab, nxt, nl, touched, nt, key, item,
           size):
    """Label-setting steps climbing from the labels in the heap (up arcs, then core arcs),
    within the bounds, while the buffers (all as long as ``lab``: a label made is at most
    one touched node and one heap entry) have room: each settled label (node, length,
    cost) kept in ``lab``, listed per node (``head``, ``nxt``). (reached x or an arc down
    into it, see _one_down; nl, nt, size)."""
    level, levels, first, ends, lens, costs, room = g[0], g[1], g[2], g[3], g[4], g[5], g[6]
    while size > 0 and nl + room <= lab.shape[0]:
        dc, e, size = pop(key, item, size)
        d, c = dc
        y = lab[e, 0]
        if c >= settled[y]:
            continue                  # a label no longer and no dearer left already
        if settled[y] == INF:
            touched[nt], nt = y, nt + 1
        settled[y], nxt[e], head[y] = c, head[y], e
        if _one_down(y, d, c, x, big_l, big_c, g, near):
            return True, nl, nt, size
        k = 2 if level[y] == levels else 0
        for r in range(first[k, y], first[k, y + 1]):
            z, nd, nc = ends[r], d + lens[r], c + costs[r]
            if nd <= big_l and nc <= big_c and nc < settled[z]:
                lab[nl, 0], lab[nl, 1], lab[nl, 2] = z, nd, nc
                size, nl = push(key, item, size, (nd, nc), nl), nl + 1
    return False, nl, nt, size


@numba.njit(cache=True, _nrt=False)
def _meets(g, big_l, big_c, settled, head, lab, nxt, back, nb, touched, nt, key, item, size):
    """Label-setting steps climbing from x backwards (arcs down into a node, reversed),
    within the bounds, while the buffers have room; a settled label meets a climbing
    label of its node (``head``, ``lab``, ``nxt``) within the bounds: (met, nb, nt, size)."""
    in_first, in_end, in_len, in_cost, room = g[7], g[8], g[9], g[10], g[6]
    while size > 0 and nb + room <= back.size:
        dc, e, size = pop(key, item, size)
        d, c = dc
        y = back[e]
        if c >= settled[y]:
            continue
        if settled[y] == INF:
            touched[nt], nt = y, nt + 1
        settled[y] = c
        f = head[y]
        while f >= 0:
            if lab[f, 1] + d <= big_l and lab[f, 2] + c <= big_c:
                return True, nb, nt, size
            f = nxt[f]
        for r in range(in_first[y], in_first[y + 1]):
            z, nd, nc = in_end[r], d + in_len[r], c + in_cost[r]
            if nd <= big_l and nc <= big_c and nc < settled[z]:
                back[nb] = z
                size, nb = push(key, item, size, (nd, nc), nb), nb + 1
    return False, nb, nt, size


@numba.njit(cache=True, _nrt=False)
def _search(u, x, big_l, big_c, g, scratch, buf, budget):
    """A climb from u (up arcs, core arcs) and a descent to x within (big_l, big_c)? The
    climb first, ending early at x or an arc down into it; else a climb from x backwards
    (arcs down, reversed) that meets it. (1 met, 0 not, -1 the buffers were too small;
    labels made: past ``budget`` it stops). ``scratch`` (labels forward INF, label lists
    -1, labels backward INF, ``near`` -1) is so again on return; ``buf``: labels, touched
    nodes, heap."""
    settled, head, back_settled, near = scratch
    lab, nxt, back, tf, tb, key, item = buf
    in_first, in_end = g[7], g[8]
    for r in range(in_first[x + 1] - 1, in_first[x] - 1, -1):
        near[in_end[r]] = r
    lab[0, 0], lab[0, 1], lab[0, 2], key[0, 0], key[0, 1], item[0] = u, 0, 0, 0, 0, 0
    met, nl, nt, size = _climb(g, x, big_l, big_c, near, settled, head, lab, nxt, 1, tf, 0, key,
                               item, 1)
    full = size > 0 and not met
    for r in range(in_first[x], in_first[x + 1]):
        near[in_end[r]] = -1
    nb = mt = 0
    if not met and not full and nl <= budget:
        back[0], key[0, 0], key[0, 1], item[0] = x, 0, 0, 0
        met, nb, mt, size = _meets(g, big_l, big_c, back_settled, head, lab, nxt, back, 1, tb,
                                   0, key, item, 1)
        full = size > 0 and not met
    for i in range(mt):
        back_settled[tb[i]] = INF
    for i in range(nt):
        settled[tf[i]], head[tf[i]] = INF, -1
    return (-1 if full else 1 if met else 0), nl + nb


@numba.njit(cache=True)
def _buffers(cap):
    """A search's labels (node, length, cost), their lists, the backward labels, touched
    nodes both ways, heap keys and items: ``cap`` of each."""
    return (np.empty((cap, 3), np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty((cap, 2), np.int64),
            np.empty(cap, np.int64))


@numba.njit(cache=True, nogil=True)
def _chunk(g, nodes, lo, hi, settled, head, back_settled, near, budget):
    """Every valley pair of nodes[lo:hi] (contracted): (counts [3]: direct, two arcs,
    searched; the first failure (v, u, x, L, C), or v = -1; x = -2: the searches made
    more than ``budget`` labels). The rest: this thread's scratch (see _search)."""
    level, in_first, in_end, in_len, in_cost = g[0], g[7], g[8], g[9], g[10]
    first, ends, lens, costs = g[2], g[3], g[4], g[5]
    stats, fail = np.zeros(3, np.int64), np.full(5, -1, np.int64)
    scratch = (settled, head, back_settled, near)
    buf = _buffers(max(4096, 4 * g[6]))
    work = 0
    for k in range(lo, hi):
        v = nodes[k]
        for i in range(in_first[v], in_first[v + 1]):
            u = in_end[i]
            for j in range(first[0, v], first[0, v + 1]):
                x = ends[j]
                big_l, big_c = in_len[i] + lens[j], in_cost[i] + costs[j]
                if x == u:
                    continue
                if _direct(u, x, big_l, big_c, g):
                    stats[0] += 1
                elif _two_arcs(u, x, level[v], big_l, big_c, g):
                    stats[1] += 1
                else:
                    stats[2] += 1
                    status, labels = _search(u, x, big_l, big_c, g, scratch, buf, budget)
                    while status < 0:              # rare: more labels than the buffers hold
                        if buf[0].shape[0] > budget:
                            labels = budget + 1
                            break
                        buf = _buffers(2 * buf[0].shape[0])
                        status, labels = _search(u, x, big_l, big_c, g, scratch, buf, budget)
                    work += labels
                    met = status == 1
                    if not met or work > budget:
                        fail[0], fail[1], fail[2] = v, u, -2 if work > budget else x
                        fail[3], fail[4] = big_l, big_c
                        return stats, fail
    return stats, fail


def prove_pareto(h, path=None, threads: int | None = None) -> Proof:
    """Check that ``h`` (a ParetoHierarchy, or anything with its arrays, validated by
    engine.io.pareto_hierarchy_file.check_pareto_hierarchy) misses no shortcut;
    LoadError naming ``path`` if it does. ``threads``: at most this many."""
    started = time.perf_counter()
    n, levels, level = h.num_nodes, h.num_levels, h.level
    g, pairs = _lists(h)
    budget = effort(path, pairs, n, g[3].size + g[8].size)
    scratch = [(np.full(n, INF, np.int64), np.full(n, -1, np.int64), np.full(n, INF, np.int64),
                np.full(n, -1, np.int64)) for _ in range(workers(n, threads, per_node=32))]
    stats, fail = in_chunks(_chunk, g, np.flatnonzero(level < levels), scratch, budget)
    if fail[0] >= 0:
        v, u, x, big_l, big_c = (int(f) for f in fail)
        if x == -2:
            raise LoadError(path, gave_up(v, budget))
        raise LoadError(path, f"a shortcut is missing: the hierarchy's path {u} -> {v} -> {x} "
                              f"(node indexes; length {big_l:,}, cost {big_c:,}, around node {v} "
                              f"of level {int(level[v])}) has no way around it as short and as "
                              "cheap, so cost-budgeted answers through it could be wrong")
    return Proof(int(stats.sum()), int(stats[0]), int(stats[1]), int(stats[2]),
                 (time.perf_counter() - started) * 1000)


def _lists(h) -> tuple[tuple, int]:
    """(the arrays the Numba passes take, as ``g``; the number of valley pairs)."""
    n, level, tail, head = h.num_nodes, h.level, h.arc_tail, h.arc_head
    lt, lh = level[tail], level[head]
    kind = np.where(lt < lh, 0, np.where(lt > lh, 1, 2)).astype(np.int8)   # up, down, core
    kind[~listed_mask(tail.size, h.arcs) | (tail == head)] = -1
    first, arcs, ends = grouped(tail, head, kind, n, 3)
    above = grouped(head, tail, np.where(kind == 1, np.int8(0), np.int8(-1)), n, 1)
    room = 2 * int(np.diff(first, axis=1).max(initial=0)) + 1
    g = (level, h.num_levels, first, ends, h.arc_length[arcs], h.arc_cost[arcs], room,
         above[0][0], above[2], h.arc_length[above[1]], h.arc_cost[above[1]])
    return g, int(np.dot(np.diff(first[0]), np.diff(above[0][0])))
