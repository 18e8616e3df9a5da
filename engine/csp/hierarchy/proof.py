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
and only then by a bi-criteria label-setting search from u over climb, core and
descent, bounded by (L, C) and never descending below x. Numba, parallel over
chunks of nodes; scratch: two int64 labels per node per thread.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from engine.ch.arc_lists import find, grouped, listed_mask
from engine.ch.proof import CHUNKS_PER_THREAD, effort, gave_up, workers
from engine.core.arrays import grow
from engine.core.heaps import pop, push
from engine.io.errors import LoadError

INF = np.iinfo(np.int64).max


@dataclass(frozen=True)
class ParetoProof:
    """What the check looked at: valley pairs, how each was answered, the time."""
    pairs: int            # (u -> v, v -> x) pairs of search arcs with u != x
    direct: int           # answered by one search arc u -> x
    two_arcs: int         # by two, u -> y -> x
    searched: int         # by a bi-criteria search
    ms: float

    def text(self) -> str:
        return (f"{self.pairs:,} pairs around contracted nodes proved ({self.direct:,} by an "
                f"arc, {self.two_arcs:,} by two, {self.searched:,} by a search) in "
                f"{self.ms:.0f} ms")


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
    within the bounds, while the buffers have room: each settled label (node, length,
    cost) kept in ``lab``, listed per node (``head``, ``nxt``). (reached x or an arc down
    into it, see _one_down; nl, nt, size)."""
    level, levels, first, ends, lens, costs, room = g[0], g[1], g[2], g[3], g[4], g[5], g[6]
    while size > 0 and nt < touched.size and size + room <= key.shape[0] and \
            nl + room <= lab.shape[0]:
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
    while size > 0 and nt < touched.size and size + room <= key.shape[0] and \
            nb + room <= back.size:
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


@numba.njit(cache=True)
def _search(u, x, big_l, big_c, g, scratch, buf, budget):
    """A climb from u (up arcs, core arcs) and a descent to x within (big_l, big_c)? The
    climb first, ending early at x or an arc down into it; else a climb from x backwards
    (arcs down, reversed) that meets it. (met, labels made: past ``budget``, it stops,
    buf). ``scratch`` (labels forward INF, label lists -1, labels backward INF, ``near``
    -1) is so again on return; ``buf`` (labels, touched nodes, heap) grows here."""
    settled, head, back_settled, near = scratch
    lab, nxt, back, tf, tb, key, item = buf
    room, in_first, in_end = g[6], g[7], g[8]
    for r in range(in_first[x + 1] - 1, in_first[x] - 1, -1):
        near[in_end[r]] = r
    lab[0, 0], lab[0, 1], lab[0, 2], key[0, 0], key[0, 1], item[0] = u, 0, 0, 0, 0, 0
    nl, nt, size, met = 1, 0, 1, False
    while size > 0 and not met and nl <= budget:
        met, nl, nt, size = _climb(g, x, big_l, big_c, near, settled, head, lab, nxt, nl, tf, nt,
                                   key, item, size)
        tf, key, item = grow(tf, nt + 1), grow(key, size + room), grow(item, size + room)
        lab, nxt = grow(lab, nl + room), grow(nxt, nl + room)
    for r in range(in_first[x], in_first[x + 1]):
        near[in_end[r]] = -1
    back[0], key[0, 0], key[0, 1], item[0] = x, 0, 0, 0
    nb, mt, size = 1, 0, 0 if met else 1
    while size > 0 and not met and nl + nb <= budget:
        met, nb, mt, size = _meets(g, big_l, big_c, back_settled, head, lab, nxt, back, nb, tb,
                                   mt, key, item, size)
        tb, key, item = grow(tb, mt + 1), grow(key, size + room), grow(item, size + room)
        back = grow(back, nb + room)
    for i in range(mt):
        back_settled[tb[i]] = INF
    for i in range(nt):
        settled[tf[i]], head[tf[i]] = INF, -1
    return met, nl + nb, (lab, nxt, back, tf, tb, key, item)


@numba.njit(cache=True, parallel=True)
def _prove(g, nodes, chunks, settled, head, back_settled, near, budget):
    """Every valley pair of ``nodes`` (contracted), ``chunks`` ranges of them in parallel:
    (counts [3]: direct, two arcs, searched; the failure (v, u, x, L, C) of the lowest
    chunk that has one, or v = -1; x = -2: a chunk's searches made more than ``budget``
    labels)."""
    level, in_first, in_end, in_len, in_cost = g[0], g[7], g[8], g[9], g[10]
    first, ends, lens, costs = g[2], g[3], g[4], g[5]
    stats = np.zeros((chunks.size - 1, 4), np.int64)
    fail = np.full((chunks.size - 1, 5), -1, np.int64)
    for c in numba.prange(chunks.size - 1):
        t = numba.get_thread_id()
        scratch = (settled[t], head[t], back_settled[t], near[t])
        buf = (np.empty((64, 3), np.int64), np.empty(64, np.int64), np.empty(64, np.int64),
               np.empty(64, np.int64), np.empty(64, np.int64), np.empty((64, 2), np.int64),
               np.empty(64, np.int64))
        for k in range(chunks[c], chunks[c + 1]):
            v = nodes[k]
            for i in range(in_first[v], in_first[v + 1]):
                u = in_end[i]
                for j in range(first[0, v], first[0, v + 1]):
                    x = ends[j]
                    big_l, big_c = in_len[i] + lens[j], in_cost[i] + costs[j]
                    if x == u or fail[c, 0] >= 0:
                        continue
                    if _direct(u, x, big_l, big_c, g):
                        stats[c, 0] += 1
                    elif _two_arcs(u, x, level[v], big_l, big_c, g):
                        stats[c, 1] += 1
                    else:
                        stats[c, 2] += 1
                        met, work, buf = _search(u, x, big_l, big_c, g, scratch, buf, budget)
                        stats[c, 3] += work
                        if not met or stats[c, 3] > budget:
                            gave = stats[c, 3] > budget
                            fail[c, 0], fail[c, 1], fail[c, 2] = v, u, -2 if gave else x
                            fail[c, 3], fail[c, 4] = big_l, big_c
    for c in range(chunks.size - 1):
        if fail[c, 0] >= 0:
            return stats[:, :3].sum(axis=0), fail[c]
    return stats[:, :3].sum(axis=0), np.full(5, -1, np.int64)


def prove_pareto(h, path=None, threads: int | None = None) -> ParetoProof:
    """Check that ``h`` (a ParetoHierarchy, or anything with its arrays, validated by
    engine.io.pareto_hierarchy_file.check_pareto_hierarchy) misses no shortcut;
    LoadError naming ``path`` if it does. ``threads``: at most this many."""
    started = time.perf_counter()
    n, levels, level = h.num_nodes, h.num_levels, h.level
    g, pairs = _lists(h)
    budget = effort(path, pairs, n, g[3].size + g[8].size)
    nodes = np.flatnonzero(level < levels)
    threads = workers(n, threads, per_node=32)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        labels = (np.full((threads, n), INF, np.int64), np.full((threads, n), -1, np.int64),
                  np.full((threads, n), INF, np.int64), np.full((threads, n), -1, np.int64))
        parts = max(1, min(nodes.size, threads * CHUNKS_PER_THREAD))
        stats, fail = _prove(g, nodes, np.linspace(0, nodes.size, parts + 1).astype(np.int64),
                             *labels, budget)
    finally:
        numba.set_num_threads(previous)
    if fail[0] >= 0:
        v, u, x, big_l, big_c = (int(f) for f in fail)
        if x == -2:
            raise LoadError(path, gave_up(v, budget))
        raise LoadError(path, f"a shortcut is missing: the hierarchy's path {u} -> {v} -> {x} "
                              f"(node indexes; length {big_l:,}, cost {big_c:,}, around node {v} "
                              f"of level {int(level[v])}) has no way around it as short and as "
                              "cheap, so cost-budgeted answers through it could be wrong")
    return ParetoProof(int(stats.sum()), int(stats[0]), int(stats[1]), int(stats[2]),
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
