"""The CRP query's top-level bound tables built on the GPU (engine/crp/query/bounds_gpu.py)
equal the CPU's Dijkstras table for table, and routes that use them equal the
turn-aware oracle."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp import CrpQuery
from engine.crp.query.bounds import TopBounds
from engine.generate.network import generate_road_network
from tests.engine.test_crp import compare_with_oracle, crp_setup

TABLES = ("lb", "cell_lb", "group_lb", "group_cell_lb")


@pytest.mark.parametrize("nodes, levels, decoder, seed", [
    (6_000, (4, 7, 9), "car-fastest", 21),
    (24_000, (4, 6, 8), "delivery", 11),        # ~90 top cells
    (3_000, (5,), "car-fastest", 3),            # one level: one entry group
])
def test_gpu_tables_equal_the_cpu_dijkstras(gpu, nodes, levels, decoder, seed):
    g = generate_road_network(nodes, seed=seed)
    overlay, metric, query = crp_setup(g, decoder, levels=levels)
    cpu, q = query._bounds, query.space
    cpu.build(query.shortcuts)
    on_gpu = TopBounds(overlay, q, gpu)
    on_gpu.build(query.shortcuts)
    assert on_gpu.done.all() and on_gpu.build_ms > 0
    for name in TABLES:
        assert np.array_equal(getattr(cpu, name), getattr(on_gpu, name)), name


def test_routes_on_gpu_tables_match_the_oracle(gpu):
    g = generate_road_network(12_000, seed=40)
    overlay, metric, _ = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    query = CrpQuery(overlay, metric, backend=gpu)
    assert compare_with_oracle(g, overlay, metric, query, 15, 20, seed=40) == 300
    assert query._bounds.backend is gpu
