"""The rounds of bi-criteria contraction: priorities, independent sets, shortcuts, and
the remaining graph after each round (Numba, parallel over nodes).

The remaining graph is a list of *rows* (tail, head, length, cost, hierarchy arc id),
Pareto-filtered per (tail, head) pair, with CSR indexes by tail and by head rebuilt
each round by counting sort.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.csp.hierarchy.witness import INF, node_shortcuts

@numba.njit(cache=True)
def csr(keys, n):
    """(first [n+1], rows ordered by key, stably): a counting sort."""
    first = np.zeros(n + 1, np.int64)
    for k in keys:
        first[k + 1] += 1
    for v in range(n):
        first[v + 1] += first[v]
    fill = first[:-1].copy()
    rows = np.empty(keys.size, np.int64)
    for r in range(keys.size):
        rows[fill[keys[r]]] = r
        fill[keys[r]] += 1
    return first, rows


@numba.njit(cache=True, parallel=True)
def priorities(nodes, prio, deleted, out_first, out_rows, in_first, in_rows, r_tail, r_head,
               r_l, r_c, settle_limit, settled_cost):
    """prio[x] for each x of ``nodes``: twice the shortcuts contracting x alone would
    add, less the arcs it removes, plus its contracted neighbours (spreads the rounds
    evenly over the graph)."""
    blocked = np.zeros(deleted.size, np.bool_)
    count_only = np.empty((0, 6), np.int64)
    for i in numba.prange(nodes.size):
        x = nodes[i]
        added = node_shortcuts(x, out_first, out_rows, in_first, in_rows, r_tail, r_head, r_l, r_c,
                               blocked, settle_limit, settled_cost[numba.get_thread_id()],
                               count_only, 0)
        removed = (out_first[x + 1] - out_first[x]) + (in_first[x + 1] - in_first[x])
        prio[x] = 2 * added - removed + deleted[x]


@numba.njit(cache=True, inline="always")
def _before(x, y, prio):
    """x goes before its neighbour y: a lower priority, ties by a hash of the id."""
    if prio[x] != prio[y]:
        return prio[x] < prio[y]
    hx, hy = (x * 2654435761) & 0xFFFFFFFF, (y * 2654435761) & 0xFFFFFFFF
    return hx < hy or (hx == hy and x < y)


@numba.njit(cache=True, parallel=True)
def independent_set(remaining, prio, out_first, out_rows, in_first, in_rows, r_tail, r_head):
    """The remaining nodes that go before all their neighbours: no two are adjacent."""
    pick = np.zeros(remaining.size, np.bool_)
    for i in numba.prange(remaining.size):
        x = remaining[i]
        ok = True
        for j in range(out_first[x], out_first[x + 1]):
            if not _before(x, r_head[out_rows[j]], prio):
                ok = False
                break
        if ok:
            for j in range(in_first[x], in_first[x + 1]):
                if not _before(x, r_tail[in_rows[j]], prio):
                    ok = False
                    break
        pick[i] = ok
    return remaining[pick]


@numba.njit(cache=True, parallel=True)
def contract_batch(batch, blocked, out_first, out_rows, in_first, in_rows, r_tail, r_head,
                   r_l, r_c, settle_limit, settled_cost):
    """The shortcuts of every node of ``batch`` (an independent set; its witnesses
    avoid the whole batch): rows (u, w, length, cost, in-row, out-row)."""
    room = np.zeros(batch.size + 1, np.int64)
    for i in range(batch.size):
        x = batch[i]
        room[i + 1] = room[i] + (in_first[x + 1] - in_first[x]) * (out_first[x + 1] - out_first[x])
    slab = np.empty((room[-1], 6), np.int64)
    count = np.zeros(batch.size, np.int64)
    for i in numba.prange(batch.size):
        count[i] = node_shortcuts(batch[i], out_first, out_rows, in_first, in_rows, r_tail,
                                  r_head, r_l, r_c, blocked, settle_limit,
                                  settled_cost[numba.get_thread_id()], slab, room[i])
    keep = np.zeros(room[-1], np.bool_)
    for i in range(batch.size):
        keep[room[i]:room[i] + count[i]] = True
    return slab[keep]


@numba.njit(cache=True, parallel=True)
def pareto_rows(first, rows, r_head, r_l, r_c, check):
    """keep[r]: row r is not dominated by another row of the same (tail, head) (ties:
    the lower row wins); only tails with ``check`` set are looked at."""
    keep = np.ones(r_head.size, np.bool_)
    for u in numba.prange(first.size - 1):
        if not check[u]:
            continue
        for i in range(first[u], first[u + 1]):
            a = rows[i]
            for j in range(first[u], first[u + 1]):
                b = rows[j]
                if b == a or r_head[b] != r_head[a] or r_l[b] > r_l[a] or r_c[b] > r_c[a]:
                    continue
                if r_l[b] < r_l[a] or r_c[b] < r_c[a] or b < a:
                    keep[a] = False
                    break
    return keep


def scratch(n: int) -> np.ndarray:
    """One all-INF settled-cost array per thread for the witness searches."""
    return np.full((numba.get_num_threads(), n), INF, np.int64)
