"""The shortcuts that contracting one node needs when arcs carry two weights.

Contracting x removes it from the remaining graph. A path u -> x -> w with length L
and cost C must stay represented: by a shortcut (u, w, L, C), unless a *witness*, a
u -> w path that avoids x and has length <= L and cost <= C, dominates it. Every
(length, cost) pair of an in-arc and an out-arc of x is a candidate, so a pair of
neighbours may get several parallel shortcuts (the Pareto set of its paths via x).

The witness search from u is a small bi-criteria label-setting search (labels leave
in order of length; a label is dominated when its node already settled one that
costs no more) over the remaining graph without x and the other nodes of the batch.
It stops after ``settle_limit`` labels: a witness it misses only adds a shortcut
that was not needed, never a wrong one.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.core.arrays import grow
from engine.core.heaps import pop, push

INF = np.iinfo(np.int64).max


@numba.njit(cache=True)
def _candidates(x, u, first_in_u, in_rows, out_rows, r_tail, r_head, r_l, r_c,
                cw, cl, cc, ca, cb):
    """The Pareto set, per out-neighbour w, of the paths u -> x -> w over x's in-arcs
    from u (``in_rows``, from ``first_in_u``) and its out-arcs; returns the count and
    the (possibly grown) buffers. ca/cb hold the two rows (remaining-graph arcs)."""
    k = 0
    for i in range(first_in_u, in_rows.size):
        a = in_rows[i]
        if r_tail[a] != u:
            continue
        for j in range(out_rows.size):
            b = out_rows[j]
            w = r_head[b]
            if w == u:
                continue
            length, cost = r_l[a] + r_l[b], r_c[a] + r_c[b]
            dominated = False
            for q in range(k):
                if cw[q] == w and cl[q] <= length and cc[q] <= cost:
                    dominated = True
                    break
            if dominated:
                continue
            kept = 0                       # drop the earlier candidates it dominates
            for q in range(k):
                if not (cw[q] == w and length <= cl[q] and cost <= cc[q]):
                    cw[kept], cl[kept], cc[kept], ca[kept], cb[kept] = cw[q], cl[q], cc[q], ca[q], cb[q]
                    kept += 1
            k = kept
            if k == cw.size:
                cw, cl, cc, ca, cb = grow(cw, k + 1), grow(cl, k + 1), grow(cc, k + 1), \
                    grow(ca, k + 1), grow(cb, k + 1)
            cw[k], cl[k], cc[k], ca[k], cb[k] = w, length, cost, a, b
            k += 1
    return k, cw, cl, cc, ca, cb


@numba.njit(cache=True)
def _witness(u, x, k, cw, cl, cc, alive, out_first, out_rows, r_head, r_l, r_c, blocked,
             settle_limit, settled_cost):
    """Marks alive[q] = False for each candidate q < k that a u -> cw[q] path avoiding
    x and the blocked nodes dominates. ``settled_cost`` (all INF) is left all INF."""
    max_l = max_c = 0
    left = 0
    for q in range(k):
        if alive[q]:
            left += 1
            max_l, max_c = max(max_l, cl[q]), max(max_c, cc[q])
    if left == 0:
        return
    cap = 64
    key, item = np.empty(cap, np.int64), np.empty(cap, np.int64)
    lab_node, lab_l, lab_c = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    touched = np.empty(cap, np.int64)
    lab_node[0], lab_l[0], lab_c[0] = u, 0, 0
    labels, size = 1, push(key, item, 0, 0, 0)
    ntouched = settled = 0
    while size > 0 and left > 0 and settled < settle_limit:
        _, e, size = pop(key, item, size)
        v, lv, cv = lab_node[e], lab_l[e], lab_c[e]
        if cv >= settled_cost[v]:
            continue
        if settled_cost[v] == INF:
            if ntouched == touched.size:
                touched = grow(touched, ntouched + 1)
            touched[ntouched] = v
            ntouched += 1
        settled_cost[v] = cv
        settled += 1
        for q in range(k):
            if alive[q] and cw[q] == v and lv <= cl[q] and cv <= cc[q]:
                alive[q] = False
                left -= 1
        for i in range(out_first[v], out_first[v + 1]):
            a = out_rows[i]
            y = r_head[a]
            if y == x or blocked[y]:
                continue
            nl, nc = lv + r_l[a], cv + r_c[a]
            if nl > max_l or nc > max_c or nc >= settled_cost[y]:
                continue
            if labels == lab_node.size:
                lab_node, lab_l, lab_c = grow(lab_node, labels + 1), grow(lab_l, labels + 1), \
                    grow(lab_c, labels + 1)
            if size == key.size:
                key, item = grow(key, size + 1), grow(item, size + 1)
            lab_node[labels], lab_l[labels], lab_c[labels] = y, nl, nc
            size = push(key, item, size, nl, labels)
            labels += 1
    for i in range(ntouched):
        settled_cost[touched[i]] = INF


@numba.njit(cache=True)
def node_shortcuts(x, out_first, out_rows, in_first, in_rows, r_tail, r_head, r_l, r_c,
                   blocked, settle_limit, settled_cost, into, start):
    """The shortcuts contracting x needs: their count, and, when ``into`` is not empty,
    each as a row (u, w, length, cost, in-arc row, out-arc row) of ``into`` from
    ``start`` on. ``in_rows``/``out_rows`` index the remaining graph's arcs (rows)."""
    ins = in_rows[in_first[x]:in_first[x + 1]]
    outs = out_rows[out_first[x]:out_first[x + 1]]
    cap = 16
    cw, cl, cc = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    ca, cb = np.empty(cap, np.int64), np.empty(cap, np.int64)
    alive = np.empty(cap, np.bool_)
    count = 0
    for i in range(ins.size):
        u = r_tail[ins[i]]
        seen = False
        for j in range(i):
            if r_tail[ins[j]] == u:
                seen = True
                break
        if seen:
            continue
        k, cw, cl, cc, ca, cb = _candidates(x, u, i, ins, outs, r_tail, r_head, r_l, r_c,
                                            cw, cl, cc, ca, cb)
        if alive.size < k:
            alive = np.empty(cw.size, np.bool_)
        alive[:k] = True
        _witness(u, x, k, cw, cl, cc, alive, out_first, out_rows, r_head, r_l, r_c, blocked,
                 settle_limit, settled_cost)
        for q in range(k):
            if alive[q]:
                if into.shape[0]:
                    r = start + count
                    into[r, 0], into[r, 1], into[r, 2] = u, cw[q], cl[q]
                    into[r, 3], into[r, 4], into[r, 5] = cc[q], ca[q], cb[q]
                count += 1
    return count
