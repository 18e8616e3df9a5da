"""CU-CH on the GPU: the same hierarchy as the CPU, exact PHAST trees (device machine)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.ch import phast
from engine.core.backend import cpu_backend
from engine.ch import contract
from engine.generate.network import generate_road_network
from engine.routing.reference import scipy_matrix, sssp
from tests.engine.test_ch import check_invariants, check_shortcuts_unpack
from tests.engine.test_sssp import check_tree

SAME = ("node_level", "arc_tail", "arc_head", "arc_weight", "arc_child1", "arc_child2",
        "up_first", "up_harc", "down_first", "down_harc", "core_nodes", "core_dist")


def check_gpu_queries(h, graph, sources, gpu):
    matrix = scipy_matrix(graph, h.metric)
    on_gpu, on_cpu = phast.PhastQuery(h, gpu), phast.PhastQuery(h, cpu_backend())
    for s in sources:
        tree = on_gpu.tree(int(s)).tree
        check_tree(graph, tree, sssp(graph, int(s), h.metric, matrix))
        assert np.array_equal(tree.parent_arc, on_cpu.tree(int(s)).tree.parent_arc)


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_new_york_same_hierarchy_and_200_exact_trees(ny, gpu, metric):
    h_gpu = contract(ny, metric, backend=gpu)
    h_cpu = contract(ny, metric, backend=cpu_backend())
    for name in SAME:
        assert np.array_equal(getattr(h_gpu, name), getattr(h_cpu, name)), name
    check_invariants(h_gpu)
    check_shortcuts_unpack(h_gpu, ny)
    sources = np.random.default_rng(41).integers(0, ny.num_nodes, 200)
    check_gpu_queries(h_gpu, ny, sources[:200], gpu)
    batch = phast.PhastQuery(h_gpu, gpu).distances(sources[:16])
    on_cpu = phast.PhastQuery(h_gpu, cpu_backend())
    for row, s in zip(batch, sources[:16]):
        assert np.array_equal(row, on_cpu.tree(int(s)).tree.distance)


def test_rome_and_generated(rome, gpu):
    h = contract(rome, K=64, backend=gpu)
    check_invariants(h)
    check_gpu_queries(h, rome, np.random.default_rng(42).integers(0, rome.num_nodes, 200), gpu)
    g = generate_road_network(200_000, seed=6)
    h = contract(g, "travel_time", backend=gpu)
    h_cpu = contract(g, "travel_time", backend=cpu_backend())
    for name in SAME:
        assert np.array_equal(getattr(h, name), getattr(h_cpu, name)), name
    check_gpu_queries(h, g, np.random.default_rng(43).integers(0, g.num_nodes, 200), gpu)


def test_porto_both_metrics(porto, gpu):
    for metric in porto.metric_names:
        h = contract(porto, metric, backend=gpu)
        check_invariants(h)
        check_gpu_queries(h, porto, np.random.default_rng(44).integers(0, porto.num_nodes, 200), gpu)
