"""TurnAwareRouter: a node-based router (bidirectional Dijkstra, the CH query) run on
a TurnModel's expanded graph from start(s) to end(t), its path read back as road arcs."""
from __future__ import annotations

import numpy as np

from engine.core.paths import Path, Unreachable, check_node, unreachable
from engine.model.expanded import TurnModel


class TurnAwareRouter:
    def __init__(self, model: TurnModel, inner, metric: str) -> None:
        self.model, self.inner, self.metric = model, inner, metric
        self.name = inner.name              # "ch" or "bidirectional_dijkstra"
        self.label = f"turn-aware {inner.label}"
        self.turn_aware = True

    def route(self, source: int, target: int) -> Path:
        g = self.model.graph
        check_node(g, source)
        check_node(g, target)
        if source == target:
            return Path(int(source), int(target), self.metric, 0,
                        np.array([source], dtype=np.int32), np.zeros(0, dtype=np.int32))
        try:
            p = self.inner.route(self.model.start(source), self.model.end(target))
        except Unreachable:
            raise unreachable(g, source, target) from None
        return self.model.road_path(p, source, target)

    def turns_taken(self, path: Path) -> dict:
        return self.model.turns_taken(path)


def turn_aware_router(model: TurnModel, metric: str, hierarchy=None) -> TurnAwareRouter:
    """The CH query on ``hierarchy`` when it was contracted from this model's expanded
    graph for ``metric``, else bidirectional Dijkstra on the expanded graph."""
    expanded_metric = model.expanded.metric_of(metric)
    if hierarchy is not None and hierarchy.serves(expanded_metric):
        from engine.ch.query import ChQuery
        inner = ChQuery(hierarchy)
    else:
        from engine.routing.bidirectional import BidirectionalDijkstra
        inner = BidirectionalDijkstra(model.expanded, metric)
        # the router holds its own copy of the reverse CSR (arcs packed with weights):
        # the expanded graph's cached one (4 B per node + 8 B per edge, 116 MB at 1 M
        # road nodes) would only sit beside it; whoever needs it again rebuilds it
        model.expanded.__dict__.pop("backward", None)
    return TurnAwareRouter(model, inner, metric)
