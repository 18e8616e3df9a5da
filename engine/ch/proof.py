"""The witness check of a contraction hierarchy: a proof, from its arrays alone, that
no shortcut is missing, so that the CH query and PHAST give exact distances.

The file validator (engine/io/hierarchy_file.py) proves that no distance is too
short: every hierarchy arc is a real path and the core matrix is the core's exact
distances. A dropped shortcut makes distances too long, and nothing there sees it.
This check does. Its condition, for every non-core node v of level l and every
pair of listed arcs u -> v and v -> x (``u != x``) whose other ends are higher
than v (v is then a *valley* of the path u, v, x), with B = w(u, v) + w(v, x):

    the hierarchy has a path u ~> x of listed arcs (up, down, and the core matrix)
    of cost <= B whose inner nodes all lie above level l, or one of cost < B.

It is enough. Take any path of the graph; its arcs are listed arcs or dominated by
a listed one (the validator; an unlisted arc inside one non-core level is checked
here like a pair, with B = its weight). While the path has a valley, replace
u -> v -> x by the path of the condition: the pair (cost, the multiset of levels
read from the top) decreases in a well-founded order, so this ends, with a path
that climbs, crosses the core and descends: the shape the query searches, no
longer than the path we started from (the core part is bounded by the core
matrix, which the validator certifies). The converse holds too: a correct
hierarchy's up-down distance from u to x is at most B. So the check refuses
exactly the hierarchies in which some valley has no way around it.

How it runs (Numba, parallel over chunks of nodes; engine/ch/arc_lists.py): each
node's arcs up and its arcs in from above, sorted by the other end. A pair is
answered, cheapest test first, by an arc u -> x of cost <= B (a binary search: most
pairs, the shortcut itself or the arc it lost to), by two arcs u -> y -> x (over a
peak, up twice or down twice), by an upward search from u within B that reaches x or
a node one arc above it, and only then (NY: ~1 % of the pairs) by an upward search
from x too, met at a node or joined through the core matrix, as the query does.
Scratch: two int64 labels per node per thread (SCRATCH_BUDGET caps the threads).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from engine.ch.arc_lists import find, grouped, listed_mask
from engine.core.arrays import grow
from engine.core.heaps import pop, push
from engine.io.errors import LoadError

INF = np.iinfo(np.int64).max
SCRATCH_BUDGET = 256 << 20       # bytes of per-thread labels; fewer threads beyond it
CHUNKS_PER_THREAD = 8
PAIRS_PER_ARC = 64               # valley pairs a file may have per listed arc (NY: 2-3)
WORK_PER_ARC = 256               # labels a chunk's searches may set per node and arc


@dataclass(frozen=True)
class Proof:
    """What the check looked at: valley pairs, how each was answered, the time."""
    pairs: int            # (u -> v, v -> x) pairs with u != x, and same-level arcs
    direct: int           # answered by an arc u -> x
    two_arcs: int         # by a path u -> y -> x
    searched: int         # by an upward search from both ends
    ms: float

    def text(self) -> str:
        return (f"{self.pairs:,} pairs around contracted nodes proved ({self.direct:,} by an "
                f"arc, {self.two_arcs:,} by two, {self.searched:,} by a search) in "
                f"{self.ms:.0f} ms")


@numba.njit(cache=True, _nrt=False)
def _direct(u, x, bound, level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist):
    """An arc u -> x of cost <= bound (up from u, down into x, or the core matrix)?"""
    if level[x] > level[u]:
        r, end, ends, w, key = find(oe, of[u], of[u + 1], x), of[u + 1], oe, ow, x
    elif level[x] < level[u]:
        r, end, ends, w, key = find(ie, inf[x], inf[x + 1], u), inf[x + 1], ie, iw, u
    else:
        return level[u] == levels and core_dist[core_at[u], core_at[x]] <= bound
    while r < end and ends[r] == key:
        if w[r] <= bound:
            return True
        r += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _two_arcs(u, l, hx, hb, hard, level, of, oe, ow, inf, ie, iw, mark):
    """Drops from hx, hb the x that a path u -> y -> x reaches within its bound (y above
    l) and returns how many are left: over a peak y (u's up-arcs marked in ``mark``, all
    INF on entry and return, x's arcs from above scanned), up twice (x among y's up-arcs)
    or down twice (u among the arcs into y from above)."""
    for r in range(of[u], of[u + 1]):
        mark[oe[r]] = min(mark[oe[r]], ow[r])
    left = 0
    for q in range(hard):
        x, bound = hx[q], hb[q]
        if not (_over_peak(x, l, bound, level, inf, ie, iw, mark) or
                _up_twice(u, x, bound, level, of, oe, ow) or
                _down_twice(u, x, bound, level, inf, ie, iw)):
            hx[left], hb[left], left = x, bound, left + 1
    for r in range(of[u], of[u + 1]):
        mark[oe[r]] = INF
    return left


@numba.njit(cache=True, _nrt=False)
def _over_peak(x, l, bound, level, inf, ie, iw, mark):
    for k in range(inf[x], inf[x + 1]):
        y = ie[k]
        if mark[y] != INF:
            c = mark[y] + iw[k]
            if c < bound or (c == bound and level[y] > l):
                return True
    return False


@numba.njit(cache=True, _nrt=False)
def _up_twice(u, x, bound, level, of, oe, ow):
    for r in range(of[u], of[u + 1]):
        y = oe[r]
        if level[y] < level[x]:
            k = find(oe, of[y], of[y + 1], x)
            while k < of[y + 1] and oe[k] == x:
                if ow[r] + ow[k] <= bound:
                    return True
                k += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _down_twice(u, x, bound, level, inf, ie, iw):
    for r in range(inf[x], inf[x + 1]):
        y = ie[r]
        if level[y] < level[u]:
            k = find(ie, inf[y], inf[y + 1], u)
            while k < inf[y + 1] and ie[k] == u:
                if iw[r] + iw[k] <= bound:
                    return True
                k += 1
    return False


@numba.njit(cache=True, _nrt=False)
def _pairs(v, i, level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist, hx, hb, mark):
    """The pairs u -> v -> x of v's i-th arc from above: (answered by an arc, over a
    peak, left for a search: in hx, hb as (x, bound))."""
    u, wa = ie[i], iw[i]
    direct = hard = 0
    for j in range(of[v], of[v + 1]):
        x = oe[j]
        if x == u:
            continue
        bound = wa + ow[j]
        if _direct(u, x, bound, level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist):
            direct += 1
        else:
            hx[hard], hb[hard], hard = x, bound, hard + 1
    if hard == 0:
        return direct, 0, 0
    left = _two_arcs(u, level[v], hx, hb, hard, level, of, oe, ow, inf, ie, iw, mark)
    return direct, hard - left, left


@numba.njit(cache=True, _nrt=False)
def _climb(bound, first, end, w, dist, touched, nt, key, item, size, room):
    """Dijkstra steps over the arcs to higher levels (upward_lists), labels
    <= bound in ``dist``, while the buffers have ``room`` (a list's longest) entries to
    spare: (nt, size) on return, size 0 when the search is done."""
    while size > 0 and nt + room <= touched.size and size + room <= key.size:
        d, y, size = pop(key, item, size)
        if d > dist[y]:
            continue
        for i in range(first[y], first[y + 1]):
            z = end[i]
            nd = d + w[i]
            if nd <= bound and nd < dist[z]:
                if dist[z] == INF:
                    touched[nt], nt = z, nt + 1
                dist[z] = nd
                size = push(key, item, size, nd, z)
    return nt, size


@numba.njit(cache=True)
def _upward(s, bound, first, end, w, dist, touched, key, item, room):
    """Dijkstra from s over arcs to higher levels (the in-lists: reversed), labels <= bound
    in ``dist`` (INF elsewhere on entry); returns (labelled count, touched, heap). The
    buffers grow here, between runs of _climb (an array grown in its loop would cost
    reference counting on every step)."""
    dist[s] = 0
    touched[0], nt = s, 1
    size = push(key, item, 0, 0, s)
    while size > 0:
        nt, size = _climb(bound, first, end, w, dist, touched, nt, key, item, size, room)
        touched = grow(touched, nt + room)
        key, item = grow(key, size + room), grow(item, size + room)
    return nt, touched, key, item


@numba.njit(cache=True, _nrt=False)
def _meet(bound, nf, tf, df, nb, tb, db, level, levels, core_at, core_dist):
    """Do the two upward searches meet within ``bound``: at a node, or across the core?"""
    for i in range(nb):
        y = tb[i]
        if df[y] != INF and df[y] + db[y] <= bound:
            return True
    for i in range(nf):
        f = tf[i]
        if level[f] != levels:
            continue
        for j in range(nb):
            b = tb[j]
            if level[b] == levels:
                c = core_dist[core_at[f], core_at[b]]
                if c != INF and df[f] + c + db[b] <= bound:
                    return True
    return False


@numba.njit(cache=True, _nrt=False)
def _one_down(x, bound, df, inf, ie, iw):
    """Does the upward search (labels ``df``) reach x, or a node one arc above it, within
    ``bound``?"""
    if df[x] <= bound:
        return True
    for k in range(inf[x], inf[x + 1]):
        d = df[ie[k]]
        if d != INF and d + iw[k] <= bound:
            return True
    return False


@numba.njit(cache=True)
def _search(u, xs, bounds, g, df, db, buf):
    """Up-down paths from u to each of ``xs`` within its bound: (-1, 0, labels set, buf),
    or the first x and bound that none reaches. ``g`` the lists, ``buf`` the scratch
    (touched lists and a heap, grown here); df, db all INF on entry and on return."""
    level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist, room = g
    tf, tb, key, item = buf
    nf, tf, key, item = _upward(u, bounds.max(), of, oe, ow, df, tf, key, item, room)
    failed, failed_bound, work = -1, 0, nf
    for q in range(xs.size):
        if failed >= 0 or _one_down(xs[q], bounds[q], df, inf, ie, iw):
            continue
        nb, tb, key, item = _upward(xs[q], bounds[q], inf, ie, iw, db, tb, key, item, room)
        work += nb
        if not _meet(bounds[q], nf, tf, df, nb, tb, db, level, levels, core_at, core_dist):
            failed, failed_bound = xs[q], bounds[q]
        for k in range(nb):
            db[tb[k]] = INF
    for k in range(nf):
        df[tf[k]] = INF
    return failed, failed_bound, work, (tf, tb, key, item)


@numba.njit(cache=True, parallel=True)
def _prove(g, nodes, chunks, df, db, budget):
    """Every valley pair of ``nodes`` (non-core), ``chunks`` ranges of them in parallel:
    (counts [3]: direct, two arcs, searched; the failure (v, u, x, bound) of the lowest
    chunk that has one, or v = -1; x = -2: a chunk's searches set more than ``budget``
    labels)."""
    level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist, room = g
    stats = np.zeros((chunks.size - 1, 4), np.int64)
    fail = np.full((chunks.size - 1, 4), -1, np.int64)
    for c in numba.prange(chunks.size - 1):
        t = numba.get_thread_id()
        dft, dbt = df[t], db[t]
        hx, hb = np.empty(room, np.int64), np.empty(room, np.int64)
        buf = (np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64),
               np.empty(64, np.int64))
        for k in range(chunks[c], chunks[c + 1]):
            v = nodes[k]
            for i in range(inf[v], inf[v + 1]):
                direct, two, hard = _pairs(v, i, level, levels, of, oe, ow, inf, ie, iw, core_at,
                                           core_dist, hx, hb, dft)
                stats[c, 0] += direct
                stats[c, 1] += two
                stats[c, 2] += hard
                if hard and fail[c, 0] < 0:
                    x, bound, work, buf = _search(ie[i], hx[:hard], hb[:hard], g, dft, dbt, buf)
                    stats[c, 3] += work
                    if stats[c, 3] > budget:
                        x, bound = -2, 0
                    if x != -1:
                        fail[c, 0], fail[c, 1], fail[c, 2], fail[c, 3] = v, ie[i], x, bound
    for c in range(chunks.size - 1):
        if fail[c, 0] >= 0:
            return stats[:, :3].sum(axis=0), fail[c]
    return stats[:, :3].sum(axis=0), np.full(4, -1, np.int64)


@numba.njit(cache=True)
def _same_level(g, tail, head, w, m, df, db):
    """The graph's arcs (< m) inside one non-core level are never searched: each needs
    an up-down path of no more cost. (count, the first arc without one or -1)."""
    level, levels = g[0], g[1]
    buf = (np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64),
           np.empty(64, np.int64))
    xs, bounds = np.empty(1, np.int64), np.empty(1, np.int64)
    count = 0
    for a in range(m):
        u, x = tail[a], head[a]
        if u == x or level[u] != level[x] or level[u] == levels:
            continue
        count += 1
        xs[0], bounds[0] = x, w[a]
        failed, _, _, buf = _search(u, xs, bounds, g, df, db, buf)
        if failed >= 0:
            return count, a
    return count, -1


def prove(h, path=None, threads: int | None = None) -> Proof:
    """Check that ``h`` (a Hierarchy, or anything with its arrays, already validated by
    engine.io.hierarchy_file.check_hierarchy) misses no shortcut; LoadError naming
    ``path`` if it does. ``threads``: at most this many (default: Numba's)."""
    started = time.perf_counter()
    n, levels, level = h.num_nodes, h.num_levels, h.node_level
    g, pairs = _lists(h)
    budget = effort(path, pairs, n, g[3].size + g[6].size)
    nodes = np.flatnonzero(level < levels)
    threads = workers(n, threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        df = np.full((threads, n), INF, np.int64)
        db = np.full((threads, n), INF, np.int64)
        parts = max(1, min(nodes.size, threads * CHUNKS_PER_THREAD))
        chunks = np.linspace(0, nodes.size, parts + 1).astype(np.int64)
        stats, fail = _prove(g, nodes, chunks, df, db, budget)
    finally:
        numba.set_num_threads(previous)
    if fail[0] >= 0:
        v, u, x, bound = (int(f) for f in fail)
        if x == -2:
            raise LoadError(path, gave_up(v, budget))
        raise LoadError(path, f"a shortcut is missing: the hierarchy's path {u} -> {v} -> {x} "
                              f"(node indexes; cost {bound:,}, around node {v} of level "
                              f"{int(level[v])}) has no way around it as short, so CH routes "
                              "and trees through it would be too long or unreachable")
    same, bad = _same_level(g, h.arc_tail, h.arc_head, h.arc_weight, h.num_original_arcs,
                            df[0], db[0])
    if bad >= 0:
        raise LoadError(path, f"arc {bad} ({int(h.arc_tail[bad])} -> {int(h.arc_head[bad])}) "
                              "lies inside one contracted level and no up-down path in the "
                              "hierarchy is as short; CH routes would miss it")
    return Proof(int(stats.sum()) + same, int(stats[0]), int(stats[1]), int(stats[2]) + same,
                 (time.perf_counter() - started) * 1000)


def _lists(h) -> tuple[tuple, int]:
    """(the arrays the Numba passes take, as ``g``; the number of valley pairs)."""
    n, level = h.num_nodes, h.node_level
    listed = listed_mask(h.arc_tail.size, h.up_harc, h.down_harc)
    rise = level[h.arc_tail] < level[h.arc_head]
    up_first, up_arc, up_end = grouped(h.arc_tail, h.arc_head, _kind(listed & rise), n, 1)
    down_first, down_arc, down_end = grouped(h.arc_head, h.arc_tail, _kind(listed & ~rise), n, 1)
    up_first, down_first = up_first[0], down_first[0]
    core_at = np.full(n, -1, np.int64)
    core_at[h.core_nodes] = np.arange(h.core_nodes.size)
    ups, downs = np.diff(up_first), np.diff(down_first)
    room = max(1, int(ups.max(initial=0)), int(downs.max(initial=0)))
    g = (level, h.num_levels, up_first, up_end, h.arc_weight[up_arc], down_first, down_end,
         h.arc_weight[down_arc], core_at, np.ascontiguousarray(h.core_dist), room)
    return g, int(np.dot(ups, downs))


def effort(path, pairs: int, n: int, arcs: int) -> int:
    """Refuse a file with far more valley pairs than contraction makes (NY: ~2-3 per
    listed arc; a crafted node of huge degree could make the check run for hours), and
    return the search budget: how many labels one chunk's searches may set."""
    if pairs > PAIRS_PER_ARC * arcs + (1 << 20):
        raise LoadError(path, f"{pairs:,} pairs of arcs around contracted nodes for {arcs:,} "
                              "arcs: far more than contraction makes; not proved")
    return WORK_PER_ARC * (n + arcs) + (1 << 20)


def gave_up(v: int, budget: int) -> str:
    return (f"the witness check gave up near node {v}: its searches set more than "
            f"{budget:,} labels, far more than a hierarchy from contraction needs; not proved")


def _kind(mask: np.ndarray) -> np.ndarray:
    """int8: 0 where ``mask``, -1 elsewhere (arc_lists.grouped's kinds)."""
    return np.where(mask, np.int8(0), np.int8(-1))


def workers(n: int, threads: int | None, per_node: int = 16) -> int:
    """Threads for a witness check: Numba's (or ``threads``), fewer when their scratch
    (``per_node`` bytes per node each) would pass SCRATCH_BUDGET."""
    want = numba.get_num_threads() if threads is None else max(1, int(threads))
    cap = SCRATCH_BUDGET // max(per_node * n, 1)
    return max(1, min(want, numba.config.NUMBA_NUM_THREADS, cap))
