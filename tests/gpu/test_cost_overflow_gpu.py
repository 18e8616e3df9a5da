"""Costs past int32 on the GPU (issue #35): the GPU trees, PHAST, contraction,
cost-budgeted paths and CRP customization give the CPU's exact answers on the long
road of tests/engine/test_cost_overflow.py, and a CRP route past 2^31 reports an
overflow naming the decoder."""
from __future__ import annotations

import numpy as np
import pytest

from tests.engine.test_cost_overflow import FAR, N, W, road


def test_gpu_trees_and_phast_are_exact_past_int32(gpu):
    from engine.ch import contract
    from engine.ch.phast import PhastQuery
    from engine.sssp import TreeQuery, method_names
    g = road()
    want = np.arange(N, dtype=np.int64) * W
    for method in method_names():
        assert np.array_equal(TreeQuery(g, "distance", gpu).tree(0, method).tree.distance,
                              want), method
    h = contract(g, "distance", backend=gpu)
    assert np.array_equal(PhastQuery(h, gpu).tree(0).tree.distance, want)
    from engine.ch.query import ChQuery
    assert ChQuery(h).route(0, N - 1).distance == FAR


def test_gpu_cost_budgeted_paths_are_exact_past_int32(gpu):
    from engine.csp.query.budgeted import CspQuery
    g = road()
    r = CspQuery(g, minimize="travel_time", budget_metric="distance", backend=gpu).solve(
        0, N - 1, FAR)
    assert (r.length, r.cost) == (N - 1, FAR)
    r = CspQuery(g, minimize="distance", budget_metric="travel_time", backend=gpu).solve(
        0, N - 1, N)
    assert r.length == FAR


def test_gpu_customization_and_crp_route_past_int32(gpu):
    from engine.crp import CostOverflow, CrpQuery, Overlay, partition_graph
    from engine.crp.customization.customize import Customizer
    from engine.crp.metric.decoder import parse_decoder
    g = road()
    overlay = Overlay(g, partition_graph(g, levels=(4, 6), seed=0))

    def decoder(scale):
        return parse_decoder(f'name = "long-road"\ndescription = "x"\nkind = "metric"\n'
                             f'metric = "distance"\nscale = {scale}\n')
    q = CrpQuery(overlay, Customizer(overlay, gpu).customize(decoder(1)))
    with pytest.raises(CostOverflow, match="long-road"):
        q.route(0, N - 1)
    near = (2**31 - 1) // W
    assert q.route(0, near).distance == near * W
    with pytest.raises(CostOverflow, match="long-road.*scale"):
        Customizer(overlay, gpu).customize(decoder(40))
