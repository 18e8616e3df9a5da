"""The CRP query between different top cells, in two stages (Numba): first the source's
and the target's top cells, then an A* over the top level (issue #37).

On a large network the bidirectional search (search.py) spends most of its time in
the top level: until the searches meet it has no bound to prune with, and it scans
every top cell nearer than half the distance (4 M nodes: 53 % of the entries a query
scans). But the top level has exact lower bounds, bounds.py's ``to[T]``: the top-level
distance from any top arc to the target's top cell T. So:

1. **Inside.** The forward search explores the source's top cell S and stops at the
   arcs that leave it (*parked* with their cost); the backward search explores T and
   stops at the arcs that enter it. Both run to exhaustion: each cell's costs are
   then exact for paths that stay inside it. (These are the searches of search.py's
   ``_settle``, with the same levels, so the path unpacks as before.) Neither reads
   the other's costs, so they run side by side on two threads (each touches only its
   own column of the costs, records and heaps, and lists its arcs apart); the arcs
   both reached are met afterwards, in one scan.
2. **Across.** A forward A* over the top level from the parked arcs: every top cell,
   S and T included, is crossed by its top row (an entry to its exits), so it expands
   top arcs only. A path that ends at t enters T a last time and stays inside: it is
   counted when the A* reaches that entry, against stage 1's exact backward cost from
   there; a path through T (or back through S) leaves it again by an exit, which the
   cell's row reaches. Keys are cost + h, with h = the least over T's entry groups g
   of to[T, g][y] + (the least cost from an arc of g entering T to t) for a top arc y
   outside T (bounds.py: a group is the entries into one level-(top-1) subcell of T),
   and R + that least cost for an arc into T, where R is the least to[T] over T's
   exits (only a path that leaves T and comes back is left to count from there).
   Every h is a lower bound of what any path not yet counted still costs, so stopping
   when the least key is no less than the best path is exact; h is not consistent
   everywhere, and an arc whose cost drops after it was expanded is expanded again
   (the heap takes it back).

The A*'s steps are top-level shortcuts with the search's parents, so unpacking
(unpack.py) needs nothing new, except for a step out of S or T, where search.py's
free_level would pick a lower level: every step of the A* is stamped with the query's
number (bounds.py ``steps``) and unpack.search_steps takes a stamped one at the top
level. (Until the seventh session the A* went down into T and S as stage 1 does;
crossing them by their top rows took the A* 2.26 -> 1.97 ms median at 12 M, 2 cores,
its mean unchanged, 4.38 -> 4.32 ms.) A top cell's row is most of its work: the A*
keeps the top arcs' forward costs a second time, in the order of the top cells' exit
lists (bounds.py _top_exits), so a row compares its sums with one run of costs rather
than gathering them (12 M nodes, 2 cores, same pairs: 0.84x the A*'s median time and
0.76x its mean, stage 1 taking 0.97x; no change at 4 M, where the gathered costs
stayed in cache). The bound's slack is how much the cost from a group's entries to t differs:
on the generated 4 M-node network (car-fastest, turns) it expands 1,206 top arcs per
query (median) where one bound per cell (the least over all of T's entries) expanded
2,082, its search 3.99 against 5.29 ms; with that one bound the two stages took
4.51 ms against 5.26 ms for the bidirectional search (8 M: 5.96 against 7.75 ms;
section crp_query_scale of scripts/bench.py).
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from engine.crp.metric import FORBIDDEN
from engine.crp.query.search import _relax, _settle, start
from engine.core.heaps import (
    packed_forget as forget, packed_pop as pop, packed_push_or_decrease as push_or_decrease,
)

# exits a row tests at once in vector code before the scalar loop looks at them one by
# one: about 2.6 of a top row's ~550 exits improve (12 M nodes)
ROW_CHUNK = 32


def staged(sources, source_cost, targets, graph, cells, cs, ct, shortcuts, dist, rec, touched,
           nt_old, heaps, bounds, columns, back, side=None, ms=None):
    """As search.bidirectional (same arguments and results), for s and t in different
    top cells; ``back``: the backward search's own list of touched arcs (as long as
    ``touched``); ``side``: an executor (engine.core.cores.side_thread) whose thread
    runs the backward search of stage 1 while this one runs the forward (None: in turn).
    The two never read each other's costs, so the answer and the path are the same
    either way. ``ms``: a dict that gets each stage's milliseconds ("inside", "across")."""
    t0 = time.perf_counter()
    hf, hb = heaps
    top = bounds[5]
    S, T = cs[top], ct[top]
    nf, nb_, nt, best, meet = start(sources, source_cost, targets, dist, rec, heaps, touched,
                                    nt_old)
    # 1. inside S (forward) and inside T (backward), each to exhaustion, side by side
    backward = (1, T, graph, cells, cs, ct, shortcuts, dist, rec, back, 0, hb, nb_, best,
                bounds, columns)
    if side is None:
        nb_touched = _inside(*backward)
        nt = _inside(0, S, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, hf, nf, best,
                     bounds, columns)
    else:
        later = side.submit(_inside, *backward)
        nt = _inside(0, S, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, hf, nf, best,
                     bounds, columns)
        nb_touched = later.result()
    nt, best, meet = _merge(touched, nt, back, nb_touched, dist)
    t1 = time.perf_counter()
    # 2. across: the A* from the arcs that left S
    found = _across(graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, hf, best, meet,
                    bounds)
    if ms is not None:
        ms["inside"], ms["across"] = (t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3
    return found


@nb.njit(cache=True, _nrt=False, nogil=True)
def _inside(f, own, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, heap, size, best,
            bounds, columns):
    """One search to exhaustion inside its top cell ``own`` (f = 0: forward in S, the
    arcs that leave S parked; f = 1: backward in T, the arcs that enter T parked),
    listing the arcs it reaches first in ``touched`` from ``nt`` (returns the new
    count); parked arcs keep their cost, out of the heap. It reads only its own
    direction's costs (search._relax's solo), so the two can run at once."""
    top, arc_level = bounds[5], graph[6]
    ends = cells[1] if f == 0 else cells[2]           # head cells forward, tail cells back
    meet = -1
    while size > 0:
        x = heap[0] & 0xFFFFFFFF
        if arc_level[x] > top and ends[x, top, 0] != own:
            _, x, size = pop(heap, rec, 2 + f, size)
        else:
            size, nt, _, meet = _settle(f, graph, cells, cs, ct, shortcuts, dist, rec, touched,
                                        nt, heap, size, best, meet, bounds, 0, columns, True)
    return nt


@nb.njit(cache=True, _nrt=False)
def _merge(touched, nt, back, nb, dist):
    """The backward list appended to ``touched`` (minus the arcs the forward search
    listed: those it reached), then the best meeting over every arc both reached:
    (count, best, meeting arc)."""
    for i in range(nb):
        y = back[i]
        if dist[y, 0] == FORBIDDEN:
            touched[nt] = y
            nt += 1
    best, meet = FORBIDDEN, -1
    for i in range(nt):
        y = touched[i]
        if dist[y, 0] != FORBIDDEN and dist[y, 1] != FORBIDDEN:
            total = np.int64(dist[y, 0]) + np.int64(dist[y, 1])
            if total < best:
                best, meet = total, y
    return nt, best, meet


@nb.njit(cache=True, _nrt=False)
def _across(graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, hf, best, meet, bounds):
    """Stage 2: the A* from the arcs that left S, to (best, meeting arc, touched)."""
    top = bounds[5]
    S, T = cs[top], ct[top]
    head_rec, tail_rec, arc_level = cells[1], cells[2], graph[6]
    rest, leave_t = _rests(touched, nt, dist, arc_level, top, tail_rec, T, bounds, cells)
    if rest >= FORBIDDEN:              # nothing enters T from outside: best is final
        return best, meet, nt
    pos, fc = bounds[13], bounds[14]
    _top_costs(touched, nt, dist, pos, fc, True)
    nf = 0
    for i in range(nt):
        x = touched[i]
        if dist[x, 0] != FORBIDDEN and arc_level[x] > top and head_rec[x, top, 0] != S:
            key = dist[x, 0] + _h(x, bounds, rest, leave_t)
            if key < best:
                nf = push_or_decrease(hf, rec, 2, nf, key, x)
    while nf > 0 and (hf[0] >> 32) < best:
        _, x, nf = pop(hf, rec, 2, nf)
        nf, nt, best, meet = _expand(x, cells, shortcuts, dist, rec, touched, nt, hf, nf, best,
                                     meet, bounds, rest, leave_t)
    forget(hf, rec, 2, nf)
    _top_costs(touched, nt, dist, pos, fc, False)
    return best, meet, nt


@nb.njit(cache=True, _nrt=False)
def _top_costs(touched, nt, dist, pos, fc, fill):
    """Copy the listed top arcs' forward costs into the A*'s exit-list layout
    (bounds.py _top_exits), or (fill False) set them back to FORBIDDEN after it."""
    for i in range(nt):
        x = touched[i]
        if x < fc.size:                    # a top arc (query ids below the top's count)
            fc[pos[x]] = dist[x, 0] if fill else FORBIDDEN


@nb.njit(cache=True, _nrt=False)
def _rests(touched, nt, dist, arc_level, top, tail_rec, T, bounds, cells):
    """(the least cost from an arc entering T to t, the least to[T] over T's exits);
    bounds' group_rest (12) gets the least cost per entry group."""
    lb_t, group, rests = bounds[0], bounds[11], bounds[12]
    rests[:] = FORBIDDEN
    rest = FORBIDDEN
    for i in range(nt):
        x = touched[i]
        if dist[x, 1] < FORBIDDEN and arc_level[x] > top and tail_rec[x, top, 0] != T:
            rest = min(rest, dist[x, 1])
            rests[group[x]] = min(rests[group[x]], dist[x, 1])
    exit_first, exit_q = cells[5], cells[6]
    leave_t = FORBIDDEN
    for k in range(exit_first[T], exit_first[T + 1]):
        y = exit_q[k]
        if lb_t[y] >= 0:
            leave_t = min(leave_t, lb_t[y])
    return rest, leave_t


@nb.njit(cache=True, _nrt=False)
def _h(y, bounds, rest, leave_t):
    """A lower bound of what a path through top arc y not yet counted still costs: for
    an arc outside T the least over T's entry groups of (to[T, g] + the group's rest)."""
    v = bounds[0][y]
    if v < 0:                              # into T: leave it and come back
        return min(leave_t + rest, FORBIDDEN)
    table, rests = bounds[9], bounds[12]
    best = FORBIDDEN
    for g in range(rests.size):
        if rests[g] < FORBIDDEN and table[y, g] < FORBIDDEN:
            best = min(best, table[y, g] + rests[g])
    return best


@nb.njit(cache=True, _nrt=False)
def _expand(x, cells, shortcuts, dist, rec, touched, nt, heap, size, best, meet, bounds, rest,
            leave_t):
    """The A*'s expansion of top arc x: its head cell's top row, S and T included (a
    path through them from here leaves them again; one that ends at t is counted where
    it enters T, against stage 1's backward cost). Its exits' costs are read from the
    exit-ordered copy (bounds.py _top_exits); an exit reached at a lower cost is counted
    against the backward costs at once (search._relax), keyed cost + h, and stamped with
    the query's number: unpack.search_steps then takes the step as a top-level one."""
    head_rec, exit_first, exit_arc = cells[1], cells[5], cells[6]
    top, fc, first, stamps, query = bounds[5], bounds[14], bounds[15], bounds[16], bounds[17][0]
    d = np.int64(dist[x, 0])
    cb, base = head_rec[x, top, 0], head_rec[x, top, 1]
    lo = exit_first[cb]
    k0 = lo - first
    n = exit_first[cb + 1] - lo
    for c0 in range(0, n, ROW_CHUNK):
        c1 = min(c0 + ROW_CHUNK, n)
        if not _improves(shortcuts, base, fc, k0, d, best, c0, c1):
            continue
        for j in range(c0, c1):
            nd = d + shortcuts[base + j]
            if nd < fc[k0 + j] and nd < best:       # h only for an arc that improves
                y = exit_arc[lo + j]
                key = nd + _h(y, bounds, rest, leave_t)
                size, nt, best, meet = _relax(y, nd, key, x, 0, dist, rec, heap, size, touched,
                                              nt, best, meet, False)
                fc[k0 + j] = nd
                stamps[y] = query
    return size, nt, best, meet


@nb.njit(cache=True, _nrt=False, inline="always")
def _improves(shortcuts, base, fc, k0, d, best, lo, hi):
    """Whether an exit in [lo, hi) of the row at ``base`` improves: one pass without
    branches, its indices unsigned (no wraparound test), so LLVM makes it vector code."""
    hit = 0
    for j in range(lo, hi):
        nd = np.int64(shortcuts[np.uint64(base + j)]) + d
        hit |= (nd < fc[np.uint64(k0 + j)]) & (nd < best)
    return hit != 0
