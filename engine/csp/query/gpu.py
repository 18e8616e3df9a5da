"""A cost-budgeted query on the GPU: the bounds (engine.csp.bounds.gpu), the parallel
labeling (engine.csp.labeling.gpu), the Lagrangian bound for hard queries
(engine.csp.bounds.lagrangian_gpu, by CspQuery's policy), and the answer as the CPU's
CspResult."""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from engine.csp.bounds.cpu import INF, compute_bounds, tree_path
from engine.csp.bounds.gpu import GpuBounds
from engine.csp.bounds.lagrangian import lagrangian_summary, larac
from engine.csp.bounds.lagrangian_gpu import GpuLagrangian, ZeroWeightLoop
from engine.csp.labeling.gpu import (AT, BY_BOUNDS, COMPLETE, DONE, GPU_HISTORY, OUT_OF_LABELS,
                                  OUT_OF_LISTS, OVER_BUDGET, PARETO, UNREACHABLE, GpuLabeling)
from engine.core.paths import unreachable
from engine.csp.query.results import ParetoPoint

HIERARCHY_RUN_ARCS = 256      # NY Q3 on the H100: 11.2 ms at 32, 7.7 at 128, 7.2 at 256, 9.7 unbounded
OUT_OF_MEMORY = (OUT_OF_LABELS, OUT_OF_LISTS)
HOW = {0: "labeling", 1: "labeling (shortest completion)", 2: "labeling (least-cost completion)"}


class GpuSearch:
    """The device side of one CspQuery (its graph, metrics and options)."""

    def __init__(self, query, **options) -> None:
        self.query, backend = query, query.backend
        g = query.graph
        self.bounds = GpuBounds(g, query.length, query.cost, backend)
        lg = query.layered             # labels search the bi-criteria hierarchy if there is one
        if lg is not None:             # whose core nodes have many arcs: runs may go wider
            options.setdefault("run_arcs", HIERARCHY_RUN_ARCS)
        self.labeling = GpuLabeling(lg or g, query.length if lg is None else lg.length,
                                    query.cost if lg is None else lg.cost, backend,
                                    query.label_cap, **options)
        self.lagrange = GpuLagrangian(self.bounds, backend)
        xp = backend.xp
        self.zeros, self.infs = xp.zeros(g.num_nodes, np.int64), xp.full(g.num_nodes, INF, np.int64)
        # the bounds for the layered graph's nodes (4, and the Lagrangian d), and which
        # down copies reach this query's target (engine.csp.hierarchy.layered)
        self.lifted = [xp.empty(2 * g.num_nodes, np.int64) for _ in range(5)] if lg else []
        self.down_mask = xp.zeros(g.num_nodes, np.uint8) if lg else None
        # the two next-arc trees come to the host on their own stream while the labeling
        # runs, and the reference paths are walked meanwhile
        self.next_host = [backend.host_empty(g.num_nodes, np.int32) for _ in range(2)]
        self.copy_stream = xp.cuda.Stream(non_blocking=True)
        self.trees_copied = xp.cuda.Event(disable_timing=True)
        self.preparation_ms = self.bounds.preparation_ms

    def solve(self, source: int, target: int, budget: int, pareto: bool, cancel=None):
        q, bd, backend = self.query, self.bounds, self.query.backend
        t0 = time.perf_counter()
        start = backend.mark()
        bd.run(target)
        bounds_done = backend.mark()
        self._copy_trees(bounds_done)
        goal = q.search_target(target)
        down = self._down_set(target)
        refs = {}
        try:
            run, first, bound = self._labeling(source, target, goal, budget, pareto, cancel,
                                               lambda: refs.update(self._tree_paths(source, target)))
        finally:
            if down is not None:
                self.down_mask[down] = 0
        ctl = run.ctl
        if run.status == UNREACHABLE:
            raise unreachable(q.graph, source, target)
        least = int(ctl[AT["src_lb_c"]])
        if run.status == OVER_BUDGET:
            raise q.over_budget(budget, least)
        if run.status in OUT_OF_MEMORY:
            raise q.out_of_labels(run.capacity, q.label_cap is None, pareto)
        if run.status not in (DONE, BY_BOUNDS):
            raise RuntimeError(f"the GPU labeling stopped with status {run.status}")
        self.trees_copied.synchronize()
        length_next, cost_next = self.next_host
        refs = refs or self._references(source, target, budget, ctl, length_next, cost_next)
        base = q.base(source, target, budget, least, int(ctl[AT["src_lb_l"]]), refs)
        stats = self._stats(run, first)
        if run.status == BY_BOUNDS:
            result = q.result(base, refs["shortest"], "bounds", stats)
        else:
            result = self._answer(q, base, run, stats, length_next, cost_next, target, goal)
        bounds_ms = backend.elapsed_ms(start, bounds_done)
        total = (time.perf_counter() - t0) * 1000
        result.ms = {"bounds": bounds_ms, "labeling": total - bounds_ms, "total": total}
        result.lagrangian = lagrangian_summary(bound, int(first.stats["created"]) if first else 0)
        return result

    def _copy_trees(self, bounds_done) -> None:
        """Queue the copies of the two next-arc trees to the host once the bounds are
        done, on the copy stream (the labeling goes on meanwhile)."""
        self.copy_stream.wait_event(bounds_done)
        bd = self.bounds
        for tree, host in zip((bd.length_next, bd.cost_next), self.next_host):
            tree.get(out=host, stream=self.copy_stream, blocking=False)
        self.trees_copied.record(self.copy_stream)

    def _tree_paths(self, source: int, target: int) -> dict:
        """The shortest and the least-cost path along the copied trees; {} when a tree
        path from the source loops through zero-weight arcs (``_references`` then asks
        the CPU bounds)."""
        self.trees_copied.synchronize()
        g = self.query.graph
        try:
            return {"shortest": tree_path(g, self.next_host[0], source, target),
                    "least_cost": tree_path(g, self.next_host[1], source, target)}
        except ValueError:
            return {}

    def _labeling(self, source: int, target: int, goal: int, budget: int, pareto: bool,
                  cancel=None, meanwhile=None):
        """The labeling run (and the first one, when a hard query started over with the
        Lagrangian bound) and that bound; ``meanwhile()`` runs on the host while the
        first run's kernel does."""
        q, bd = self.query, self.bounds
        exact = tuple(self._lift(a, k) for k, a in
                      enumerate((bd.lb_l, bd.lb_c, bd.cost_along, bd.length_along)))
        prune = exact if q.use_bounds else (self.zeros, self.zeros, self.infs, self.infs)
        flags = PARETO if pareto else (COMPLETE if q.use_bounds else 0)
        policy = q.lagrangian_policy(pareto)
        bound = self._lagrangian(source, target, budget) if policy == "always" else None
        limit = q.lagrangian_after if policy == "auto" else None
        run = self.labeling.solve(source, goal, budget, prune, exact, flags, bound, limit,
                                  meanwhile)
        first = None
        if run.status in OUT_OF_MEMORY and policy == "auto":
            first = run                      # a hard query: start over with the bound too
            bound = self._lagrangian(source, target, budget)
            run = self.labeling.solve(source, goal, budget, prune, exact, flags, bound)
        # still out of labels: more memory, and run again (a Pareto set only up to a
        # max_labels given: on a large graph it can grow without end, and the window asks
        # for one at each slider step)
        reruns, grows = 0, not pareto or q.label_cap is not None
        try:
            while run.status in OUT_OF_MEMORY and grows:
                if cancel is not None:
                    cancel.check()
                if not self.labeling.grow():
                    break
                reruns += 1
                run = self.labeling.solve(source, goal, budget, prune, exact, flags, bound)
        finally:
            self.labeling.shrink()
        if first is not None:                # the history goes on from the first run's
            later = run.history.copy()
            later[:, GPU_HISTORY.index("iteration")] += len(first.history)
            run.history = np.concatenate([first.history, later])
        run.reruns = reruns
        return run, first, bound

    def _down_set(self, target: int):
        """On a hierarchy: marks in ``down_mask`` the down copies that reach the target
        and returns them (the caller clears them after the run); else None."""
        lg = self.query.layered
        if lg is None:
            return None
        down = self.query.backend.xp.asarray(lg.down_set(target))
        self.down_mask[down] = 1
        return down

    def _lift(self, values, slot: int):
        """A per-node array of the graph for the searched graph's nodes (itself
        without a hierarchy), in lifted[slot]."""
        if self.query.layered is None:
            return values
        n = self.query.graph.num_nodes
        self.query.backend.launch("csp", "csp_lift", (values, self.down_mask, np.int32(n),
                                                      self.lifted[slot]),
                                  grid=min(1024, (2 * n + 255) // 256), block=256)
        return self.lifted[slot]

    def _lagrangian(self, source: int, target: int, budget: int):
        """LARAC on the device from the two paths of the bounds (None when the bounds
        settle the query, or a tree path hides behind a zero-weight loop), its ``d``
        for the searched graph's nodes."""
        bound = self._larac(source, target, budget)
        return bound and dataclasses.replace(bound, d=self._lift(bound.d, 4))

    def _larac(self, source: int, target: int, budget: int):
        bd, backend = self.bounds, self.query.backend
        at = backend.xp.stack([a[source] for a in (bd.lb_l, bd.cost_along, bd.length_along,
                                                   bd.lb_c)])
        l1, c1, l2, c2 = (int(x) for x in backend.to_host(at))
        if INF in (l1, c1, l2, c2) or c2 > budget or c1 <= budget:
            return None
        try:
            return larac(self.lagrange.search(source, target), budget, (l1, c1), (l2, c2),
                         *self.query.max_weights)
        except ZeroWeightLoop:               # the CPU's search sums along any tree path
            q = self.query
            b = compute_bounds(q.graph, q.reverse, q.length, q.cost, source, target, budget)
            bound = q.lagrangian_bound(b, source, target, budget)
            return dataclasses.replace(bound, d=backend.xp.asarray(bound.d))

    def _answer(self, q, base, run, stats, length_next, cost_next, target, goal):
        if run.pareto is not None:
            if not run.pareto:
                raise RuntimeError("the GPU labeling found no path that the bounds promised")
            points = [ParetoPoint(l, c, q.label_path(arcs, goal, None, target))
                      for l, c, arcs in run.pareto]
            result = q.result(base, points[0].arcs, "labeling", stats)
            result.pareto = points
        else:
            if run.arcs is None:
                raise RuntimeError("the GPU labeling found no path that the bounds promised")
            tail = {0: None, 1: length_next, 2: cost_next}[run.completion]
            arcs = q.label_path(run.arcs, run.node, tail, target)
            result = q.result(base, arcs, HOW[run.completion], stats)
        result.history, result.history_columns = run.history, GPU_HISTORY
        return result

    def _references(self, source, target, budget, ctl, length_next, cost_next) -> dict:
        """The shortest and the least-cost path along the two trees. Where a tree path
        from the source loops through zero-weight arcs, the CPU bounds give that one
        path; the other stays the GPU's, whose cost (or length) the answer relied on."""
        q = self.query
        loops = {"length": ctl[AT["src_cost_along"]] == INF,
                 "cost": ctl[AT["src_length_along"]] == INF}
        if any(loops.values()):
            b = compute_bounds(q.graph, q.reverse, q.length, q.cost, source, target, budget,
                               full_length=True)
            length_next = b.length_next if loops["length"] else length_next
            cost_next = b.cost_next if loops["cost"] else cost_next
        return {"shortest": tree_path(q.graph, length_next, source, target),
                "least_cost": tree_path(q.graph, cost_next, source, target)}

    @staticmethod
    def _stats(run, first=None) -> dict:
        """The run's counts (plus those of the ``first`` run it restarted)."""
        s = run.stats
        if first is not None:
            s = {k: v + first.stats[k] for k, v in s.items()}
        iterations = sum(int(r.ctl[AT["iterations"]]) for r in (run, first) if r is not None)
        more = {"reruns_with_more_memory": run.reruns} if run.reruns else {}
        return {"created": s["created"], "settled": s["expanded"],
                "pruned_cost_bound": s["pruned_cost_bound"],
                "pruned_length_bound": s["pruned_length_bound"],
                "pruned_dominated": s["pruned_hash"] + s["pruned_list"] + s["dead"],
                "pruned_hash": s["pruned_hash"], "pruned_list": s["pruned_list"],
                "dead": s["dead"], "pruned_lagrangian": s["pruned_lagrangian"],
                "iterations": iterations, **more}
