"""The CRP query's search (Numba): bidirectional Dijkstra over arcs on the overlay.

A search state is an arc (its cost paid). At arc x the forward search uses the
highest query level l below ``arc_level[x]`` whose cell around x's head holds neither
the source nor the target, and relaxes that cell's shortcut row from x; where no
level qualifies it relaxes the turns out of x. The backward search does the same at
x's tail with the shortcut column. Both searches explore one graph: the turns of the
bottom cells holding s or t, and the matrices of the largest cells holding neither.

State: ``dist[a] = (df, db)`` (int32; a relaxation compares against it, so it is
kept dense: a cell's exits share few lines) and ``rec[a] = (pf, pb, slot_f,
slot_b)`` (parents and heap slots, read only when a cost improves); a step's level
is not stored but recomputed from its parent (search_steps in unpack.py). Only the
arcs a search touched are reset, at the next search's start.

Pruning (bounds.py): an arc y reached at cost nd is dropped, and a settled arc is
not expanded, when nd plus a lower bound of the rest is no less than the best path
found: the top-level distance from y to the target's top cell (or from the source's
top cell to y) plus the least cost between that cell's boundary and the target (the
backward search's key until it settles its first arc there, then that arc's cost).
Exact: every arc of a cheaper path passes that test.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from engine.crp.metric import FORBIDDEN
from engine.crp.query.bounds import top_upper
from engine.core.heaps import (
    packed_forget as forget, packed_pop as pop, packed_push_or_decrease as push_or_decrease,
)


@nb.njit(cache=True, _nrt=False)
def free_level(x, arc_level, query_level, xrec, cs, ct):
    """Highest query level < arc_level[x] whose cell around x (xrec: x's head cell for
    the forward search, tail cell for the backward one) holds neither s nor t, or -1.
    x crosses every level below arc_level[x], so it has a row/column there."""
    for l in range(arc_level[x] - 1, -1, -1):
        if query_level[l]:
            c = xrec[x, l, 0]
            if c != cs[l] and c != ct[l]:
                return l
    return -1


@nb.njit(cache=True, _nrt=False)
def clear(touched, n, dist, rec):
    """Forget the arcs a search touched (only those; heap slots are already -1)."""
    for i in range(n):
        a = touched[i]
        dist[a, 0] = dist[a, 1] = FORBIDDEN
        rec[a, 0] = rec[a, 1] = -1


@nb.njit(cache=True, _nrt=False)
def _seed(arcs, cost, f, dist, rec, heap, touched, nt):
    """Seed one direction (f: 0 forward, 1 backward); returns (heap size, touched)."""
    size = 0
    for i in range(arcs.size):
        a, w = arcs[i], cost[i] if f == 0 else 0
        if w != FORBIDDEN and w < dist[a, f]:
            if dist[a, 0] == FORBIDDEN and dist[a, 1] == FORBIDDEN:
                touched[nt] = a
                nt += 1
            dist[a, f] = w
            size = push_or_decrease(heap, rec, 2 + f, size, w, a)
    return size, nt


@nb.njit(cache=True, _nrt=False)
def start(sources, source_cost, targets, dist, rec, heaps, touched, nt_old):
    """Forget the last search and seed both directions: (forward heap size, backward
    heap size, touched, best, meeting arc), a source arc that is also a target met."""
    clear(touched, nt_old, dist, rec)
    nf, nt = _seed(sources, source_cost, 0, dist, rec, heaps[0], touched, 0)
    nb_, nt = _seed(targets, source_cost, 1, dist, rec, heaps[1], touched, nt)
    best, meet = FORBIDDEN, -1
    for i in range(sources.size):
        a = sources[i]
        if dist[a, 0] != FORBIDDEN and dist[a, 1] != FORBIDDEN and dist[a, 0] + dist[a, 1] < best:
            best, meet = dist[a, 0] + dist[a, 1], a
    return nf, nb_, nt, best, meet


@nb.njit(cache=True, _nrt=False)
def bidirectional(sources, source_cost, targets, graph, cells, cs, ct, shortcuts, dist, rec,
                  touched, nt_old, heaps, bounds, columns):
    """Best cost and meeting arc (-1 when none), and how many arcs the search touched
    (listed in ``touched``; they are cleared at the next search's start, from nt_old);
    the heaps are left empty. graph: the turns both ways; cells: the overlay's arrays;
    bounds: (lower bounds to t, from s, per top cell to t, from s, top cell of a cell,
    the top level, top_upper's scratch); columns: (the matrices column-major, a
    stamp per cell once its columns are filled, clique_first, the caller's stamp),
    see _column."""
    hf, hb = heaps
    nf, nb_, nt, best, meet = start(sources, source_cost, targets, dist, rec, heaps, touched,
                                    nt_old)
    lb_t, lb_s = bounds[0], bounds[1]
    btop = lb_t.size
    near_t = near_s = -1      # cost from the target's top cell's nearest entry to t, once known
    settled, next_upper = 0, 0
    while nf > 0 or nb_ > 0:
        kf = hf[0] >> 32 if nf > 0 else FORBIDDEN
        kb = hb[0] >> 32 if nb_ > 0 else FORBIDDEN
        if min(kf, kb) >= FORBIDDEN or kf + kb >= best:
            break
        settled += 1
        if near_s >= 0 and near_t >= 0 and settled >= next_upper:
            # both searches reached their top cell's boundary: an upper bound from the
            # top level (bounds.top_upper), again at doubling counts as they grow, each
            # settling at most an eighth as many arcs as the search did (with few top
            # cells it rarely helps: 8 on 1 M nodes, and costs ~15% more scans). A
            # bound U allows best = U + 1 with no meeting yet: the optimum, <= U, is
            # still found (only what cannot beat best is pruned)
            upper = top_upper(dist, touched, nt, cells[1], cells[5], cells[6], shortcuts, bounds,
                              cs, ct, best - 1, settled // 8 + 16)
            best = min(best, upper + 1)
            next_upper = 2 * settled
        if kf <= kb:
            x = hf[0] & 0xFFFFFFFF        # the first exit of s's top cell settled is the nearest
            if near_s < 0 and x < btop and lb_s[x] < 0:
                near_s = kf
            nf, nt, best, meet = _settle(0, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt,
                                         hf, nf, best, meet, bounds, near_t if near_t >= 0 else kb,
                                         columns, False)
        else:
            x = hb[0] & 0xFFFFFFFF
            if near_t < 0 and x < btop and lb_t[x] < 0:
                near_t = kb
            nb_, nt, best, meet = _settle(1, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt,
                                          hb, nb_, best, meet, bounds, near_s if near_s >= 0 else kf,
                                          columns, False)
    forget(hf, rec, 2, nf)
    forget(hb, rec, 3, nb_)
    return best, meet, nt


@nb.njit(cache=True, _nrt=False)
def _settle(f, graph, cells, cs, ct, shortcuts, dist, rec, touched, nt, heap, size, best, meet,
            bounds, rest, columns, solo):
    """Settle the top arc x of one search's heap (f: 0 forward, 1 backward). Forward:
    x's head cell's row from x, or the turns out of x; backward: x's tail cell's
    column into x (from the column-major copy: _column), or the turns into x.
    ``rest``: a lower bound of the cost between the far end's top cell boundary and
    the far end (the other side's key until it settles its first arc there); ``solo``:
    see _relax."""
    first_turn, to_arc, first_turn_in, turn_in, from_arc, turn_weight, arc_level = graph
    query_level, head_rec, tail_rec, entry_first, entry_arc, exit_first, exit_arc = cells
    lb_t, lb_s, cell_lb_t, cell_lb_s, top_of_cell = bounds[0], bounds[1], bounds[2], bounds[3], \
        bounds[4]
    if f == 0:
        xrec, ends_first, ends, first, turn_end = head_rec, exit_first, exit_arc, first_turn, to_arc
        lbv, cell_lb = lb_t, cell_lb_t
    else:
        xrec, ends_first, ends, first, turn_end = tail_rec, entry_first, entry_arc, \
            first_turn_in, from_arc
        lbv, cell_lb = lb_s, cell_lb_s
    d, x, size = pop(heap, rec, 2 + f, size)
    l = free_level(x, arc_level, query_level, xrec, cs, ct)
    if l >= 0:
        cb, base = xrec[x, l, 0], xrec[x, l, 1]
        mat = shortcuts
        if f == 1:
            mat, base = _column(cb, base, shortcuts, entry_first, exit_first, columns)
        lo = ends_first[cb]
        lbx = cell_lb[top_of_cell[cb]]       # bound for ends inside the same top cell
        btop = lbv.size                       # ends below it cross the top level
        v = lbv[x] if x < btop else lbx      # -1: inside the far end's top cell
        if v >= 0 and d + v + rest >= best:
            return size, nt, best, meet       # reached before best fell: nothing to gain
        for j in range(ends_first[cb + 1] - lo):
            nd = d + mat[base + j]
            if nd < best:
                y = ends[lo + j]
                v = lbv[y] if y < btop else lbx
                if v < 0 or nd + v + rest < best:
                    size, nt, best, meet = _relax(y, nd, nd, x, f, dist, rec, heap, size, touched, nt,
                                                  best, meet, solo)
    else:
        for k in range(first[x], first[x + 1]):
            t = k if f == 0 else turn_in[k]
            nd = d + turn_weight[t]
            if nd < best:
                size, nt, best, meet = _relax(turn_end[t], nd, nd, x, f, dist, rec, heap, size, touched,
                                              nt, best, meet, solo)
    return size, nt, best, meet


@nb.njit(cache=True, _nrt=False)
def _column(cb, base, shortcuts, entry_first, exit_first, columns):
    """Cell cb's column that starts at ``base`` in the row-major matrices (entries x
    exits), as (the column-major copy, where that column starts in it). Read in
    place, a column steps by the exit count: one cache line per value in a large
    cell (~16% of a query's time on 1 M nodes; more as cells grow). The copy is
    filled cell by cell the first time a search reads the cell, and made anew with
    each metric (its pages are touched only for the cells it fills).

    Unpacking fills it from several threads at once (lanes.py), so each cell's stamp
    says who filled it: phase x 8 + lane (lanes.column_stamp; columns[3][0] is the
    caller's). A cell filled in an earlier phase is read as it is (those threads were
    joined since); one stamped by another lane of this phase may still be being written,
    so the caller fills it itself (the same values) and reads its own writes. That
    needs no atomics and holds on any processor."""
    col, filled, clique_first, me = columns[0], columns[1], columns[2], columns[3][0]
    c0 = clique_first[cb]
    ne = entry_first[cb + 1] - entry_first[cb]
    f = filled[cb]
    if f == 0 or (f >> 3 == me >> 3 and f != me):
        nx = exit_first[cb + 1] - exit_first[cb]
        for i in range(ne):
            for j in range(nx):
                col[c0 + j * ne + i] = shortcuts[c0 + i * nx + j]
        filled[cb] = me
    return col, c0 + (base - c0) * ne


@nb.njit(cache=True, _nrt=False)
def _relax(y, nd, key, x, f, dist, rec, heap, size, touched, nt, best, meet, solo):
    """Arc y reached at cost nd from x, queued with ``key`` (nd for Dijkstra, nd plus a
    lower bound for staged.py's A*) unless that cannot beat the best path. Callers pass
    only nd < best: nothing reached at best or more can improve on it (costs are >= 0),
    and best <= FORBIDDEN, so that test drops forbidden moves too. ``solo``: the other
    direction runs at the same time (staged.py), so its costs are not read: y is listed
    when this direction first reaches it, and meetings are found afterwards."""
    if nd < dist[y, f]:
        other = FORBIDDEN if solo else dist[y, 1 - f]
        if other == FORBIDDEN and dist[y, f] == FORBIDDEN:
            touched[nt] = y
            nt += 1
        dist[y, f] = nd
        rec[y, f] = x
        if key < best:
            size = push_or_decrease(heap, rec, 2 + f, size, key, y)
        if other != FORBIDDEN and nd + other < best:
            best = nd + other
            meet = y
    return size, nt, best, meet


@nb.njit(cache=True)
def reaches(sources, source_cost, targets, first_turn, to_arc, turn_weight) -> bool:
    """Whether a target arc can be reached from a seeded source arc by allowed turns,
    costs aside (a depth-first walk). After a search found nothing, True means the
    cheapest path costs FORBIDDEN or more: an overflow, not an unreachable target."""
    m = first_turn.size - 1
    seen = np.zeros(m, dtype=np.uint8)
    goal = np.zeros(m, dtype=np.uint8)
    for i in range(targets.size):
        goal[targets[i]] = 1
    stack = np.empty(m, dtype=np.int64)
    top = 0
    for i in range(sources.size):
        a = sources[i]
        if source_cost[i] != FORBIDDEN and not seen[a]:
            seen[a] = 1
            stack[top] = a
            top += 1
    while top > 0:
        top -= 1
        x = stack[top]
        if goal[x]:
            return True
        for t in range(first_turn[x], first_turn[x + 1]):
            y = to_arc[t]
            if turn_weight[t] != FORBIDDEN and not seen[y]:
                seen[y] = 1
                stack[top] = y
                top += 1
    return False
