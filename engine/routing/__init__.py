"""Point-to-point routing behind one small interface.

A ``Router`` answers ``route(source, target) -> Path`` between internal node indices
on one graph and one metric (raising engine.core.paths.Unreachable). Implementations:

    bidirectional.py  BidirectionalDijkstra: on the graph itself, no preprocessing
    ch_query.py       ChQuery: bidirectional upward search on a contraction hierarchy
                      with stall-on-demand, shortcuts unpacked to original arcs
    scipy_dijkstra.py ScipyDijkstra: SciPy's compiled Dijkstra, for a one-shot command
                      that should not load Numba (Workspace.one_shot)

Trees are not routes: PHAST (engine/ch/phast.py) and direct SSSP (engine/sssp) answer
one-to-all queries. ``router_for`` picks the best router for a metric.
"""
from __future__ import annotations

from typing import Protocol

from engine.core.paths import Path


class Router(Protocol):
    name: str          # "ch" or "bidirectional_dijkstra": what --json reports as "method"
    label: str         # what a person reads: "CH query", "bidirectional Dijkstra"
    metric: str

    def route(self, source: int, target: int) -> Path:
        """Shortest path between internal node indices; raises Unreachable."""
        ...


def router_for(graph, metric: str | None = None, hierarchy=None) -> Router:
    """The CH query when ``hierarchy`` was built from exactly this metric's weights,
    else bidirectional Dijkstra on the graph."""
    metric_obj = graph.metric_of(metric)
    if hierarchy is not None and hierarchy.serves(metric_obj):
        from engine.ch.query import ChQuery
        return ChQuery(hierarchy)
    from engine.routing.bidirectional import BidirectionalDijkstra
    return BidirectionalDijkstra(graph, metric_obj.name)
