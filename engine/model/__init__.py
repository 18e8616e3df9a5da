"""The routing model: one answer to "which paths are there and what do they cost".

A path is a sequence of arcs; its cost is the sum of its arcs and of the turns between
them; banned turns (OSM ``no_*``/``only_*``, the generated network's banned left turns)
are never taken. Every capability that draws or writes a path (route, trees, service
areas, cost-budgeted paths, export) runs on this model.

    defaults.py   the default decoder of a metric: which turn costs a plain route pays
    expanded.py   TurnModel: the turn-expanded graph that node-based algorithms search
    router.py     TurnAwareRouter: a node-based router on the expanded graph, paths
                  read back as road arcs; and the choice of router for a metric

The trick that lets every node-based algorithm (bidirectional Dijkstra, CU-CH
contraction and its query, PHAST, direct SSSP, the cost-budgeted labeling) serve the
turn-aware model unchanged is the expanded graph of expanded.py: one node per road
arc, one edge per allowed turn, plus a start node and an end node per road node. A
search from node s's start node to node t's end node is a turn-aware search from s to t.

Where it provably changes nothing (no restriction in force and every turn free,
as on DIMACS graphs by the benchmark's own definition) the node-based search on the
road graph is the same answer, and is used as the fast path.
"""
from __future__ import annotations

__all__ = ["TurnModel", "turn_model", "default_decoder", "needs_turns"]


def __getattr__(name: str):
    import importlib
    where = {"TurnModel": "expanded", "turn_model": "expanded", "default_decoder": "defaults",
             "needs_turns": "defaults"}
    if name in where:
        return getattr(importlib.import_module(f"engine.model.{where[name]}"), name)
    raise AttributeError(f"module 'engine.model' has no attribute {name!r}")
