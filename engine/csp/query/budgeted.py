"""CspQuery: the least-length path within a cost budget, exact, with the bounds.

A query runs: the two reverse searches from the target (engine.csp.bounds.cpu); the
answers they already settle (unreachable; the least cost over the budget: no path;
the shortest path within the budget: it is the answer); then label-setting
(engine.csp.labeling.cpu) seeded with the least-cost path's length as incumbent,
which ends as soon as a label's shortest completion fits the budget.
``bounds=False`` runs the same labeling with zero bounds, no incumbent and no
completions (Vine's search, for comparison).

A hard query (the labeling passes ``lagrangian_after`` labels, by default as many
as the graph has nodes on the CPU and 4x that on the GPU: about what LARAC's searches
cost) starts over with a Lagrangian bound as well (engine.csp.bounds.lagrangian), which on
the hardest queries cuts the labels by an order of magnitude or more;
``lagrangian="always"`` uses it from the start, ``"never"`` not at all. Pareto sets
and Vine-style runs never use it.

On a GPU backend the bounds are two PHAST sweeps on the reversed graph
(engine.csp.bounds.gpu) and the labeling is Vine's parallel search
(engine.csp.labeling.gpu); the answers are the same, the counts differ (a parallel
iteration expands labels a sequential search would not).
"""
from __future__ import annotations

import time

import numpy as np

from engine.core import backend as backends
from engine.core.paths import check_node, path_from_arcs, unreachable
from engine.csp.bounds.cpu import INF, Bounds, ReverseGraph, compute_bounds, tree_path
from engine.csp.bounds.lagrangian import (AUTO_AFTER_PER_NODE, POLICIES, LagrangianBound, cpu_search,
                                          lagrangian_summary, larac)
from engine.csp.hierarchy.build import ParetoHierarchy
from engine.csp.hierarchy.layered import LayeredGraph
from engine.csp.labeling.cpu import HISTORY, STATS, label_arcs, label_search
from engine.csp.query.results import CspResult, LabelMemoryExceeded, NoPathWithinBudget, ParetoPoint

MAX_LABELS = 50_000_000        # CPU: about 2 GB of labels; beyond it a query fails clearly
HISTORY_ROWS = 4096


def require_metrics(graph, *names: str) -> None:
    """A clear error for a metric the graph does not have."""
    for name in names:
        if name not in graph.metrics:
            raise ValueError(f"the graph has no metric {name!r} (it has "
                             f"{', '.join(graph.metric_names)})")


class CspQuery:
    label = "label-setting with bounds"

    def __init__(self, graph, minimize: str = "distance", budget_metric: str = "travel_time",
                 bounds: bool = True, max_labels: int | None = None, backend=None,
                 lagrangian: str = "auto", lagrangian_after: int | None = None,
                 hierarchy: ParetoHierarchy | None = None, **gpu_options) -> None:
        require_metrics(graph, minimize, budget_metric)
        self.graph, self.minimize, self.budget_metric = graph, minimize, budget_metric
        self.length = np.ascontiguousarray(graph.metrics[minimize], dtype=np.int64)
        self.cost = np.ascontiguousarray(graph.metrics[budget_metric], dtype=np.int64)
        if self.length.min(initial=0) < 0 or self.cost.min(initial=0) < 0:
            raise ValueError("cost-budgeted paths need non-negative lengths and costs")
        # None: MAX_LABELS on the CPU; on the GPU as many as the device memory holds
        # (engine.csp.labeling.gpu grows them for a query that needs more)
        self.use_bounds, self.label_cap = bounds, max_labels
        self.max_labels = MAX_LABELS if max_labels is None else max_labels
        if lagrangian not in POLICIES:
            raise ValueError(f"lagrangian must be one of {', '.join(POLICIES)}, not {lagrangian!r}")
        self.lagrangian = lagrangian
        if not bounds:
            self.label = "label-setting without bounds (Vine-style)"
        self.reverse = ReverseGraph.of(graph, self.length, self.cost)
        # labels run up, across the core, and down a bi-criteria hierarchy when there is
        # one (never Vine-style: that search is the paper's, on the graph itself)
        if hierarchy is not None and (hierarchy.num_nodes != graph.num_nodes or hierarchy.metrics
                                      and not hierarchy.serves(graph, minimize, budget_metric)):
            raise ValueError("the hierarchy was built for another graph or other metrics "
                             f"({' and '.join(hierarchy.metrics) or 'unnamed'})")
        self.layered = LayeredGraph.of(hierarchy) if hierarchy is not None and bounds else None
        if self.layered is not None:
            self.label = "label-setting with bounds on the bi-criteria hierarchy"
        # LARAC's integral weights fit under these (engine.csp.bounds.lagrangian.weights_for)
        self.max_weights = (int(self.length.max(initial=1)), int(self.cost.max(initial=1)))
        if isinstance(backend, str):
            backend = backends.select(backend)
        self.backend = backend or backends.current()
        self.gpu = None
        per_node = AUTO_AFTER_PER_NODE["gpu" if self.backend.is_gpu else "cpu"]
        self.lagrangian_after = max(1, int(lagrangian_after or per_node * graph.num_nodes))
        if self.backend.is_gpu:
            from engine.csp.query.gpu import GpuSearch
            self.gpu = GpuSearch(self, **gpu_options)

    def solve(self, source: int, target: int, budget: int, pareto: bool = False,
              cancel=None) -> CspResult:
        """The least-length path from ``source`` to ``target`` costing at most
        ``budget`` (and, with ``pareto``, every non-dominated (length, cost) point
        within it). Raises Unreachable, or NoPathWithinBudget with the least cost.
        ``cancel`` (engine.core.progress.CancelToken): checked before the GPU runs a query
        again with more label memory."""
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        budget = int(budget)
        if self.gpu is not None:
            return self.gpu.solve(source, target, budget, pareto, cancel)
        t0 = time.perf_counter()
        b = compute_bounds(g, self.reverse, self.length, self.cost, source, target, budget,
                           full_length=pareto or not self.use_bounds)
        if b.length[source] == INF:
            raise unreachable(g, source, target)
        least = int(b.cost[source])
        if least > budget:
            raise self.over_budget(budget, least)
        refs = {"shortest": tree_path(g, b.length_next, source, target),
                "least_cost": tree_path(g, b.cost_next, source, target)}
        base = self.base(source, target, budget, least, int(b.length[source]), refs)
        shortest_cost = base["shortest_cost"]
        stats = np.zeros(len(STATS), np.int64)
        if shortest_cost <= budget and not pareto:
            result = self._result(base, refs["shortest"], "bounds", stats)
        else:
            result = self._label(base, b, refs, pareto, stats)
        result.ms.update(bounds=b.ms, labeling=(time.perf_counter() - t0) * 1000 - b.ms,
                         total=(time.perf_counter() - t0) * 1000)
        return result

    def _label(self, base: dict, b: Bounds, refs: dict, pareto: bool, stats) -> CspResult:
        s, t, budget = base["source"], base["target"], base["budget"]
        lb_l, lb_c = (b.length, b.cost) if self.use_bounds else \
            (np.zeros_like(b.length), np.zeros_like(b.cost))      # Vine: no bounds at all
        graph, lift = self.search_graph(t)
        goal = self.search_target(t)
        per_node = [lift(a) for a in (lb_l, lb_c, b.cost_along, b.length_along)]
        policy = self.lagrangian_policy(pareto)
        bound = self.lagrangian_bound(b, s, t, budget) if policy == "always" else None
        limit = min(self.max_labels, self.lagrangian_after) if policy == "auto" else self.max_labels
        history = np.zeros((HISTORY_ROWS, len(HISTORY)), np.int64)
        restart = rows = 0
        while True:
            lag = (lift(bound.d), bound.p, bound.q, bound.upper) if bound else (lb_l[:0], 0, 0, 0)
            node, _, lab_c, parent, arc, found, completion, more, overflow = label_search(
                graph[0], graph[1], graph[2], graph[3], s, goal, budget, *per_node,
                self.use_bounds and not pareto, pareto, self.max_labels if bound else limit,
                stats, history[rows:], *lag)
            rows += more
            if not (overflow and bound is None and limit < self.max_labels):
                break
            restart = int(stats[0])          # a hard query: start over with the bound too
            bound = self.lagrangian_bound(b, s, t, budget)
        if overflow:
            raise self.out_of_labels(self.max_labels, pareto=pareto)
        if found.size == 0:           # the bounds said a path exists within the budget
            raise RuntimeError("label-setting found no path that the bounds promised")
        base = dict(base, history=history[:rows])
        tails = {0: None, 1: b.length_next, 2: b.cost_next}
        x = int(found[0])
        arcs = self.label_path(label_arcs(parent, arc, x), int(node[x]), tails[completion], t)
        how = {0: "labeling", 1: "labeling (shortest completion)",
               2: "labeling (least-cost completion)"}[completion]
        result = self._result(base, arcs, how, stats)
        result.lagrangian = lagrangian_summary(bound, restart)
        if pareto:
            result.pareto = [ParetoPoint(int(self.length[a].sum()), int(lab_c[x]), a)
                             for x in found
                             for a in [self.label_path(label_arcs(parent, arc, int(x)), goal,
                                                       None, t)]]
        return result

    def search_graph(self, target: int):
        """The arrays the labeling searches (first_out, head, length, cost) and the
        function that turns a per-node array of the graph into one for its nodes: the
        graph itself, or the layered hierarchy with the down copies out of the target's
        reach set to INF (engine.csp.query.gpu does the same on the device)."""
        lg = self.layered
        if lg is None:
            g = self.graph
            return (g.first_out, g.head, self.length, self.cost), lambda a: a
        down = lg.down_set(target)
        return (lg.first_out, lg.head, lg.length, lg.cost), lambda a: lg.node_values(a, down)

    def search_target(self, target: int) -> int:
        """The node the labeling ends at for the graph's node ``target``."""
        return target if self.layered is None else self.layered.target(target)

    def label_path(self, arcs: np.ndarray, node: int, tail_tree, target: int) -> np.ndarray:
        """The graph's arcs of a label's path (``arcs`` in the searched graph, ending at
        ``node``), then along ``tail_tree`` from there to the target (None: none)."""
        if self.layered is not None:
            arcs, node = self.layered.unpack(arcs), int(self.layered.original(node))
        if tail_tree is None:
            return arcs
        return np.concatenate([arcs, tree_path(self.graph, tail_tree, node, target)])

    def lagrangian_policy(self, pareto: bool) -> str:
        """The Lagrangian policy a query runs under: Pareto sets and Vine-style runs
        never use the bound."""
        return self.lagrangian if self.use_bounds and not pareto else "never"

    def lagrangian_bound(self, b: Bounds, source: int, target: int, budget: int) -> LagrangianBound:
        """LARAC on the CPU, from the two paths the bounds found."""
        search = cpu_search(self.reverse, self.graph.head, self.cost, source, target)
        return larac(search, budget, (int(b.length[source]), int(b.cost_along[source])),
                     (int(b.length_along[source]), int(b.cost[source])), *self.max_weights)

    def base(self, source: int, target: int, budget: int, least: int, shortest_length: int,
             refs: dict) -> dict:
        """The fields every answer shares."""
        return dict(source=source, target=target, budget=budget, least_cost=least,
                    shortest_length=shortest_length,
                    shortest_cost=int(self.cost[refs["shortest"]].sum()), references=refs)

    def over_budget(self, budget: int, least: int) -> NoPathWithinBudget:
        return NoPathWithinBudget(f"no path within budget {budget:,}: the least cost is "
                                  f"{least:,} ({self.budget_metric})", least)

    @staticmethod
    def out_of_labels(limit: int, device_memory: bool = False,
                      pareto: bool = False) -> LabelMemoryExceeded:
        """``device_memory``: the limit was all the GPU's free memory holds."""
        if pareto:
            why = "no Pareto set is given (ask for the constrained path alone, or lower the budget)"
        elif device_memory:
            why = ("as many as the GPU's free memory holds; no answer is given (free GPU "
                   "memory, or raise the budget)")
        else:
            why = "no answer is given (raise the limit or the budget)"
        return LabelMemoryExceeded(f"the search needed more than {limit:,} labels, {why}")

    def _result(self, base: dict, arcs: np.ndarray, how: str, stats) -> CspResult:
        return self.result(base, arcs, how, dict(zip(STATS, stats.tolist())))

    def result(self, base: dict, arcs: np.ndarray, how: str, stats: dict) -> CspResult:
        g = self.graph
        length, cost = int(self.length[arcs].sum()), int(self.cost[arcs].sum())
        path = path_from_arcs(g, base["source"], base["target"], self.minimize, length, arcs)
        return CspResult(length=length, cost=cost, path=path, answered_by=how, stats=stats,
                         backend=self.backend.name, **base)
