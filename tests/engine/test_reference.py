"""The reference oracle against independent implementations; path validity."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.sparse import csgraph

from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable, check_path, path_from_tree
from engine.routing.reference import shortest_path, sssp
from tests.strategies import random_graphs


def networkx_distances(g: RoadGraph, source: int) -> dict[int, int]:
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_nodes))
    for t, h, w in zip(g.tail.tolist(), g.head.tolist(), g.metric("w").tolist()):
        if not G.has_edge(t, h) or G[t][h]["weight"] > w:  # parallel arcs: keep the cheapest
            G.add_edge(t, h, weight=w)
    return nx.single_source_dijkstra_path_length(G, source)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(1, 25), max_arcs=80, weights=st.integers(0, 50)), st.data())
def test_distances_equal_networkx_and_paths_are_valid(g, data):
    source = data.draw(st.integers(0, g.num_nodes - 1))
    tree = sssp(g, source)
    expected = networkx_distances(g, source)
    got = {v: int(d) for v, d in enumerate(tree.distance) if d >= 0}
    assert got == expected
    for target in range(g.num_nodes):
        if target in expected:
            check_path(g, path_from_tree(g, tree, target))
        else:
            with pytest.raises(Unreachable):
                path_from_tree(g, tree, target)
    assert tree.parent[source] == -1 and tree.parent_arc[source] == -1


def independent_matrix(g: RoadGraph, metric: str) -> sp.csr_matrix:
    """Cheapest parallel arc via np.minimum.at on a dense-key table (not the oracle's sort)."""
    key = g.tail.astype(np.int64) * g.num_nodes + g.head
    uniq, inverse = np.unique(key, return_inverse=True)
    best = np.full(uniq.size, np.iinfo(np.int64).max)
    np.minimum.at(best, inverse, g.metric(metric).astype(np.int64))
    return sp.csr_matrix((best.astype(float), (uniq // g.num_nodes, uniq % g.num_nodes)),
                         shape=(g.num_nodes, g.num_nodes))


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_new_york_20_random_sources(ny, metric):
    rng = np.random.default_rng(2)
    matrix = independent_matrix(ny, metric)
    for source in rng.integers(0, ny.num_nodes, 20):
        tree = sssp(ny, int(source), metric)
        expected = csgraph.dijkstra(matrix, indices=int(source))
        assert np.array_equal(tree.distance, np.where(np.isinf(expected), -1, expected).astype(np.int64))
        for target in rng.integers(0, ny.num_nodes, 5):
            if tree.distance[target] >= 0:
                check_path(ny, path_from_tree(ny, tree, int(target)))


def test_parallel_arcs_choose_the_cheaper_one():
    g = RoadGraph.from_arcs(2, [0, 0], [1, 1], {"a": [9, 4], "b": [1, 8]})
    pa = shortest_path(g, 0, 1, "a")
    pb = shortest_path(g, 0, 1, "b")
    assert (pa.distance, pb.distance) == (4, 1)
    assert pa.arcs.tolist() != pb.arcs.tolist()   # different arcs between the same nodes
    check_path(g, pa), check_path(g, pb)


def test_unreachable_target_is_an_error_with_file_ids():
    g = RoadGraph.from_arcs(3, [0], [1], {"w": [1]}, node_id=[7, 8, 9])
    with pytest.raises(Unreachable, match="node 9 cannot be reached from node 7"):
        shortest_path(g, 0, 2)


def test_check_path_detects_a_wrong_distance():
    g = RoadGraph.from_arcs(2, [0], [1], {"w": [3]})
    p = shortest_path(g, 0, 1)
    bad = type(p)(p.source, p.target, p.metric, p.distance + 1, p.nodes, p.arcs)
    with pytest.raises(AssertionError, match="sum to 3"):
        check_path(g, bad)
