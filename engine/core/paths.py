"""Result types shared by every algorithm: shortest-path trees, paths, Unreachable,
the path read off a tree, and path validation.

A path is a list of node ids *and* arc ids: with parallel arcs the node list alone
does not say which arc was taken.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    # turn-aware trees (engine.model): the arc before each arc on its best path, -1 for
    # the first arc and unreached arcs. The best path to a node need not extend the best
    # path to its parent node (a banned turn may lie between), so paths follow arcs.
    arc_parent: np.ndarray | None = None

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


def check_node(graph, v: int) -> None:
    """Raise IndexError unless ``v`` is an internal node index of ``graph``."""
    if not 0 <= int(v) < graph.num_nodes:
        raise IndexError(f"node index {v} out of range 0..{graph.num_nodes - 1}")


def unreachable(graph, source: int, target: int) -> Unreachable:
    return Unreachable(f"node {graph.node_id[target]} cannot be reached from "
                       f"node {graph.node_id[source]}")


def path_from_arcs(graph, source: int, target: int, metric: str, distance: int, arcs) -> Path:
    """A Path of the arc ids ``arcs`` (in path order) from ``source`` to ``target``."""
    arcs = np.asarray(arcs, dtype=np.int32)
    nodes = np.concatenate([[source], graph.head[arcs]]).astype(np.int32)
    return Path(int(source), int(target), metric, int(distance), nodes, arcs)


def path_from_tree(graph, tree: ShortestPathTree, target: int) -> Path:
    """The tree's path to ``target`` (raises Unreachable)."""
    check_node(graph, target)
    if tree.distance[target] < 0:
        raise unreachable(graph, tree.source, target)
    if tree.arc_parent is not None:
        return _path_from_arc_tree(graph, tree, int(target))
    arcs = []
    v = int(target)
    while v != tree.source:
        a = int(tree.parent_arc[v])
        if a < 0 or len(arcs) > graph.num_nodes:
            raise RuntimeError(f"broken shortest-path tree at node {graph.node_id[v]}")
        arcs.append(a)
        v = int(graph.tail[a])
    return path_from_arcs(graph, tree.source, target, tree.metric, int(tree.distance[target]),
                          arcs[::-1])


def _path_from_arc_tree(graph, tree: ShortestPathTree, target: int) -> Path:
    arcs, a = [], int(tree.parent_arc[target])
    while a >= 0 and len(arcs) <= graph.num_arcs:
        arcs.append(a)
        a = int(tree.arc_parent[a])
    if target != tree.source and (not arcs or graph.tail[arcs[-1]] != tree.source):
        raise RuntimeError(f"broken shortest-path tree at node {graph.node_id[target]}")
    return path_from_arcs(graph, tree.source, target, tree.metric, int(tree.distance[target]),
                          arcs[::-1])


def tree_parent_arcs(graph, weights: np.ndarray, distance: np.ndarray,
                     parent: np.ndarray) -> np.ndarray:
    """For each node, an arc parent -> node whose cost closes the distance gap."""
    tail, head = graph.tail, graph.head
    tight = (parent[head] == tail) & (distance[tail] >= 0) & \
            (distance[tail] + weights == distance[head])
    arcs = np.flatnonzero(tight).astype(np.int32)
    parent_arc = np.full(graph.num_nodes, -1, dtype=np.int32)
    parent_arc[head[arcs]] = arcs
    return parent_arc


def check_path(graph, path: Path) -> None:
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
    if int(w[path.arcs].astype(np.int64).sum()) != path.distance:
        raise AssertionError(f"path costs sum to {int(w[path.arcs].astype(np.int64).sum())}, "
                             f"not its distance {path.distance}")
