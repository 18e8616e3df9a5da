"""A contraction hierarchy for two weights at once, stopped at a core: the
preprocessing that makes cost-budgeted answers a few arcs deep instead of hundreds.

Nodes are contracted in rounds of independent sets (lowest priority first: the
shortcuts a node needs against the arcs it removes, engine.csp.pareto_contract).
A shortcut carries one (length, cost) pair, and a pair of nodes keeps every
non-dominated pair of its paths through contracted nodes (engine.csp.pareto_witness),
so every Pareto-optimal path of the graph survives with its exact length and cost
as up-arcs, then core arcs, then down-arcs (Storandt's constrained CH; Zhang et al.,
bi-objective CH, ICAPS 2023). Contraction stops when the remaining core is small
(``core_fraction`` of the nodes): contracting it too would make the shortcuts' Pareto
sets grow, and the labeling runs well on a small dense core.

engine.csp.layered turns the hierarchy into the graph the labeling searches.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from engine.csp import pareto_contract as pc
from engine.csp.pareto_witness import grow

CORE_FRACTION = 0.01       # contraction stops when this share of the nodes remains ...
CORE_DEGREE = 16           # ... or when the remaining nodes have this many arcs each
SETTLE_LIMIT = 200         # labels a witness search settles before giving up


@dataclass(eq=False)
class ParetoHierarchy:
    num_nodes: int
    num_levels: int                 # rounds of contraction; core nodes have this level
    level: np.ndarray               # int32 [n]
    arc_tail: np.ndarray            # int32 [h] every hierarchy arc: the graph's, then shortcuts
    arc_head: np.ndarray            # int32 [h]
    arc_length: np.ndarray          # int64 [h]
    arc_cost: np.ndarray            # int64 [h]
    arc_child: np.ndarray           # int64 [h, 2] a shortcut's two halves; -1 for the graph's
    arcs: np.ndarray                # int64 the arcs the search uses: each contracted node's
                                    # arcs to higher nodes at its contraction, and the core's
    num_original_arcs: int
    params: dict = field(default_factory=dict)
    build_ms: float = 0.0

    def __post_init__(self) -> None:
        self.core = self.level == self.num_levels      # bool [n]

    @property
    def num_shortcuts(self) -> int:
        return int(self.arc_tail.size) - self.num_original_arcs

    def unpack(self, harcs) -> np.ndarray:
        """The graph's arcs along hierarchy arcs ``harcs``, in order."""
        return _unpack(np.asarray(harcs, np.int64), self.arc_child, self.num_original_arcs)


@numba.njit(cache=True)
def _unpack(harcs, child, m):
    out = np.empty(max(16, 4 * harcs.size), np.int32)
    stack = np.empty(64, np.int64)
    count = 0
    for i in range(harcs.size):
        stack[0], top = harcs[i], 1
        while top > 0:
            top -= 1
            a = stack[top]
            if a < m:
                if count == out.size:
                    out = grow(out, count + 1)
                out[count] = a
                count += 1
                continue
            if top + 2 > stack.size:
                stack = grow(stack, top + 2)
            stack[top], stack[top + 1] = child[a, 1], child[a, 0]
            top += 2
    return out[:count]


def _initial_rows(graph, length: np.ndarray, cost: np.ndarray):
    """The graph's arcs without loops, Pareto-filtered per (tail, head)."""
    tail, head = np.asarray(graph.tail, np.int64), np.asarray(graph.head, np.int64)
    ids = np.flatnonzero(tail != head)
    order = np.lexsort((cost[ids], length[ids], head[ids], tail[ids]))
    ids = ids[order]
    rows = [tail[ids], head[ids], length[ids].astype(np.int64), cost[ids].astype(np.int64), ids]
    first, by_tail = pc.csr(rows[0], graph.num_nodes)
    keep = pc.pareto_rows(first, by_tail, rows[1], rows[2], rows[3],
                          np.ones(graph.num_nodes, np.bool_))
    return [r[keep] for r in rows]


def build_pareto_hierarchy(graph, length: np.ndarray, cost: np.ndarray,
                           core_fraction: float = CORE_FRACTION,
                           core_degree: float = CORE_DEGREE, settle_limit: int = SETTLE_LIMIT, progress=None) -> ParetoHierarchy:
    """Contracts ``graph`` under the two weights (non-negative integers) down to a core
    of about ``core_fraction`` of its nodes. ``progress(done, total)`` is called after
    each round."""
    t0 = time.perf_counter()
    n, m = graph.num_nodes, graph.num_arcs
    length, cost = np.asarray(length, np.int64), np.asarray(cost, np.int64)
    tail, head, r_l, r_c, r_id = _initial_rows(graph, length, cost)
    h_tail, h_head, h_l, h_c = [graph.tail.astype(np.int32)], [graph.head.astype(np.int32)], \
        [length], [cost]
    h_child = [np.full((m, 2), -1, np.int64)]
    next_id = m
    level = np.full(n, -1, np.int32)
    deleted = np.zeros(n, np.int64)
    prio = np.zeros(n, np.int64)
    settled = pc.scratch(n)
    blocked = np.zeros(n, np.bool_)
    final = []
    target = max(1, int(core_fraction * n))
    remaining = np.arange(n, dtype=np.int64)
    dirty = remaining
    rounds = 0
    while remaining.size > target and tail.size <= core_degree * remaining.size:
        out_first, out_rows = pc.csr(tail, n)
        in_first, in_rows = pc.csr(head, n)
        pc.priorities(dirty, prio, deleted, out_first, out_rows, in_first, in_rows, tail, head,
                      r_l, r_c, settle_limit, settled)
        batch = pc.independent_set(remaining, prio, out_first, out_rows, in_first, in_rows,
                                   tail, head)
        if batch.size > remaining.size - target:          # just down to the core's size
            batch = batch[np.argsort(prio[batch], kind="stable")[:remaining.size - target]]
        if batch.size == 0:
            break
        blocked[batch] = True
        new = pc.contract_batch(batch, blocked, out_first, out_rows, in_first, in_rows, tail, head,
                                r_l, r_c, settle_limit, settled)
        touches = blocked[tail] | blocked[head]
        final.append(r_id[touches])                       # the batch's arcs, frozen now
        neighbours = np.unique(np.concatenate([head[blocked[tail]], tail[blocked[head]]]))
        np.add.at(deleted, neighbours, 1)
        level[batch] = rounds
        ids = np.arange(next_id, next_id + len(new), dtype=np.int64)
        next_id += len(new)
        h_tail.append(new[:, 0].astype(np.int32))
        h_head.append(new[:, 1].astype(np.int32))
        h_l.append(new[:, 2])
        h_c.append(new[:, 3])
        h_child.append(np.stack([r_id[new[:, 4]], r_id[new[:, 5]]], axis=1))
        stay = ~touches
        tail, head = np.concatenate([tail[stay], new[:, 0]]), np.concatenate([head[stay], new[:, 1]])
        r_l, r_c = np.concatenate([r_l[stay], new[:, 2]]), np.concatenate([r_c[stay], new[:, 3]])
        r_id = np.concatenate([r_id[stay], ids])
        check = np.zeros(n, np.bool_)
        check[new[:, 0]] = True
        first, by_tail = pc.csr(tail, n)
        keep = pc.pareto_rows(first, by_tail, head, r_l, r_c, check)
        tail, head, r_l, r_c, r_id = tail[keep], head[keep], r_l[keep], r_c[keep], r_id[keep]
        blocked[batch] = False
        remaining = remaining[level[remaining] < 0]
        dirty = neighbours[level[neighbours] < 0]
        rounds += 1
        if progress is not None:
            progress(n - remaining.size, n - target)
    level[remaining] = rounds
    final.append(r_id)
    return ParetoHierarchy(
        num_nodes=n, num_levels=rounds, level=level, arc_tail=np.concatenate(h_tail),
        arc_head=np.concatenate(h_head), arc_length=np.concatenate(h_l),
        arc_cost=np.concatenate(h_c), arc_child=np.concatenate(h_child),
        arcs=np.sort(np.concatenate(final)), num_original_arcs=m,
        params={"core_fraction": core_fraction, "core_degree": core_degree, "settle_limit": settle_limit},
        build_ms=(time.perf_counter() - t0) * 1000)
