"""GPU SSSP: every variant equals the reference and the CPU twin (run on the device)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.routing.reference import scipy_matrix, sssp
from engine.sssp import METHODS, TreeQuery
from tests.engine.test_sssp import check_tree


def check_gpu(graph, metric, sources, gpu, compare_cpu=True):
    matrix = scipy_matrix(graph, metric)
    on_gpu, on_cpu = TreeQuery(graph, metric, gpu), TreeQuery(graph, metric, cpu_backend())
    for s in sources:
        reference = sssp(graph, int(s), metric, matrix)
        for method in METHODS:
            got = on_gpu.tree(int(s), method).tree
            check_tree(graph, got, reference)
            if compare_cpu:   # the same tree, arc for arc, as the CPU twin
                cpu = on_cpu.tree(int(s), method).tree
                assert np.array_equal(got.parent_arc, cpu.parent_arc)


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_new_york_100_sources(ny, gpu, metric):
    sources = np.random.default_rng(21).integers(0, ny.num_nodes, 100)
    check_gpu(ny, metric, sources[:100], gpu, compare_cpu=False)
    check_gpu(ny, metric, sources[:5], gpu, compare_cpu=True)


def test_rome_100_sources(rome, gpu):
    check_gpu(rome, "weight", np.random.default_rng(22).integers(0, rome.num_nodes, 100), gpu)


def test_porto_100_sources(porto, gpu):
    for metric in porto.metric_names:
        check_gpu(porto, metric, np.random.default_rng(23).integers(0, porto.num_nodes, 100), gpu,
                  compare_cpu=False)


def test_generated_100_sources(gpu):
    g = generate_road_network(200_000, seed=3)
    for metric in g.metric_names:
        check_gpu(g, metric, np.random.default_rng(24).integers(0, g.num_nodes, 100), gpu,
                  compare_cpu=False)


def test_zero_costs_unreachable_and_64_bit_fallback(gpu):
    rng = np.random.default_rng(25)
    for trial in range(30):
        n = int(rng.integers(2, 60))
        m = int(rng.integers(0, 4 * n))
        big = trial % 3 == 0     # costs near 2^31: 32-bit distances overflow, 64-bit rerun
        w = rng.integers(2**31 - 50, 2**31 - 1, m) if big else rng.integers(0, 5, m)
        g = RoadGraph.from_arcs(n, rng.integers(0, n, m), rng.integers(0, n, m), {"w": w})
        check_gpu(g, "w", [int(rng.integers(0, n))], gpu)


def test_near_far_queues_too_small_grow_and_stay_exact(gpu):
    """A run whose queues overflow is rerun with larger ones: the same exact tree."""
    g = generate_road_network(20_000, seed=4)
    query = TreeQuery(g, "travel_time", gpu)
    query.prepared.tuning[("near_far_queue", False)] = 8        # far too small
    matrix = scipy_matrix(g, "travel_time")
    for s in (0, 777, 19_999):
        result = query.tree(s, "near_far")
        check_tree(g, result.tree, sssp(g, s, "travel_time", matrix))
        assert result.stats["queue"] > 8
    assert query.prepared.tuning[("near_far_queue", False)] > 8
