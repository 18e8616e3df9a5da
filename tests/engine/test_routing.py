"""Point-to-point routers (engine/routing) against the SciPy oracle: every path is
validated (endpoints, arcs that exist, costs summing to the distance) and its
distance equals the reference; unreachable pairs raise Unreachable."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.routing import reference
from engine.core.backend import cpu_backend
from engine.ch import contract
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable, check_path
from engine.routing import router_for
from engine.routing.bidirectional import BidirectionalDijkstra
from engine.ch.query import ChQuery
from tests.strategies import random_graphs


def check_pairs(graph, router, sources: int, targets: int, seed: int) -> int:
    """Route ``sources`` x ``targets`` random pairs; compare each with the oracle."""
    rng = np.random.default_rng(seed)
    matrix = reference.scipy_matrix(graph, router.metric)
    checked = 0
    for s in rng.integers(0, graph.num_nodes, sources):
        tree = reference.sssp(graph, int(s), router.metric, matrix)
        for t in rng.integers(0, graph.num_nodes, targets):
            check_route(graph, router, int(s), int(t), int(tree.distance[t]))
            checked += 1
    return checked


def check_route(graph, router, s: int, t: int, expected: int) -> None:
    if expected < 0:
        with pytest.raises(Unreachable):
            router.route(s, t)
        return
    path = router.route(s, t)
    check_path(graph, path)
    assert path.distance == expected, (router.name, s, t)
    assert path.metric == router.metric


def ch_router(graph, metric: str, K: int) -> ChQuery:
    return ChQuery(contract(graph, metric, K=K, backend=cpu_backend()))


@pytest.fixture(scope="module")
def generated():
    return generate_road_network(5000, seed=3)


# ------------------------------------------------------------------ real data
def test_rome_bidirectional(rome):
    assert check_pairs(rome, BidirectionalDijkstra(rome), 20, 25, seed=1) == 500


def test_rome_ch(rome):
    router = ch_router(rome, rome.default_metric, K=129)
    assert router.hierarchy.num_levels > 0 and router.hierarchy.core_nodes.size > 1
    assert check_pairs(rome, router, 20, 25, seed=2) == 500


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_generated_both_routers(generated, metric):
    checked = check_pairs(generated, BidirectionalDijkstra(generated, metric), 15, 20, seed=4)
    checked += check_pairs(generated, ch_router(generated, metric, K=257), 15, 20, seed=5)
    assert checked == 600


# -------------------------------------------- parallel arcs, zero costs, unreachable
# Sparse random graphs (parallel arcs, zero costs and unreachable pairs are common; one
# arc doubled with another cost: a parallel arc for sure) and a core size K (64 > n: the
# whole graph is the core).
SMALL_GRAPHS = st.tuples(
    random_graphs(nodes=(2, 14), max_arcs_per_node=3, weights=st.sampled_from([0, 0, 1, 2, 3, 7, 100]),
                  metric="cost", dtype=np.int32, parallel_arc=True),
    st.sampled_from([2, 3, 5, 64]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SMALL_GRAPHS)
def test_small_graphs_all_pairs(case):
    graph, K = case
    routers = [BidirectionalDijkstra(graph, "cost"), ch_router(graph, "cost", K)]
    matrix = reference.scipy_matrix(graph, "cost")
    for s in range(graph.num_nodes):
        tree = reference.sssp(graph, s, "cost", matrix)
        for t in range(graph.num_nodes):
            for router in routers:
                check_route(graph, router, s, t, int(tree.distance[t]))


def test_zero_cost_cycle_and_parallel_arcs():
    # 0 -> 1 twice (5 and 2), a zero-cost cycle 1 <-> 2, 2 -> 3; node 4 unreachable
    tail, head = [0, 0, 1, 2, 2, 3], [1, 1, 2, 1, 3, 0]
    g = RoadGraph.from_arcs(5, np.array(tail), np.array(head),
                            {"cost": np.array([5, 2, 0, 0, 4, 1], dtype=np.int32)})
    for router in (BidirectionalDijkstra(g), ch_router(g, "cost", K=2)):
        path = router.route(0, 3)
        check_path(g, path)
        assert path.distance == 6 and path.arcs[0] == g.metric("cost").tolist().index(2)
        with pytest.raises(Unreachable):
            router.route(0, 4)
        same = router.route(2, 2)
        assert same.distance == 0 and same.num_arcs == 0 and same.nodes.tolist() == [2]
        with pytest.raises(IndexError):
            router.route(0, 5)
        with pytest.raises(IndexError):
            router.route(-1, 0)


def test_ch_query_with_costs_beyond_int32(generated):
    """Costs so large that upward distances and the core matrix overflow int32: the
    CH query keeps them in int64 and stays exact."""
    w = generated.metric("distance").astype(np.int64) * (1 << 23) + 1   # each below 2^31
    g = RoadGraph.from_arcs(generated.num_nodes, generated.tail, generated.head, {"cost": w})
    router = ch_router(g, "cost", K=257)
    labels, core_dist = router._labels, router._core_dist
    assert labels.dtype == np.int64 and core_dist.dtype == np.int64
    assert ch_router(generated, "distance", K=257)._labels.dtype == np.int32
    assert check_pairs(g, router, 10, 20, seed=6) == 200


# ------------------------------------------------------------------ choosing
def test_router_for_picks_ch_only_for_its_metric(generated):
    h = contract(generated, "travel_time", K=257, backend=cpu_backend())
    chosen = router_for(generated, "travel_time", h)
    assert isinstance(chosen, ChQuery) and chosen.name == "ch" and chosen.label == "CH query"
    assert chosen.metric == "travel_time"
    other = router_for(generated, "distance", h)
    assert isinstance(other, BidirectionalDijkstra) and other.metric == "distance"
    assert other.name == "bidirectional_dijkstra" and other.label == "bidirectional Dijkstra"
    plain = router_for(generated, None, None)
    assert isinstance(plain, BidirectionalDijkstra) and plain.metric == generated.default_metric
    assert chosen.route(1, 2).distance == plain_route(generated, "travel_time", 1, 2)


def plain_route(graph, metric, s, t) -> int:
    return BidirectionalDijkstra(graph, metric).route(s, t).distance


def test_ch_query_sorts_up_and_down_lists_it_is_given_in_another_order(generated):
    """ChQuery reads contraction's up/down lists as they come (grouped by lower end);
    lists in any other order are sorted first, with the same exact answers."""
    h = contract(generated, "distance", K=257, backend=cpu_backend())
    rng = np.random.default_rng(8)
    h.up_harc, h.down_harc = rng.permutation(h.up_harc), rng.permutation(h.down_harc)
    assert check_pairs(generated, ChQuery(h), 10, 20, seed=9) == 200


@pytest.mark.parametrize("damage", ["child", "up_id", "weight", "core_pred", "level"])
def test_ch_query_refuses_a_damaged_hierarchy(generated, damage):
    """Every index the Numba query follows is checked when ChQuery is built."""
    h = contract(generated, "distance", K=257, backend=cpu_backend())
    m = h.num_original_arcs
    if damage == "child":
        h.arc_child1 = h.arc_child1.copy()
        h.arc_child1[m + 3] = m + 3                       # not an earlier arc
    elif damage == "up_id":
        h.up_harc = h.up_harc.copy()
        h.up_harc[5] = h.arc_tail.size                    # out of range
    elif damage == "weight":
        h.arc_weight = h.arc_weight.copy()
        h.arc_weight[h.up_harc[0]] = -1
    elif damage == "core_pred":
        h.core_pred = h.core_pred.copy()
        h.core_pred[0, 1] = h.core_nodes.size
    else:
        h.node_level = h.node_level.copy()
        h.node_level[0] = h.num_levels + 1
    with pytest.raises(ValueError, match="damaged hierarchy"):
        ChQuery(h)


def test_ch_query_needs_an_attached_hierarchy(generated):
    h = contract(generated, "distance", K=257, backend=cpu_backend())
    h.graph = None
    with pytest.raises(ValueError, match="attach"):
        ChQuery(h)


# ---------------------------------------------------------------------- slow
def _many_pairs(graph, metric, pairs: int, seed: int) -> None:
    """``pairs`` random pairs from 100 sources, by CH and by bidirectional Dijkstra."""
    sources = 100
    routers = [ChQuery(contract(graph, metric, backend=cpu_backend())),
               BidirectionalDijkstra(graph, metric)]
    for router in routers:
        assert check_pairs(graph, router, sources, pairs // sources, seed) == pairs


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_ny_1000_pairs(ny, metric):
    _many_pairs(ny, metric, 1_000, seed=13)


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_ny_10000_pairs(ny, metric):
    _many_pairs(ny, metric, 10_000, seed=11)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_generated_10000_pairs(metric):
    _many_pairs(generate_road_network(30_000, seed=7), metric, 10_000, seed=12)
