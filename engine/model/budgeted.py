"""Cost-budgeted paths in the routing model: the labeling (engine.csp) runs unchanged on
a TurnModel's expanded graph of the two metrics, so its labels sit on road arcs and its
bounds come from the reversed turn graph; the answer is read back as road paths."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.core.paths import Unreachable, check_node, path_from_arcs, unreachable
from engine.model.expanded import TurnModel


class TurnAwareCsp:
    """engine.csp.CspQuery's ``solve`` between road nodes, on the expanded graph."""

    def __init__(self, model: TurnModel, query) -> None:
        self.model, self.query = model, query
        self.graph = model.graph

    def __getattr__(self, name):           # options, backend, hierarchy: the query's
        return getattr(self.query, name)

    def solve(self, source: int, target: int, budget: int, pareto: bool = False, cancel=None):
        g, m = self.graph, self.model
        check_node(g, source)
        check_node(g, target)
        if source == target:
            raise ValueError("the start and the destination are the same node")
        try:
            r = self.query.solve(m.start(source), m.end(target), budget, pareto=pareto,
                                 cancel=cancel)
        except Unreachable as e:
            if type(e) is Unreachable:
                raise unreachable(g, source, target) from None
            raise                                   # NoPathWithinBudget: names no node
        path = path_from_arcs(g, source, target, r.path.metric, r.path.distance,
                              self.road_arcs(r.path.arcs))
        pareto_points = None if r.pareto is None else [
            replace(p, arcs=self.road_arcs(p.arcs)) for p in r.pareto]
        references = {k: self.road_arcs(a) for k, a in r.references.items()}
        return replace(r, source=int(source), target=int(target), path=path,
                       pareto=pareto_points, references=references)

    def road_arcs(self, expanded_arcs) -> np.ndarray:
        """Expanded edges start(s) -> ... -> end(t) as road arcs: the arc nodes they enter."""
        arcs = np.asarray(expanded_arcs, dtype=np.int64)
        return self.model.road_arcs_of_nodes(self.model.expanded.head[arcs])
