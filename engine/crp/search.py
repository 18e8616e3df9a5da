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
import numpy as np

from engine.crp.local_search import FORBIDDEN


# An indexed binary heap of arcs (key, arc, pos[arc]): each arc is in it at most once,
# so it needs no more room than the arcs, and a better key moves the arc up.
# Helpers that take arrays and allocate nothing are compiled with _nrt=False: with
# Numba's reference counting, each call did an atomic incref/decref per array
# argument, inlined or not, which took 90% of the query's time.
@nb.njit(cache=True, _nrt=False)
def _sift_up(hk, ha, pos, i):
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] <= hk[i]:
            break
        hk[p], hk[i] = hk[i], hk[p]
        ha[p], ha[i] = ha[i], ha[p]
        pos[ha[i]] = i
        i = p
    pos[ha[i]] = i


@nb.njit(cache=True, _nrt=False)
def _push(hk, ha, pos, size, key, a):
    """Insert arc a with ``key`` or lower its key; returns the new size."""
    i = pos[a]
    if i < 0:
        i = size
        size += 1
        ha[i] = a
    hk[i] = key
    _sift_up(hk, ha, pos, i)
    return size


@nb.njit(cache=True, _nrt=False)
def _pop(hk, ha, pos, size):
    key, a = hk[0], ha[0]
    pos[a] = -1
    size -= 1
    if size > 0:
        hk[0], ha[0] = hk[size], ha[size]
        i = 0
        while True:
            left, smallest = 2 * i + 1, i
            if left < size and hk[left] < hk[smallest]:
                smallest = left
            if left + 1 < size and hk[left + 1] < hk[smallest]:
                smallest = left + 1
            if smallest == i:
                break
            hk[smallest], hk[i] = hk[i], hk[smallest]
            ha[smallest], ha[i] = ha[i], ha[smallest]
            pos[ha[i]] = i
            i = smallest
        pos[ha[i]] = i
    return key, a, size


@nb.njit(cache=True, _nrt=False)
def _free_level(x, node, arc_level, query_level, cells, cs, ct, a2b, rows):
    """Highest query level < arc_level[x] whose cell of ``node`` holds neither s nor t
    and where x has a row/column (boundary), or -1."""
    for l in range(arc_level[x] - 1, -1, -1):
        if query_level[l]:
            c = cells[l, node]
            if c != cs[l] and c != ct[l] and rows[l, a2b[x]] >= 0:
                return l
    return -1


@nb.njit(cache=True, _nrt=False)
def bidirectional(sources, source_cost, targets, first_turn, to_arc, first_turn_in, turn_in,
                  from_arc, turn_weight, head, tail, arc_level, query_level, cells, cs, ct, a2b,
                  cell_base, entry_first, entry_arc, exit_first, exit_arc, clique_first,
                  entry_row, exit_col, shortcuts, df, db, pf, pb, lf, lb, touched, heaps):
    """Best cost and meeting arc (-1 when none). State arrays are reset by the caller
    for the ``touched`` arcs (returned count); the heaps are left empty."""
    hfd, hfv, posf, hbd, hbv, posb = heaps
    nf = nb_ = 0
    nt = 0
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
    while nf > 0 or nb_ > 0:
        kf = hfd[0] if nf > 0 else FORBIDDEN
        kb = hbd[0] if nb_ > 0 else FORBIDDEN
        if min(kf, kb) >= FORBIDDEN or kf + kb >= best:
            break
        if kf <= kb:
            d, x, nf = _pop(hfd, hfv, posf, nf)
            if d > df[x]:
                continue
            l = _free_level(x, head[x], arc_level, query_level, cells, cs, ct, a2b, entry_row)
            if l >= 0:
                c = cells[l, head[x]]
                cb = cell_base[l] + c
                nx = exit_first[cb + 1] - exit_first[cb]
                row = clique_first[cb] + entry_row[l, a2b[x]] * nx
                for j in range(nx):
                    w = shortcuts[row + j]
                    if w != FORBIDDEN:
                        nf, nt, best, meet = _relax(exit_arc[exit_first[cb] + j], d + w, x, l,
                                                    df, pf, lf, db, hfd, hfv, posf, nf, touched, nt, best, meet)
            else:
                for t in range(first_turn[x], first_turn[x + 1]):
                    w = turn_weight[t]
                    if w != FORBIDDEN:
                        nf, nt, best, meet = _relax(to_arc[t], d + w, x, -1,
                                                    df, pf, lf, db, hfd, hfv, posf, nf, touched, nt, best, meet)
        else:
            d, x, nb_ = _pop(hbd, hbv, posb, nb_)
            if d > db[x]:
                continue
            l = _free_level(x, tail[x], arc_level, query_level, cells, cs, ct, a2b, exit_col)
            if l >= 0:
                c = cells[l, tail[x]]
                cb = cell_base[l] + c
                nx = exit_first[cb + 1] - exit_first[cb]
                col = clique_first[cb] + exit_col[l, a2b[x]]
                for r in range(entry_first[cb + 1] - entry_first[cb]):
                    w = shortcuts[col + r * nx]
                    if w != FORBIDDEN:
                        nb_, nt, best, meet = _relax(entry_arc[entry_first[cb] + r], d + w, x, l,
                                                     db, pb, lb, df, hbd, hbv, posb, nb_, touched, nt, best, meet)
            else:
                for k in range(first_turn_in[x], first_turn_in[x + 1]):
                    t = turn_in[k]
                    w = turn_weight[t]
                    if w != FORBIDDEN:
                        nb_, nt, best, meet = _relax(from_arc[t], d + w, x, -1,
                                                     db, pb, lb, df, hbd, hbv, posb, nb_, touched, nt, best, meet)
    for i in range(nf):
        posf[hfv[i]] = -1
    for i in range(nb_):
        posb[hbv[i]] = -1
    return best, meet, nt


@nb.njit(cache=True, _nrt=False)
def _relax(y, nd, x, level, dist, parent, plevel, other, hd, hv, pos, size, touched, nt, best, meet):
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
