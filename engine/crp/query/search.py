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

from engine.crp.customization.cpu import FORBIDDEN


# An indexed binary heap of arcs (key, arc, pos[arc]): each arc is in it at most once,
# so it needs no more room than the arcs, and a better key moves the arc up.
# Helpers that take arrays and allocate nothing are compiled with _nrt=False: with
# Numba's reference counting, each call did an atomic incref/decref per array
# argument, inlined or not, which took 90% of the query's time.
@nb.njit(cache=True, _nrt=False)
def _sift_up(hk, ha, pos, i, key, a):
    """Place (key, a) at or above slot i: parents move down into the hole."""
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] <= key:
            break
        hk[i] = hk[p]
        ha[i] = ha[p]
        pos[ha[i]] = i
        i = p
    hk[i] = key
    ha[i] = a
    pos[a] = i


@nb.njit(cache=True, _nrt=False)
def _push(hk, ha, pos, size, key, a):
    """Insert arc a with ``key`` or lower its key; returns the new size."""
    i = pos[a]
    if i < 0:
        i = size
        size += 1
    _sift_up(hk, ha, pos, i, key, a)
    return size


@nb.njit(cache=True, _nrt=False)
def _pop(hk, ha, pos, size):
    """The top (key, arc) and the new size; the last entry sinks from the root's hole."""
    key, a = hk[0], ha[0]
    pos[a] = -1
    size -= 1
    if size > 0:
        k, b = hk[size], ha[size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and hk[c + 1] < hk[c]:
                c += 1
            if hk[c] >= k:
                break
            hk[i] = hk[c]
            ha[i] = ha[c]
            pos[ha[i]] = i
            i = c
        hk[i] = k
        ha[i] = b
        pos[b] = i
    return key, a, size


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
            nf = _push(hfd, hfv, posf, nf, w, a)
    for i in range(targets.size):
        a = targets[i]
        if db[a] > 0:
            if df[a] == FORBIDDEN and db[a] == FORBIDDEN:
                touched[nt] = a
                nt += 1
            db[a] = 0
            pb[a] = -1
            nb_ = _push(hbd, hbv, posb, nb_, 0, a)
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
            nf, nt, best, meet = _forward(graph, cells, cs, ct, shortcuts, state, touched, nt,
                                          heaps, nf, best, meet)
        else:
            nb_, nt, best, meet = _backward(graph, cells, cs, ct, shortcuts, state, touched, nt,
                                            heaps, nb_, best, meet)
    for i in range(nf):
        posf[hfv[i]] = -1
    for i in range(nb_):
        posb[hbv[i]] = -1
    return best, meet, nt


@nb.njit(cache=True, _nrt=False)
def _forward(graph, cells, cs, ct, shortcuts, state, touched, nt, heaps, nf, best, meet):
    """Settle the forward heap's top arc x: its cell's row from x, or its turns."""
    first_turn, to_arc, _, _, _, turn_weight, arc_level = graph
    query_level, head_rec, _, _, _, exit_first, exit_arc = cells
    df, db, pf, _, lf, _ = state
    hd, hv, pos = heaps[0], heaps[1], heaps[2]
    d, x, nf = _pop(hd, hv, pos, nf)
    l = _free_level(x, arc_level, query_level, head_rec, cs, ct)
    if l >= 0:
        cb, row = head_rec[x, l, 0], head_rec[x, l, 1]
        lo = exit_first[cb]
        for j in range(exit_first[cb + 1] - lo):
            nd = d + shortcuts[row + j]
            if nd < best:
                nf, nt, best, meet = _relax(exit_arc[lo + j], nd, x, l, df, pf, lf, db,
                                            hd, hv, pos, nf, touched, nt, best, meet)
    else:
        for t in range(first_turn[x], first_turn[x + 1]):
            nd = d + turn_weight[t]
            if nd < best:
                nf, nt, best, meet = _relax(to_arc[t], nd, x, -1, df, pf, lf, db,
                                            hd, hv, pos, nf, touched, nt, best, meet)
    return nf, nt, best, meet


@nb.njit(cache=True, _nrt=False)
def _backward(graph, cells, cs, ct, shortcuts, state, touched, nt, heaps, nb_, best, meet):
    """Settle the backward heap's top arc x: its cell's column into x, or turns into x."""
    _, _, first_turn_in, turn_in, from_arc, turn_weight, arc_level = graph
    query_level, _, tail_rec, entry_first, entry_arc, exit_first, _ = cells
    df, db, _, pb, _, lb = state
    hd, hv, pos = heaps[3], heaps[4], heaps[5]
    d, x, nb_ = _pop(hd, hv, pos, nb_)
    l = _free_level(x, arc_level, query_level, tail_rec, cs, ct)
    if l >= 0:
        cb, col = tail_rec[x, l, 0], tail_rec[x, l, 1]
        nx = exit_first[cb + 1] - exit_first[cb]
        lo = entry_first[cb]
        for r in range(entry_first[cb + 1] - lo):
            nd = d + shortcuts[col + r * nx]
            if nd < best:
                nb_, nt, best, meet = _relax(entry_arc[lo + r], nd, x, l, db, pb, lb, df,
                                             hd, hv, pos, nb_, touched, nt, best, meet)
    else:
        for k in range(first_turn_in[x], first_turn_in[x + 1]):
            t = turn_in[k]
            nd = d + turn_weight[t]
            if nd < best:
                nb_, nt, best, meet = _relax(from_arc[t], nd, x, -1, db, pb, lb, df,
                                             hd, hv, pos, nb_, touched, nt, best, meet)
    return nb_, nt, best, meet


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
        size = _push(hd, hv, pos, size, nd, y)
        if other[y] != FORBIDDEN and nd + other[y] < best:
            best = nd + other[y]
            meet = y
    return size, nt, best, meet
