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

