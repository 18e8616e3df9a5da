"""A contraction hierarchy for two weights at once, stopped at a core: the
preprocessing that makes cost-budgeted answers a few arcs deep instead of hundreds.

Nodes are contracted in rounds of independent sets (lowest priority first: the
shortcuts a node needs against the arcs it removes, engine.csp.hierarchy.contract).
A shortcut carries one (length, cost) pair, and a pair of nodes keeps every
non-dominated pair of its paths through contracted nodes (engine.csp.hierarchy.witness),
so every Pareto-optimal path of the graph survives with its exact length and cost
as up-arcs, then core arcs, then down-arcs (Storandt's constrained CH; Zhang et al.,
bi-objective CH, ICAPS 2023). Contraction stops when the remaining core is small
(``core_fraction`` of the nodes): contracting it too would make the shortcuts' Pareto
sets grow, and the labeling runs well on a small dense core.

engine.csp.hierarchy.layered turns the hierarchy into the graph the labeling searches.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from engine.csp.hierarchy import contract as pc
from engine.core.arrays import grow

CORE_FRACTION = 0.01       # contraction stops when this share of the nodes remains ...
CORE_DEGREE = 24           # ... or when the remaining nodes have this many arcs each
# (NY: at 16 the degree stop came first, a core of 3,690 nodes; at 24 the share does,
# 2,643 nodes, and the GPU's Q3 median fell ~0.3 ms, 4.4 -> 4.0-4.2 ms on the H100)
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
    arc_child: np.ndarray           # int32 [h, 2] a shortcut's two halves; -1 for the graph's
    arcs: np.ndarray                # int32 the arcs the search uses: each contracted node's
                                    # arcs to higher nodes at its contraction, and the core's
    num_original_arcs: int
    params: dict = field(default_factory=dict)
    build_ms: float = 0.0
    metrics: tuple = ()             # (minimize, budget metric) names, when built for a graph's
    metric_hashes: tuple = ()       # ... and their engine.core.metric.Metric hashes
    proof: object = None            # engine.ch.proof.Proof of a loaded file (its .rlb check)

    def __post_init__(self) -> None:
        self.core = self.level == self.num_levels      # bool [n]

    @property
    def num_shortcuts(self) -> int:
        return int(self.arc_tail.size) - self.num_original_arcs

    def unpack(self, harcs) -> np.ndarray:
        """The graph's arcs along hierarchy arcs ``harcs``, in order."""
        return _unpack(np.asarray(harcs, np.int64), self.arc_child, self.num_original_arcs)

    def serves(self, graph, minimize: str, budget_metric: str) -> bool:
        """Built from exactly these two metrics of ``graph`` (names and weights)?"""
        return self.metrics == (minimize, budget_metric) and self.metric_hashes == tuple(
            graph.metric_of(name).hash for name in self.metrics)

    def summary(self) -> str:
        """One line for people: core, shortcuts, levels, build time."""
        core = int(self.core.sum())
        return (f"core {core:,} nodes ({100 * core / max(self.num_nodes, 1):.1f} %), "
                f"{self.num_shortcuts:,} shortcuts, {self.num_levels} levels, built in "
                f"{self.build_ms / 1000:.1f} s")


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


def _pareto_filtered(rows: list, n: int, check: np.ndarray) -> list:
    """The rows (tail, head, length, cost, id) without those another row of the same
    (tail, head) dominates; only tails with ``check`` set are looked at."""
    first, by_tail = pc.csr(rows[0], n)
    keep = pc.pareto_rows(first, by_tail, rows[1], rows[2], rows[3], check)
    return [r[keep] for r in rows]


def _initial_rows(graph, length: np.ndarray, cost: np.ndarray) -> list:
    """The graph's arcs without loops, Pareto-filtered per (tail, head)."""
    tail, head = np.asarray(graph.tail, np.int64), np.asarray(graph.head, np.int64)
    ids = np.flatnonzero(tail != head)
    ids = ids[np.lexsort((cost[ids], length[ids], head[ids], tail[ids]))]
    rows = [tail[ids], head[ids], length[ids], cost[ids], ids]
    return _pareto_filtered(rows, graph.num_nodes, np.ones(graph.num_nodes, np.bool_))


class _ArcTable:
    """Every hierarchy arc: the graph's, then each round's shortcuts."""

    def __init__(self, graph, length: np.ndarray, cost: np.ndarray) -> None:
        m = graph.num_arcs
        self.tail, self.head = [graph.tail.astype(np.int32)], [graph.head.astype(np.int32)]
        self.length, self.cost = [length], [cost]
        self.child = [np.full((m, 2), -1, np.int32)]
        self.size = m

    def add(self, new: np.ndarray, row_id: np.ndarray) -> np.ndarray:
        """Appends the shortcuts ``new`` (rows of pc.contract_batch, whose halves are
        remaining-graph rows with hierarchy ids ``row_id``); their ids."""
        ids = np.arange(self.size, self.size + len(new), dtype=np.int64)
        self.size += len(new)
        if self.size >= np.iinfo(np.int32).max:     # arc ids are int32 (as the validator asks)
            raise MemoryError(f"the hierarchy needs {np.iinfo(np.int32).max:,} arcs or more")
        self.tail.append(new[:, 0].astype(np.int32))
        self.head.append(new[:, 1].astype(np.int32))
        self.length.append(new[:, 2])
        self.cost.append(new[:, 3])
        self.child.append(np.stack([row_id[new[:, 4]], row_id[new[:, 5]]], axis=1).astype(np.int32))
        return ids


def _contract_round(rows: list, batch: np.ndarray, blocked: np.ndarray, index: tuple,
                    table: _ArcTable, settle_limit: int, settled: np.ndarray):
    """Contracts ``batch`` (marked in ``blocked``): the remaining graph's rows after it
    and the batch's neighbours."""
    n = blocked.size
    tail, head = rows[0], rows[1]
    new = pc.contract_batch(batch, blocked, *index, tail, head, rows[2], rows[3], settle_limit,
                            settled)
    touches = blocked[tail] | blocked[head]
    neighbours = np.unique(np.concatenate([head[blocked[tail]], tail[blocked[head]]]))
    ids = table.add(new, rows[4])
    stay = ~touches
    rows = [np.concatenate([r[stay], x]) for r, x in zip(rows, (*new[:, :4].T, ids))]
    check = np.zeros(n, np.bool_)
    check[new[:, 0]] = True
    return _pareto_filtered(rows, n, check), neighbours


def pareto_hierarchy_for(graph, minimize: str, budget_metric: str, **options) -> ParetoHierarchy:
    """build_pareto_hierarchy on two of the graph's metrics, named (with their hashes)
    so that a saved file is refused for other weights."""
    h = build_pareto_hierarchy(graph, graph.metrics[minimize], graph.metrics[budget_metric],
                               **options)
    h.metrics = (minimize, budget_metric)
    h.metric_hashes = tuple(graph.metric_of(name).hash for name in h.metrics)
    return h


def build_pareto_hierarchy(graph, length: np.ndarray, cost: np.ndarray,
                           core_fraction: float = CORE_FRACTION,
                           core_degree: float = CORE_DEGREE, settle_limit: int = SETTLE_LIMIT,
                           progress=None) -> ParetoHierarchy:
    """Contracts ``graph`` under the two weights (non-negative integers) down to a core
    of about ``core_fraction`` of its nodes (or until the remaining nodes have
    ``core_degree`` arcs each). ``progress(done, total)`` is called after each round."""
    t0 = time.perf_counter()
    n = graph.num_nodes
    length, cost = np.asarray(length, np.int64), np.asarray(cost, np.int64)
    rows = _initial_rows(graph, length, cost)          # the remaining graph
    table = _ArcTable(graph, length, cost)
    level = np.full(n, -1, np.int32)
    deleted, prio = np.zeros(n, np.int64), np.zeros(n, np.int64)
    settled, blocked = pc.scratch(n), np.zeros(n, np.bool_)
    final = []
    target = max(1, int(core_fraction * n))
    remaining = dirty = np.arange(n, dtype=np.int64)
    rounds = 0
    while remaining.size > target and rows[0].size <= core_degree * remaining.size:
        index = (*pc.csr(rows[0], n), *pc.csr(rows[1], n))   # out and in CSR
        pc.priorities(dirty, prio, deleted, *index, *rows[:4], settle_limit, settled)
        batch = pc.independent_set(remaining, prio, *index, rows[0], rows[1])
        if batch.size > remaining.size - target:          # just down to the core's size
            batch = batch[np.argsort(prio[batch], kind="stable")[:remaining.size - target]]
        if batch.size == 0:
            break
        blocked[batch] = True
        frozen = rows[4][blocked[rows[0]] | blocked[rows[1]]]   # the batch's arcs
        rows, neighbours = _contract_round(rows, batch, blocked, index, table, settle_limit,
                                           settled)
        final.append(frozen)
        np.add.at(deleted, neighbours, 1)
        level[batch] = rounds
        blocked[batch] = False
        remaining = remaining[level[remaining] < 0]
        dirty = neighbours[level[neighbours] < 0]
        rounds += 1
        if progress is not None:
            progress(n - remaining.size, n - target)
    level[remaining] = rounds
    final.append(rows[4])
    return ParetoHierarchy(
        num_nodes=n, num_levels=rounds, level=level, arc_tail=np.concatenate(table.tail),
        arc_head=np.concatenate(table.head), arc_length=np.concatenate(table.length),
        arc_cost=np.concatenate(table.cost), arc_child=np.concatenate(table.child),
        arcs=np.sort(np.concatenate(final)).astype(np.int32), num_original_arcs=graph.num_arcs,
        params={"core_fraction": core_fraction, "core_degree": core_degree,
                "settle_limit": settle_limit},
        build_ms=(time.perf_counter() - t0) * 1000)
