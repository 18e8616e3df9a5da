"""The one-shot router (engine/routing/scipy_dijkstra.py) gives the answers of the Numba
router it stands in for: the same distance for every pair, Unreachable for the same
pairs, a valid path (endpoints, arcs that exist, costs summing to the distance), and
the same path wherever the shortest path is unique. Parallel arcs, zero-cost arcs and
self-loops included; on NY too. A Workspace uses it only in a one-shot run, only on
the road graph with no hierarchy, only where float64 sums are exact."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.backend import cpu_backend
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable, check_path
from engine.routing.bidirectional import BidirectionalDijkstra
from engine.routing.scipy_dijkstra import ScipyDijkstra, exact_in_float
from engine.workspace import Workspace
from tests.conftest import NY_D, need
from tests.strategies import random_graphs


def shortest_path_counts(graph, metric: str, source: int) -> tuple[np.ndarray, np.ndarray]:
    """(distance, number of shortest paths, capped at 2) from ``source``: the tight arcs
    (dist[u] + w == dist[v]) counted in order of distance, every zero-cost tight arc
    counted along (a zero-cost cycle of tight arcs makes the count 2 for its nodes)."""
    from scipy.sparse.csgraph import dijkstra

    from engine.routing.reference import scipy_matrix
    dist = dijkstra(scipy_matrix(graph, metric), indices=source)
    dist = np.where(np.isfinite(dist), np.rint(np.where(np.isfinite(dist), dist, 0)), -1)
    w = graph.metric(metric).astype(np.int64)
    tail, head = graph.tail, graph.head
    tight = (dist[tail] >= 0) & (dist[tail] + w == dist[head])
    count = np.zeros(graph.num_nodes, np.int64)
    count[source] = 1
    arcs = np.flatnonzero(tight)
    for _ in range(graph.num_nodes + 1):       # relax to a fixed point (ties at zero cost)
        new = np.zeros_like(count)
        new[source] = 1
        np.add.at(new, head[arcs], count[tail[arcs]])
        new = np.minimum(new, 2)
        if np.array_equal(new, count):
            break
        count = new
    return dist.astype(np.int64), count


def same_answers(graph, metric: str, pairs) -> int:
    """Both routers on ``pairs``; returns how many paths were unique (and so compared)."""
    fast, numba = ScipyDijkstra(graph, metric), BidirectionalDijkstra(graph, metric)
    unique = 0
    for s in sorted({s for s, _ in pairs}):
        dist, count = shortest_path_counts(graph, metric, s)
        for t in (t for a, t in pairs if a == s):
            if dist[t] < 0:
                for router in (fast, numba):
                    with pytest.raises(Unreachable):
                        router.route(s, t)
                continue
            a, b = fast.route(s, t), numba.route(s, t)
            check_path(graph, a)
            assert a.distance == b.distance == dist[t] and a.metric == metric
            if count[t] == 1:
                assert np.array_equal(a.nodes, b.nodes) and np.array_equal(a.arcs, b.arcs)
                unique += 1
    return unique


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(1, 25), max_arcs_per_node=4, weights=st.integers(0, 9),
                     parallel_arc=True), st.data())
def test_random_graphs_with_ties_zero_costs_and_parallel_arcs(graph, data):
    n = graph.num_nodes
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                               min_size=1, max_size=12))
    same_answers(graph, "w", pairs)


@settings(max_examples=60, deadline=None)
@given(random_graphs(nodes=(2, 40), max_arcs_per_node=5, weights=st.integers(1, 2**31 - 1)),
       st.integers(0, 2**32))
def test_wide_costs_give_unique_paths_and_the_same_path(graph, seed):
    rng = np.random.default_rng(seed)
    pairs = [tuple(map(int, p)) for p in rng.integers(0, graph.num_nodes, (10, 2))]
    same_answers(graph, "w", pairs)


def test_parallel_arcs_take_the_cheapest_and_zero_costs_are_arcs():
    #   0 -> 1 twice (4, then 0), 1 -> 2 (0), 0 -> 2 (1): the zero-cost way wins
    g = RoadGraph.from_arcs(3, np.array([0, 0, 1, 0]), np.array([1, 1, 2, 2]),
                            {"w": np.array([4, 0, 0, 1])})
    p = ScipyDijkstra(g, "w").route(0, 2)
    assert p.distance == 0 and p.nodes.tolist() == [0, 1, 2]
    assert g.head[p.arcs].tolist() == [1, 2] and g.metric("w")[p.arcs].tolist() == [0, 0]
    assert ScipyDijkstra(g, "w").route(1, 1).nodes.tolist() == [1]


def test_ny_pairs_agree_with_bidirectional_dijkstra():
    from engine.io import load
    g = load([need(NY_D)])
    rng = np.random.default_rng(36)
    pairs = [(0, 264345)] + [tuple(map(int, p)) for p in rng.integers(0, g.num_nodes, (24, 2))]
    assert same_answers(g, "distance", pairs) >= 3    # paths compared where unique (6 of 25)


def test_costs_too_large_for_float64_are_not_searched_by_scipy(monkeypatch):
    assert exact_in_float(np.full(2**22 - 1, 2**31 - 1, np.int32))
    assert not exact_in_float(np.full(2**22 + 1, 2**31 - 1, np.int32))
    import engine.routing.scipy_dijkstra as module
    monkeypatch.setattr(module, "FLOAT_EXACT", 5)        # as if 2 + 3 were past 2^53
    g = RoadGraph.from_arcs(3, np.array([0, 1]), np.array([1, 2]), {"w": np.array([2, 3])})
    with pytest.raises(ValueError, match="too large"):
        ScipyDijkstra(g, "w")
    workspace = Workspace(g, cpu_backend())
    workspace.one_shot = True
    router = workspace.router("w")
    assert router.name == "bidirectional_dijkstra" and router.route(0, 2).distance == 5


def test_only_a_one_shot_workspace_uses_it_and_only_on_the_road_graph(tmp_path):
    from engine.generate.network import generate_road_network
    dimacs_like = RoadGraph.from_arcs(3, np.array([0, 1]), np.array([1, 2]), {"w": np.array([2, 3])})
    window = Workspace(dimacs_like, cpu_backend())
    assert window.router("w").name == "bidirectional_dijkstra"
    one_shot = Workspace(dimacs_like, cpu_backend())
    one_shot.one_shot = True
    assert one_shot.router("w").name == "dijkstra_scipy"
    assert one_shot.router("w", node_based=True).name == "dijkstra_scipy"
    turns = Workspace(generate_road_network(400, seed=2), cpu_backend())   # road classes: turn costs
    turns.one_shot = True
    assert turns.router("travel_time").name != "dijkstra_scipy"
