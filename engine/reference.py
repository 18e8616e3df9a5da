"""Reference shortest paths (scipy.sparse.csgraph): the oracle for every algorithm.

Results carry distances (int64, -1 unreachable), a parent node and the parent arc
per node, so a path is a list of node ids *and* arc ids: with parallel arcs the
node list alone does not say which arc was taken.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from engine.graph import RoadGraph

UNREACHABLE = -1


class Unreachable(Exception):
    """The target cannot be reached from the source."""


@dataclass(frozen=True)
class ShortestPathTree:
    source: int
    metric: str
    distance: np.ndarray     # int64 [n], -1 where unreachable
    parent: np.ndarray       # int32 [n], -1 for the source and unreachable nodes
    parent_arc: np.ndarray   # int32 [n], arc parent -> node, -1 likewise

    @property
    def reachable(self) -> np.ndarray:
        return self.distance >= 0


@dataclass(frozen=True)
class Path:
    source: int
    target: int
    metric: str
    distance: int
    nodes: np.ndarray   # int32 [k+1] internal indices, source first
    arcs: np.ndarray    # int32 [k] arc ids

    @property
    def num_arcs(self) -> int:
        return int(self.arcs.size)


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
    _check_node(graph, source)
    metric = metric or graph.default_metric
    if matrix is None:
        matrix = scipy_matrix(graph, metric)
    dist, pred = csgraph.dijkstra(matrix, directed=True, indices=int(source),
                                  return_predecessors=True)
    reachable = np.isfinite(dist)
    distance = np.where(reachable, np.rint(np.where(reachable, dist, 0)), -1).astype(np.int64)
    parent = np.where(pred < 0, -1, pred).astype(np.int32)
    return ShortestPathTree(int(source), metric, distance, parent,
                            tree_parent_arcs(graph, metric, distance, parent))


def tree_parent_arcs(graph: RoadGraph, metric: str, distance: np.ndarray,
                     parent: np.ndarray) -> np.ndarray:
    """For each node, an arc parent -> node whose cost closes the distance gap."""
    w = graph.metric(metric)
    tail, head = graph.tail, graph.head
    tight = (parent[head] == tail) & (distance[tail] >= 0) & \
            (distance[tail] + w == distance[head])
    arcs = np.flatnonzero(tight).astype(np.int32)
    parent_arc = np.full(graph.num_nodes, -1, dtype=np.int32)
    parent_arc[head[arcs]] = arcs
    return parent_arc


def path_from_tree(graph: RoadGraph, tree: ShortestPathTree, target: int) -> Path:
    _check_node(graph, target)
    if tree.distance[target] < 0:
        raise Unreachable(f"node {graph.node_id[target]} cannot be reached from "
                          f"node {graph.node_id[tree.source]}")
    arcs = []
    v = int(target)
    while v != tree.source:
        a = int(tree.parent_arc[v])
        if a < 0 or len(arcs) > graph.num_nodes:
            raise RuntimeError(f"broken shortest-path tree at node {graph.node_id[v]}")
        arcs.append(a)
        v = int(graph.tail[a])
    arcs = np.asarray(arcs[::-1], dtype=np.int32)
    nodes = np.concatenate([[tree.source], graph.head[arcs]]).astype(np.int32)
    return Path(tree.source, int(target), tree.metric, int(tree.distance[target]), nodes, arcs)


def shortest_path(graph: RoadGraph, source: int, target: int,
                  metric: str | None = None) -> Path:
    """Point-to-point shortest path between internal node indices."""
    _check_node(graph, target)
    return path_from_tree(graph, sssp(graph, source, metric), target)


def check_path(graph: RoadGraph, path: Path) -> None:
    """Validate a path: endpoints, consecutive arcs, and costs summing to its distance."""
    w = graph.metric(path.metric)
    if path.nodes[0] != path.source or path.nodes[-1] != path.target:
        raise AssertionError("path does not run from source to target")
    if path.arcs.size != path.nodes.size - 1:
        raise AssertionError("path has the wrong number of arcs")
    if path.arcs.size:
        if np.any(graph.tail[path.arcs] != path.nodes[:-1]) or \
                np.any(graph.head[path.arcs] != path.nodes[1:]):
            raise AssertionError("path arcs do not join its nodes")
    if int(w[path.arcs].sum()) != path.distance:
        raise AssertionError(f"path costs sum to {int(w[path.arcs].sum())}, "
                             f"not its distance {path.distance}")


def _check_node(graph: RoadGraph, v: int) -> None:
    if not 0 <= int(v) < graph.num_nodes:
        raise IndexError(f"node index {v} out of range 0..{graph.num_nodes - 1}")
