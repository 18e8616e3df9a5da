"""The CRP query's search (Numba): bidirectional Dijkstra over arcs on the overlay.

A search state is an arc (its cost paid). At arc x the forward search uses the
highest query level l below ``arc_level[x]`` whose cell around x's head holds neither
the source nor the target, and relaxes that cell's shortcut row from x; where no
level qualifies it relaxes the turns out of x. The backward search does the same at
x's tail with the shortcut column. Both searches explore one graph: the turns of the
bottom cells holding s or t, and the matrices of the largest cells holding neither.
"""
from __future__ import annotations

import numba as nb

from engine.core.heaps import forget, pop_addressable, push_or_decrease
from engine.crp.metric import FORBIDDEN


# The heaps are addressable (engine.core.heaps): each arc is in one at most once, so
# it needs no more room than the arcs, and a better key moves the arc up. Helpers
# that take arrays and allocate nothing are compiled with _nrt=False: with Numba's
# reference counting, each call did an atomic incref/decref per array argument,
# inlined or not, which took 90% of the query's time.
@nb.njit(cache=True, _nrt=False)
def _free_level(x, arc_level, query_level, rec, cs, ct):
    """Highest query level < arc_level[x] whose cell around x (rec: x's head cell for
    the forward search, tail cell for the backward one) holds neither s nor t, or -1.
    x crosses every level below arc_level[x], so it has a row/column there."""
    for l in range(arc_level[x] - 1, -1, -1):
        if query_level[l]:
            c = rec[x, l, 0]
            if c != cs[l] and c != ct[l]:
                return l
    return -1


@nb.njit(cache=True, _nrt=False)
def clear(touched, n, df, db, pf, pb, lf, lb):
    """Forget the arcs a search touched (only those)."""
    for i in range(n):
        a = touched[i]
        df[a] = db[a] = FORBIDDEN
        pf[a] = pb[a] = -1
        lf[a] = lb[a] = -1


@nb.njit(cache=True, _nrt=False)
def _start(sources, source_cost, targets, df, db, pf, pb, touched, heaps):
    """Seed both heaps; returns (heap sizes, touched count, best, meet)."""
    hfd, hfv, posf, hbd, hbv, posb = heaps
    nf = nb_ = nt = 0
    for i in range(sources.size):
        a, w = sources[i], source_cost[i]
        if w != FORBIDDEN and w < df[a]:
            if df[a] == FORBIDDEN and db[a] == FORBIDDEN:
                touched[nt] = a
                nt += 1
            df[a] = w
            pf[a] = -1
            nf = push_or_decrease(hfd, hfv, posf, nf, w, a)
    for i in range(targets.size):
        a = targets[i]
        if db[a] > 0:
            if df[a] == FORBIDDEN and db[a] == FORBIDDEN:
                touched[nt] = a
                nt += 1
            db[a] = 0
            pb[a] = -1
            nb_ = push_or_decrease(hbd, hbv, posb, nb_, 0, a)
    best = FORBIDDEN
    meet = -1
    for i in range(sources.size):
        a = sources[i]
        if df[a] != FORBIDDEN and db[a] != FORBIDDEN and df[a] + db[a] < best:
            best = df[a] + db[a]
            meet = a
    return nf, nb_, nt, best, meet


@nb.njit(cache=True, _nrt=False)
def bidirectional(sources, source_cost, targets, graph, cells, cs, ct, shortcuts, state,
                  touched, nt_old, heaps):
    """Best cost and meeting arc (-1 when none), and how many arcs the search touched
    (listed in ``touched``; they are cleared at the next search's start, from nt_old);
    the heaps are left empty. graph: the turns both ways; cells: the overlay's arrays."""
    df, db, pf, pb, lf, lb = state
    hfd, hfv, posf, hbd, hbv, posb = heaps
    clear(touched, nt_old, df, db, pf, pb, lf, lb)
    nf, nb_, nt, best, meet = _start(sources, source_cost, targets, df, db, pf, pb, touched, heaps)
    while nf > 0 or nb_ > 0:
        kf = hfd[0] if nf > 0 else FORBIDDEN
        kb = hbd[0] if nb_ > 0 else FORBIDDEN
        if min(kf, kb) >= FORBIDDEN or kf + kb >= best:
            break
        if kf <= kb:
            nf, nt, best, meet = _settle(True, graph, cells, cs, ct, shortcuts, state, touched,
                                         nt, heaps, nf, best, meet)
        else:
            nb_, nt, best, meet = _settle(False, graph, cells, cs, ct, shortcuts, state, touched,
                                          nt, heaps, nb_, best, meet)
    forget(hfv, posf, nf)
    forget(hbv, posb, nb_)
    return best, meet, nt


@nb.njit(cache=True, _nrt=False)
def _settle(forward, graph, cells, cs, ct, shortcuts, state, touched, nt, heaps, size, best,
            meet):
    """Settle the top arc x of one search's heap. Forward: x's head cell's row from x,
    or the turns out of x; backward: x's tail cell's column into x, or the turns into
    x. (A cell's matrix is row-major: a row is contiguous, a column steps by its
    exits.)"""
    first_turn, to_arc, first_turn_in, turn_in, from_arc, turn_weight, arc_level = graph
    query_level, head_rec, tail_rec, entry_first, entry_arc, exit_first, exit_arc = cells
    df, db, pf, pb, lf, lb = state
    if forward:
        rec, ends_first, ends, first, turn_end = head_rec, exit_first, exit_arc, first_turn, to_arc
        dist, parent, plevel, other = df, pf, lf, db
        hd, hv, pos = heaps[0], heaps[1], heaps[2]
    else:
        rec, ends_first, ends, first, turn_end = tail_rec, entry_first, entry_arc, first_turn_in, \
            from_arc
        dist, parent, plevel, other = db, pb, lb, df
        hd, hv, pos = heaps[3], heaps[4], heaps[5]
    d, x, size = pop_addressable(hd, hv, pos, size)
    l = _free_level(x, arc_level, query_level, rec, cs, ct)
    if l >= 0:
        cb, base = rec[x, l, 0], rec[x, l, 1]
        step = 1 if forward else exit_first[cb + 1] - exit_first[cb]
        lo = ends_first[cb]
        for j in range(ends_first[cb + 1] - lo):
            nd = d + shortcuts[base + j * step]
            if nd < best:
                size, nt, best, meet = _relax(ends[lo + j], nd, x, l, dist, parent, plevel, other,
                                              hd, hv, pos, size, touched, nt, best, meet)
    else:
        for k in range(first[x], first[x + 1]):
            t = k if forward else turn_in[k]
            nd = d + turn_weight[t]
            if nd < best:
                size, nt, best, meet = _relax(turn_end[t], nd, x, -1, dist, parent, plevel, other,
                                              hd, hv, pos, size, touched, nt, best, meet)
    return size, nt, best, meet


@nb.njit(cache=True, _nrt=False)
def _relax(y, nd, x, level, dist, parent, plevel, other, hd, hv, pos, size, touched, nt, best, meet):
    """Callers pass only nd < best: nothing reached at best or more can improve on it
    (costs are >= 0), and best <= FORBIDDEN, so that test drops forbidden moves too."""
    if nd < dist[y]:
        if dist[y] == FORBIDDEN and other[y] == FORBIDDEN:
            touched[nt] = y
            nt += 1
        dist[y] = nd
        parent[y] = x
        plevel[y] = level
        size = push_or_decrease(hd, hv, pos, size, nd, y)
        if other[y] != FORBIDDEN and nd + other[y] < best:
            best = nd + other[y]
            meet = y
    return size, nt, best, meet
