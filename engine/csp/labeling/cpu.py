"""Exact label-setting for cost-budgeted paths on the CPU (Numba), with the bounds.

A label is (node, length l, cost c, parent label, arc). Labels leave the heap in
order of l + lb_l(node) (A*: lb_l is the exact length to the target, so it is
consistent), ties by cost. So at any node the labels settle in non-decreasing
length, and a new label is dominated exactly when some settled label there costs no
more: one number per node (the least settled cost) replaces Vine's label lists.

Pruning, counted apart:
- cost bound: c + lb_c(node) > budget (no way to finish within the budget);
- length bound: l + lb_l(node) >= the incumbent (a feasible path found before);
- dominance: c >= the least settled cost at the node.
The first label settled at the target is optimal. Without bounds (``lb`` all zero:
"Vine-style") the same code is a plain bi-criteria label-setting search.

With a Lagrangian bound (engine/csp/bounds/lagrangian.py: ``lag_q`` > 0) a label is also
pruned when q*l + p*c + d(node) - p*budget passes q*incumbent (or q*upper, the length
of a path LARAC found), counted as a length-bound prune and, apart, as Lagrangian.

Pareto mode keeps going after the first target label: target labels settle in
increasing length, and each that costs less than every earlier one is a new
non-dominated point; a label is pruned when c + lb_c(node) cannot beat the cheapest
target label so far.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.core.arrays import grow
from engine.core.heaps import pop, push

INF = np.iinfo(np.int64).max
STATS = ("created", "settled", "pruned_cost_bound", "pruned_length_bound", "pruned_dominated",
         "pruned_lagrangian")   # the last: of pruned_length_bound, those by the Lagrangian bound
HISTORY = ("settled", "frontier") + STATS[2:5] + ("created",)   # one row per HISTORY_EVERY settled
HISTORY_EVERY = 64


@numba.njit(cache=True, inline="always")
def _lagrange_prunes(lag_d, lag_p, lag_q, lag_upper, incumbent, budget, w, nl, nc):
    """The Lagrangian test (engine.csp.bounds.lagrangian): q*l + p*c + d(w) - p*budget past
    q*incumbent (a path found) or q*upper (LARAC's path, ties kept)."""
    cut = lag_q * lag_upper if incumbent == INF else min(lag_q * lag_upper, lag_q * incumbent - 1)
    return lag_d[w] == INF or lag_q * nl + lag_p * nc + lag_d[w] - lag_p * budget > cut


@numba.njit(cache=True)
def _grow_all(k, lab, hkey, hitem):
    """The labels (node, l, c, parent, arc) and the heap with room for ``k`` entries."""
    return (grow(lab[0], k), grow(lab[1], k), grow(lab[2], k), grow(lab[3], k),
            grow(lab[4], k)), grow(hkey, k), grow(hitem, k)


@numba.njit(cache=True)
def _record(history, rows, stats, frontier, last=False):
    """One HISTORY row (the counts so far) while there is room, the last slot kept for
    the ``last`` row, so that even a short search charts its course; the rows written."""
    if rows < history.shape[0] - 1 or (last and rows < history.shape[0]):
        history[rows, 0], history[rows, 1] = stats[1], frontier
        history[rows, 2], history[rows, 3] = stats[2], stats[3]
        history[rows, 4], history[rows, 5] = stats[4], stats[0]
        rows += 1
    return rows


@numba.njit(cache=True)
def label_search(first_out, head, length, cost, source, target, budget, lb_l, lb_c,
                 cost_along, length_along, complete, pareto, max_labels, stats, history,
                 lag_d, lag_p, lag_q, lag_upper):
    """Labels (node, l, c, parent, arc) and the answer: ``found`` label indices and
    how each ends (``completion``: 0 at the target, 1 + the shortest path from its
    node, 2 + the least-cost path from its node; -1 none). ``cost_along`` /
    ``length_along``: the cost of the shortest path and the length of the least-cost
    path from each node to the target (engine.csp.bounds.cpu), used when ``complete``
    (not in Pareto mode, nor without bounds). Also the rows written to ``history``
    and whether ``max_labels`` was hit. ``lag_d, lag_p, lag_q, lag_upper``: the
    Lagrangian bound (engine.csp.bounds.lagrangian; ``lag_q`` 0: none). The heap
    holds label indices keyed by (l + lb_l(node), c)."""
    cap = 1024
    lab = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
           np.empty(cap, np.int64), np.empty(cap, np.int64))
    hkey, hitem = np.empty((cap, 2), np.int64), np.empty(cap, np.int64)
    settled_cost = np.full(lb_l.size, INF, np.int64)
    found = np.empty(64, np.int64)
    nfound, completion = 0, -1
    target_cost = budget + 1 if budget >= 0 else INF     # target labels must cost less
    lab[0][0], lab[1][0], lab[2][0], lab[3][0], lab[4][0] = source, 0, 0, -1, -1
    incumbent, best = INF, -1       # a feasible length: label ``best`` + its least-cost path
    if complete and lb_c[source] < target_cost:
        incumbent, best = length_along[source], 0
    count, size = 1, push(hkey, hitem, 0, (lb_l[source], 0), 0)
    stats[0] += 1
    overflow = False
    rows = 0
    while size > 0:
        key, x, size = pop(hkey, hitem, size)
        v, cx = lab[0][x], lab[2][x]
        if key[0] >= incumbent:
            break                                # nothing left can beat the incumbent
        if cx >= settled_cost[v] or cx + lb_c[v] >= target_cost:
            stats[4] += 1
            continue
        settled_cost[v] = cx
        stats[1] += 1
        if stats[1] % HISTORY_EVERY == 1:
            rows = _record(history, rows, stats, size)
        if complete and cx + cost_along[v] < target_cost:
            found[0], nfound, completion = x, 1, 1     # its shortest completion fits: optimal
            break
        if v == target:
            found = grow(found, nfound + 1)
            found[nfound] = x
            nfound, completion, target_cost = nfound + 1, 0, cx
            if not pareto:
                break
            continue
        lab, hkey, hitem, count, size, incumbent, best, overflow = _expand(
            first_out, head, length, cost, x, lab, hkey, hitem, count, size, lb_l, lb_c,
            settled_cost, target_cost, complete, length_along, incumbent, best, budget,
            max_labels, stats, lag_d, lag_p, lag_q, lag_upper)
    if nfound == 0 and best >= 0:
        found[0], nfound, completion = best, 1, 2
    if rows == 0 or history[rows - 1, 0] != stats[1] or history[rows - 1, 5] != stats[0]:
        rows = _record(history, rows, stats, size, last=True)
    return lab[0][:count], lab[1][:count], lab[2][:count], lab[3][:count], lab[4][:count], \
        found[:nfound], completion, rows, overflow


@numba.njit(cache=True, inline="always")
def _expand(first_out, head, length, cost, x, lab, hkey, hitem, count, size, lb_l, lb_c,
            settled_cost, target_cost, complete, length_along, incumbent, best, budget,
            max_labels, stats, lag_d, lag_p, lag_q, lag_upper):
    """The labels that settled label x's arcs create, pushed unless a bound prunes them.
    Returns the (possibly grown) labels and heap, count, size, incumbent, best and
    whether ``max_labels`` was hit (then size 0: the search ends)."""
    v, lx, cx = lab[0][x], lab[1][x], lab[2][x]
    for a in range(first_out[v], first_out[v + 1]):
        w = head[a]
        nl, nc = lx + length[a], cx + cost[a]
        if _pruned(w, nl, nc, lb_l, lb_c, settled_cost, target_cost, incumbent, budget,
                   stats, lag_d, lag_p, lag_q, lag_upper):
            continue
        better = complete and nl + length_along[w] < incumbent
        if nl + lb_l[w] >= incumbent and not better:
            stats[3] += 1
            continue
        if count == max_labels:
            return lab, hkey, hitem, count, 0, incumbent, best, True
        if count == lab[0].size:
            lab, hkey, hitem = _grow_all(count + 1, lab, hkey, hitem)
        lab[0][count], lab[1][count], lab[2][count] = w, nl, nc
        lab[3][count], lab[4][count] = x, a
        if better:                           # its least-cost completion is a new incumbent
            incumbent, best = nl + length_along[w], count
        if nl + lb_l[w] < incumbent:
            size = push(hkey, hitem, size, (nl + lb_l[w], nc), count)
        count += 1
        stats[0] += 1
    return lab, hkey, hitem, count, size, incumbent, best, False


@numba.njit(cache=True, _nrt=False)
def _pruned(w, nl, nc, lb_l, lb_c, settled_cost, target_cost, incumbent, budget, stats,
            lag_d, lag_p, lag_q, lag_upper):
    """Whether a new label (w, nl, nc) is pruned by the radius or the cost bound, by
    dominance or by the Lagrangian bound, counted in ``stats``."""
    if lb_l[w] == INF or lb_c[w] == INF:
        stats[2] += 1                        # past the radius or cut off from the target
        return True
    if nc + lb_c[w] >= target_cost:
        stats[2] += 1
        return True
    if nc >= settled_cost[w]:
        stats[4] += 1
        return True
    if lag_q > 0 and _lagrange_prunes(lag_d, lag_p, lag_q, lag_upper, incumbent, budget,
                                      w, nl, nc):
        stats[3] += 1
        stats[5] += 1
        return True
    return False


def label_arcs(parent: np.ndarray, arc: np.ndarray, x: int) -> np.ndarray:
    """The arcs of label ``x``'s path, source first."""
    arcs = []
    while parent[x] >= 0:
        arcs.append(int(arc[x]))
        x = int(parent[x])
    return np.asarray(arcs[::-1], dtype=np.int32)
