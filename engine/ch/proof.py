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
matrix, which the validator certifies). And a refusal is never a false alarm: the
last test below decides whether the query's up-core-down distance from u to x is at
most B, and the graph has a path of cost B (u -> v -> x unpacked), so the check
refuses exactly the hierarchies whose CH query is too long for some pair of nodes.

How it runs (Numba, parallel over chunks of nodes; engine/ch/arc_lists.py): each
node's arcs up and its arcs in from above, sorted by the other end. A pair is
answered, cheapest test first, by an arc u -> x of cost <= B (a binary search: most
pairs, the shortcut itself or the arc it lost to), by two arcs u -> y -> x (over a
peak, up twice or down twice), by an upward search from u within B that reaches x or
a node one arc above it, and only then (NY: 2 % of the pairs) by an upward search
from x too, met at a node or joined through the core matrix, as the query does.
Memory while it runs: 12 bytes per listed arc and 16 per node for the lists, 28 per
node per thread for the searches (SCRATCH_BUDGET caps the threads; NY: 21 MB, then 7
MB a thread). A crafted file cannot make it run for hours: far more pairs than
contraction makes, or searches past a budget of labels, refuse it (``effort``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from engine.ch.arc_lists import find, grouped, listed_mask
from engine.ch.proof_work import effort, gave_up, in_chunks, workers
from engine.io.errors import LoadError

INF = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Proof:
    """What a witness check looked at (this one's and engine.csp.hierarchy.proof's):
    valley pairs, how each was answered, the time."""
    pairs: int            # (u -> v, v -> x) pairs with u != x (CH: and same-level arcs)
    direct: int           # answered by an arc u -> x
    two_arcs: int         # by a path u -> y -> x
    searched: int         # by a search (CH: upward from both ends; .rlb: bi-criteria)
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
                _two_lists(u, x, bound, level, of, oe, ow) or
                _two_lists(x, u, bound, level, inf, ie, iw)):
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
def _two_lists(a, b, bound, level, first, end, weight):
    """Two arcs a -> y -> b of one kind (up twice: the lists out; down twice: the lists
    in, with a and b swapped), y below b, of cost <= bound?"""
    for r in range(first[a], first[a + 1]):
        y = end[r]
        if level[y] < level[b]:
            k = find(end, first[y], first[y + 1], b)
            while k < first[y + 1] and end[k] == b:
                if weight[r] + weight[k] <= bound:
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
def _upward(s, bound, first, end, w, level, levels, level_first, dist, touched, bucket, count):
    """Labels <= bound in ``dist`` (INF elsewhere on entry) from s over arcs to higher
    levels (the in-lists: reversed), taken level by level: every arc climbs, so a node's
    label is final once the levels below are done (no queue; ``bucket`` holds each
    level's nodes from level_first[level], ``count`` how many, left all 0). Returns how
    many nodes it labelled, listed in ``touched``."""
    dist[s] = 0
    touched[0], nt = s, 1
    bucket[level_first[level[s]]], count[level[s]] = s, 1
    for lv in range(level[s], levels):
        base = level_first[lv]
        for j in range(count[lv]):
            y = bucket[base + j]
            d = dist[y]
            for i in range(first[y], first[y + 1]):
                z, nd = end[i], d + w[i]
                if nd <= bound and nd < dist[z]:
                    if dist[z] == INF:
                        touched[nt], nt = z, nt + 1
                        bucket[level_first[level[z]] + count[level[z]]] = z
                        count[level[z]] += 1
                    dist[z] = nd
        count[lv] = 0
    count[levels] = 0
    return nt


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


@numba.njit(cache=True, _nrt=False)
def _search(u, xs, bounds, hard, g, df, db, tf, tb, bucket, count):
    """Up-down paths from u to each of xs[:hard] within its bound: (-1, 0, labels set),
    or the first x and bound that none reaches. df, db (labels), tf, tb (touched),
    bucket and count: this thread's scratch (see _upward), left as they came."""
    level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist, level_first = g[:11]
    most = 0
    for q in range(hard):
        most = max(most, bounds[q])
    nf = _upward(u, most, of, oe, ow, level, levels, level_first, df, tf, bucket, count)
    failed, failed_bound, work = -1, 0, nf
    for q in range(hard):
        if _one_down(xs[q], bounds[q], df, inf, ie, iw):
            continue
        nb = _upward(xs[q], bounds[q], inf, ie, iw, level, levels, level_first, db, tb, bucket,
                     count)
        work += nb
        met = _meet(bounds[q], nf, tf, df, nb, tb, db, level, levels, core_at, core_dist)
        for k in range(nb):
            db[tb[k]] = INF
        if not met:
            failed, failed_bound = xs[q], bounds[q]
            break
    for k in range(nf):
        df[tf[k]] = INF
    return failed, failed_bound, work


@numba.njit(cache=True, nogil=True)
def _chunk(g, nodes, lo, hi, df, db, tf, tb, bucket, count, budget):
    """Every valley pair of nodes[lo:hi] (non-core): (counts [3]: direct, two arcs,
    searched; the first failure (v, u, x, bound), or v = -1; x = -2: the searches set
    more than ``budget`` labels). The rest: this thread's scratch (see _search)."""
    level, levels, of, oe, ow, inf, ie, iw, core_at, core_dist = g[:10]
    stats, fail = np.zeros(3, np.int64), np.full(4, -1, np.int64)
    hx, hb = np.empty(g[11], np.int64), np.empty(g[11], np.int64)
    work = 0
    for k in range(lo, hi):
        v = nodes[k]
        for i in range(inf[v], inf[v + 1]):
            direct, two, hard = _pairs(v, i, level, levels, of, oe, ow, inf, ie, iw, core_at,
                                       core_dist, hx, hb, df)
            stats[0] += direct
            stats[1] += two
            stats[2] += hard
            if hard:
                x, bound, labels = _search(ie[i], hx, hb, hard, g, df, db, tf, tb, bucket, count)
                work += labels
                if work > budget:
                    x, bound = -2, 0
                if x != -1:
                    fail[0], fail[1], fail[2], fail[3] = v, ie[i], x, bound
                    return stats, fail
    return stats, fail


@numba.njit(cache=True)
def _same_level(g, tail, head, w, m, df, db, tf, tb, bucket, count):
    """The graph's arcs (< m) inside one non-core level are never searched: each needs
    an up-down path of no more cost. (count, the first arc without one or -1)."""
    level, levels = g[0], g[1]
    xs, bounds = np.empty(1, np.int64), np.empty(1, np.int64)
    found = 0
    for a in range(m):
        u, x = tail[a], head[a]
        if u == x or level[u] != level[x] or level[u] == levels:
            continue
        found += 1
        xs[0], bounds[0] = x, w[a]
        if _search(u, xs, bounds, 1, g, df, db, tf, tb, bucket, count)[0] >= 0:
            return found, a
    return found, -1


def prove(h, path=None, threads: int | None = None) -> Proof:
    """Check that ``h`` (a Hierarchy, or anything with its arrays, already validated by
    engine.io.hierarchy_file.check_hierarchy) misses no shortcut; LoadError naming
    ``path`` if it does. ``threads``: at most this many (default: Numba's)."""
    started = time.perf_counter()
    n, levels, level = h.num_nodes, h.num_levels, h.node_level
    g, pairs = _lists(h)
    budget = effort(path, pairs, n, g[3].size + g[6].size)
    scratch = [(np.full(n, INF, np.int64), np.full(n, INF, np.int64), np.empty(n, np.int32),
                np.empty(n, np.int32), np.empty(n, np.int32), np.zeros(levels + 1, np.int64))
               for _ in range(workers(n, threads, per_node=28))]
    stats, fail = in_chunks(_chunk, g, np.flatnonzero(level < levels), scratch, budget)
    if fail[0] >= 0:
        v, u, x, bound = (int(f) for f in fail)
        if x == -2:
            raise LoadError(path, gave_up(v, budget))
        raise LoadError(path, f"a shortcut is missing: the hierarchy's path {u} -> {v} -> {x} "
                              f"(node indexes; cost {bound:,}, around node {v} of level "
                              f"{int(level[v])}) has no way around it as short, so CH routes "
                              "and trees through it would be too long or unreachable")
    same, bad = _same_level(g, h.arc_tail, h.arc_head, h.arc_weight, h.num_original_arcs,
                            *scratch[0])
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
    level_first = np.zeros(h.num_levels + 2, np.int64)
    np.cumsum(np.bincount(level, minlength=h.num_levels + 1), out=level_first[1:])
    g = (level, h.num_levels, up_first, up_end, h.arc_weight[up_arc], down_first, down_end,
         h.arc_weight[down_arc], core_at, np.ascontiguousarray(h.core_dist), level_first,
         max(1, int(ups.max(initial=0))))
    return g, int(np.dot(ups, downs))


def _kind(mask: np.ndarray) -> np.ndarray:
    """int8: 0 where ``mask``, -1 elsewhere (arc_lists.grouped's kinds)."""
    return np.where(mask, np.int8(0), np.int8(-1))
