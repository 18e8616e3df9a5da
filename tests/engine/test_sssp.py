"""Direct SSSP variants on the CPU: exact distances and valid trees on real graphs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.core.backend import cpu_backend
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.io import load
from engine.routing.reference import scipy_matrix, sssp
from engine.sssp import METHODS, TreeQuery, shortest_path_tree
from tests.conftest import PORTO, need
from tests.strategies import random_graphs

CPU = cpu_backend()


def check_tree(graph: RoadGraph, tree, reference) -> None:
    """Distances equal the reference; every parent arc closes its node's distance."""
    assert np.array_equal(tree.distance, reference.distance)
    w = graph.metric(tree.metric).astype(np.int64)
    reached = np.flatnonzero(tree.distance >= 0)
    others = reached[reached != tree.source]
    arcs = tree.parent_arc[others]
    assert np.all(arcs >= 0), "a reached node has no parent arc"
    assert np.array_equal(graph.head[arcs], others)
    assert np.array_equal(graph.tail[arcs], tree.parent[others])
    assert np.array_equal(tree.distance[graph.tail[arcs]] + w[arcs], tree.distance[others])
    unreached = tree.distance < 0
    assert np.all(tree.parent[unreached] == -1) and np.all(tree.parent_arc[unreached] == -1)
    assert tree.parent[tree.source] == -1


def check_sources(graph, metric, sources, methods=METHODS):
    matrix = scipy_matrix(graph, metric)
    query = TreeQuery(graph, metric, CPU)
    for s in sources:
        reference = sssp(graph, int(s), metric, matrix)
        for method in methods:
            check_tree(graph, query.tree(int(s), method).tree, reference)


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_new_york_100_sources(ny, metric):
    check_sources(ny, metric, np.random.default_rng(11).integers(0, ny.num_nodes, 100))


def test_rome_100_sources(rome):
    check_sources(rome, "weight", np.random.default_rng(12).integers(0, rome.num_nodes, 100))


@pytest.mark.slow
def test_porto_100_sources():
    porto = load([need(PORTO)])
    for metric in porto.metric_names:
        check_sources(porto, metric, np.random.default_rng(13).integers(0, porto.num_nodes, 100))


def test_generated_100_sources():
    g = generate_road_network(30_000, seed=5)
    for metric in g.metric_names:
        check_sources(g, metric, np.random.default_rng(14).integers(0, g.num_nodes, 50))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(1, 30), max_arcs=90, weights=st.integers(0, 20)), st.data())
def test_random_graphs_with_zero_costs_and_unreachable_nodes(g, data):
    check_sources(g, "w", [data.draw(st.integers(0, g.num_nodes - 1))])


@pytest.mark.parametrize("k", [1, 2, 3, 6, 8])
def test_locality_any_k(rome, k):
    reference = sssp(rome, 7, "weight")
    check_tree(rome, shortest_path_tree(rome, 7, None, "kstep", CPU, k=k).tree, reference)


def test_unknown_method_and_bad_source(rome):
    with pytest.raises(ValueError, match="unknown SSSP method 'dijkstra2'"):
        shortest_path_tree(rome, 0, method="dijkstra2", backend=CPU)
    with pytest.raises(IndexError):
        shortest_path_tree(rome, rome.num_nodes, backend=CPU)
