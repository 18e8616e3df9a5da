"""The turn-aware model on the GPU (issue #34): the turn-aware contraction equals its
CPU twin (levels, arcs, weights), PHAST and the direct SSSP trees on the expanded graph
equal the independent arc-to-arc oracle, and cost-budgeted paths on the GPU equal the
CPU's, on Porto (the device's cache) and the generated network with banned turns."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.core.paths import path_from_tree
from engine.model.hierarchy import contract_turn_aware
from engine.workspace import Workspace
from tests.turn_oracle import oracle_for


@pytest.fixture(scope="module", params=["generated", "porto"])
def graph(request):
    if request.param == "porto":
        return request.getfixturevalue("porto")
    from engine.generate.network import generate_road_network
    return generate_road_network(30_000, seed=4)


def test_contraction_parity_and_trees(graph, gpu):
    ws = Workspace(graph, gpu)
    model = ws.turn_model(("distance",))
    on_gpu = contract_turn_aware(model, "distance", backend=gpu)
    on_cpu = contract_turn_aware(model, "distance", backend=cpu_backend())
    assert on_gpu.num_levels == on_cpu.num_levels
    np.testing.assert_array_equal(on_gpu.node_level, on_cpu.node_level)
    np.testing.assert_array_equal(on_gpu.arc_weight, on_cpu.arc_weight)
    ws.set_hierarchy(on_gpu)
    from engine.capabilities.tree import _direct_tree, _phast_tree
    oracle = oracle_for(graph, "distance")
    rng = np.random.default_rng(9)
    for s in rng.choice(graph.num_nodes, 6, replace=False):
        want = oracle.distances_from(int(s))
        for run in (_direct_tree, _phast_tree):
            tree = run(ws, int(s), "distance", "auto", False).tree
            np.testing.assert_array_equal(tree.distance, want)
            for t in rng.choice(np.flatnonzero(want > 0), 5):
                oracle.check_legal(path_from_tree(graph, tree, int(t)))


def test_cost_budgeted_paths_gpu_equal_cpu(graph, gpu):
    on_gpu, on_cpu = Workspace(graph, gpu), Workspace(graph, cpu_backend())
    q_gpu = on_gpu.csp_query("distance", "travel_time")
    q_cpu = on_cpu.csp_query("distance", "travel_time")
    oracle = oracle_for(graph, "distance")
    rng = np.random.default_rng(4)
    checked = 0
    for s, t in rng.integers(0, graph.num_nodes, (40, 2)):
        s, t = int(s), int(t)
        if s == t or oracle.distances_from(s)[t] < 0:
            continue
        least = q_cpu.solve(s, t, 2**40).least_cost
        budget = int(least * 1.1)
        a, b = q_gpu.solve(s, t, budget), q_cpu.solve(s, t, budget)
        assert (a.length, a.cost <= budget) == (b.length, True)
        oracle.check_legal(a.path)
        checked += 1
    assert checked >= 20
