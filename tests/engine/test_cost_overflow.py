"""Costs that cannot wrap (issue #35): routes whose cost reaches 2^31 answer exactly or
say the costs overflowed, in every engine; never "unreachable".

The network is a road of 600 nodes (both ways) whose arcs cost 2^22: the whole road
costs about 2.5e9, more than int32, while any CRP cell (16 and 64 nodes) costs far
less, so the customization fits and only the route is too long for the CRP query's
int32 costs."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable

N, W = 600, 1 << 22
FAR = (N - 1) * W              # 2,512,388,... > 2^31


def road(both_ways: bool = True) -> RoadGraph:
    a = np.arange(N - 1)
    tail, head = (np.concatenate([a, a + 1]), np.concatenate([a + 1, a])) if both_ways \
        else (a, a + 1)
    return RoadGraph.from_arcs(N, tail, head, {"distance": np.full(tail.size, W),
                                               "travel_time": np.full(tail.size, 1)})


def crp_query(g, scale: int = 1):
    from engine.crp import CrpQuery, Overlay, partition_graph
    from engine.crp.metric.decoder import parse_decoder
    from engine.crp.customization.customize import customize
    overlay = Overlay(g, partition_graph(g, levels=(4, 6), seed=0))
    decoder = parse_decoder(f'name = "long-road"\ndescription = "x"\nkind = "metric"\n'
                            f'metric = "distance"\nscale = {scale}\n')
    return CrpQuery(overlay, customize(overlay, decoder))


def test_a_crp_route_past_int32_reports_an_overflow_naming_the_decoder():
    from engine.crp import CostOverflow
    q = crp_query(road())
    with pytest.raises(CostOverflow, match="long-road"):
        q.route(0, N - 1)
    assert isinstance(CostOverflow("x"), OverflowError)      # an input error, not a bug
    near = (2**31 - 1) // W                                 # the farthest node that fits
    assert q.route(0, near).distance == near * W
    assert q.route(N - 1, N - 1 - near).distance == near * W


def test_an_unreachable_target_stays_unreachable():
    q = crp_query(road(both_ways=False))
    with pytest.raises(Unreachable):
        q.route(N - 1, 0)
    with pytest.raises(Unreachable):
        q.route(N - 1, N - 2)


def test_a_cell_that_overflows_names_the_decoder():
    from engine.crp import CostOverflow
    with pytest.raises(CostOverflow, match="long-road.*scale"):
        crp_query(road(), scale=40)


def test_bidirectional_dijkstra_and_ch_are_exact_past_int32():
    from engine.ch import Hierarchy, contract   # noqa: F401 (lazy package face)
    from engine.ch.query import ChQuery
    from engine.routing.bidirectional import BidirectionalDijkstra
    g = road()
    assert BidirectionalDijkstra(g, "distance").route(0, N - 1).distance == FAR
    h = contract(g, "distance")
    assert ChQuery(h).route(0, N - 1).distance == FAR
    assert ChQuery(h).route(N - 1, 0).distance == FAR


def test_trees_are_exact_past_int32():
    from engine.ch import contract
    from engine.ch.phast import PhastQuery
    from engine.sssp import TreeQuery, method_names
    g = road()
    want = np.arange(N, dtype=np.int64) * W
    for method in method_names():
        assert np.array_equal(TreeQuery(g, "distance").tree(0, method).tree.distance, want), method
    assert np.array_equal(PhastQuery(contract(g, "distance")).tree(0).tree.distance, want)


def test_cost_budgeted_paths_are_exact_past_int32():
    from engine.csp.query.budgeted import CspQuery
    g = road()
    # minimize travel time with the distance (2.5e9 in all) as the budget, and back
    r = CspQuery(g, minimize="travel_time", budget_metric="distance").solve(0, N - 1, FAR)
    assert (r.length, r.cost) == (N - 1, FAR)
    r = CspQuery(g, minimize="distance", budget_metric="travel_time").solve(0, N - 1, N)
    assert r.length == FAR
