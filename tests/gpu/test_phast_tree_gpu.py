"""A PHAST tree kept on the GPU (engine.ch.phast_tree) reads exactly as its CPU twin:
distance, path, colour bins, reached / farthest and the whole tree, on NY and on a
generated network; the path walk that outgrows its first room walks again."""
from __future__ import annotations

import numpy as np
import pytest

from engine.ch import contract, phast, phast_tree
from engine.core.backend import cpu_backend
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable, check_path
from engine.core.units import unit_of
from engine.generate.network import generate_road_network
from engine.routing.reference import scipy_matrix, sssp


def check_same(h, graph, gpu, sources, targets=30):
    on_gpu, on_cpu = phast.PhastQuery(h, gpu), phast.PhastQuery(h, cpu_backend())
    matrix = scipy_matrix(graph, h.metric)
    factor = unit_of(graph.metric_units, h.metric).axis()[0]
    rng = np.random.default_rng(5)
    for s in sources:
        kept, twin = on_gpu.device_tree(int(s)), on_cpu.device_tree(int(s))
        want = sssp(graph, int(s), h.metric, matrix).distance
        host, cpu_host = kept.to_host(), twin.to_host()
        assert np.array_equal(host.distance, want)
        for name in ("distance", "parent", "parent_arc"):
            assert np.array_equal(getattr(host, name), getattr(cpu_host, name)), name
        assert (kept.reached(), kept.farthest()) == (twin.reached(), twin.farthest())
        a, b = kept.bins(factor), twin.bins(factor)
        assert np.array_equal(a.lows, b.lows) and np.array_equal(a.highs, b.highs)
        assert a.node_bin.dtype == np.uint8 and np.array_equal(a.node_bin, b.node_bin)
        for t in rng.integers(0, graph.num_nodes, targets):
            assert kept.distance(int(t)) == twin.distance(int(t)) == want[t]
            if want[t] < 0:
                with pytest.raises(Unreachable):
                    kept.path(int(t))
                continue
            p = kept.path(int(t))
            check_path(graph, p)
            assert np.array_equal(p.arcs, twin.path(int(t)).arcs) and p.distance == want[t]


def test_new_york(ny, gpu):
    h = contract(ny, "travel_time", backend=gpu)
    assert phast.PhastQuery(h, gpu).index.narrow          # 12-byte arcs in the sweep
    check_same(h, ny, gpu, np.random.default_rng(43).integers(0, ny.num_nodes, 10))


def test_shortcuts_past_32_bits_take_the_wide_sweep(gpu):
    """A line of 20,000 arcs of 2^30: shortcuts below its core cost past 2^32, so the
    downward sweep keeps 64-bit costs, and the trees still equal the CPU twin's."""
    n, a = 20_000, np.arange(19_999)
    g = RoadGraph.from_arcs(n, np.concatenate([a, a + 1]), np.concatenate([a + 1, a]),
                            {"distance": np.full(2 * a.size, 1 << 30)})
    h = contract(g, "distance", backend=gpu)
    assert not phast.PhastQuery(h, gpu).index.narrow
    check_same(h, g, gpu, [0, n // 2, n - 1])
