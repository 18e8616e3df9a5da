"""Reference shortest paths (scipy.sparse.csgraph): the oracle for every algorithm.

Only the oracle lives here: the result types are engine/core/paths.py, which every
algorithm shares.
"""
from __future__ import annotations

import weakref

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from engine.core.graph import RoadGraph
from engine.core.paths import (Path, ShortestPathTree, check_node, path_from_tree,
                          tree_parent_arcs)

_matrices: "weakref.WeakKeyDictionary[RoadGraph, dict]" = weakref.WeakKeyDictionary()


def scipy_matrix(graph: RoadGraph, metric: str | None = None) -> sp.csr_matrix:
    """The graph as a scipy matrix for ``metric``, built once per graph and metric."""
    metric = metric or graph.default_metric
    per_graph = _matrices.setdefault(graph, {})
    if metric not in per_graph:
        per_graph[metric] = _build_matrix(graph, metric)
    return per_graph[metric]


def _build_matrix(graph: RoadGraph, metric: str) -> sp.csr_matrix:
    """Weighted adjacency matrix keeping the cheapest of parallel arcs.

    scipy sums duplicate entries, and treats explicit zeros as missing arcs: both
    would make the oracle wrong, so parallel arcs are reduced to their minimum and
    zero costs are stored as a tiny positive value and rounded away afterwards.
    """
    w = graph.metric(metric).astype(np.float64)
    n = graph.num_nodes
    key = graph.tail.astype(np.int64) * n + graph.head
    order = np.lexsort((w, key))
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    pick = order[first]
    weights = np.where(w[pick] == 0, _ZERO_COST, w[pick])
    return sp.csr_matrix((weights, (graph.tail[pick], graph.head[pick])), shape=(n, n))


# Zero-cost arcs as an epsilon: path sums stay below 0.5 for any graph below 1e7 nodes.
_ZERO_COST = 1e-9


def sssp(graph: RoadGraph, source: int, metric: str | None = None,
         matrix: sp.csr_matrix | None = None) -> ShortestPathTree:
    """Single-source shortest paths from internal node ``source``."""
    check_node(graph, source)
    metric = metric or graph.default_metric
    if matrix is None:
        matrix = scipy_matrix(graph, metric)
    dist, pred = csgraph.dijkstra(matrix, directed=True, indices=int(source),
                                  return_predecessors=True)
    reachable = np.isfinite(dist)
    distance = np.where(reachable, np.rint(np.where(reachable, dist, 0)), -1).astype(np.int64)
    parent = np.where(pred < 0, -1, pred).astype(np.int32)
    return ShortestPathTree(int(source), metric, distance, parent,
                            tree_parent_arcs(graph, graph.metric(metric), distance, parent))


def shortest_path(graph: RoadGraph, source: int, target: int,
                  metric: str | None = None) -> Path:
    """Point-to-point shortest path between internal node indices."""
    check_node(graph, target)
    return path_from_tree(graph, sssp(graph, source, metric), target)


class TurnAwareReference:
    """The oracle for turn-aware routing: SciPy Dijkstra on an arc-to-arc graph built
    here from the graph's own arrays (not from engine.core.turns): every pair (in-arc,
    out-arc) of every node, less the graph's banned turns, weighted by the turn's cost
    by type plus the next arc's cost. ``arc_cost`` and ``turn_cost_by_type`` come from a
    decoder; FORBIDDEN (2^31-1) in either removes the arc or turn."""

    def __init__(self, graph: RoadGraph, arc_cost, turn_cost_by_type) -> None:
        from engine.core.turns import _turn_types       # the definition of a turn's type
        forbidden = np.iinfo(np.int32).max
        self.graph = graph
        self.arc_cost = np.asarray(arc_cost, dtype=np.int64)
        bwd = graph.backward
        to_arc = np.arange(graph.num_arcs, dtype=np.int64)
        indeg = np.diff(bwd.first_in).astype(np.int64)[graph.tail]     # in-arcs at each tail
        to_arc = np.repeat(to_arc, indeg)
        k = np.arange(to_arc.size) - np.repeat(np.cumsum(indeg) - indeg, indeg)
        from_arc = bwd.in_arc[bwd.first_in[graph.tail[to_arc]] + k].astype(np.int64)
        keep = np.ones(from_arc.size, dtype=bool)
        if graph.turn_restrictions is not None and len(graph.turn_restrictions):
            banned = set(zip(graph.turn_restrictions.from_arc.tolist(),
                             graph.turn_restrictions.to_arc.tolist()))
            keep = np.array([p not in banned for p in zip(from_arc.tolist(), to_arc.tolist())],
                            dtype=bool) if from_arc.size else keep
        turn_cost = np.asarray(turn_cost_by_type, dtype=np.int64)[_turn_types(graph, from_arc, to_arc)]
        keep &= (turn_cost != forbidden) & (self.arc_cost[to_arc] != forbidden) & \
            (self.arc_cost[from_arc] != forbidden)
        w = (turn_cost + self.arc_cost[to_arc])[keep].astype(np.float64)
        m = graph.num_arcs
        self.matrix = sp.csr_matrix((np.where(w == 0, _ZERO_COST, w),
                                     (from_arc[keep], to_arc[keep])), shape=(m, m))
        self.forbidden = forbidden

    def distances_from(self, source: int) -> np.ndarray:
        """Turn-aware distance from node ``source`` to every node (int64, -1 unreachable)."""
        g = self.graph
        out = np.arange(g.first_out[source], g.first_out[source + 1])
        out = out[self.arc_cost[out] != self.forbidden]
        node = np.full(g.num_nodes, np.inf)
        node[source] = 0
        if out.size:
            d = csgraph.dijkstra(self.matrix, directed=True, indices=out)
            by_arc = (d + self.arc_cost[out][:, None]).min(axis=0)
            np.minimum.at(node, g.head, by_arc)
        return np.where(np.isfinite(node), np.rint(np.where(np.isfinite(node), node, 0)), -1
                        ).astype(np.int64)
