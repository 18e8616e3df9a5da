"""A PHAST tree kept on the GPU (engine.ch.phast_tree) reads exactly as its CPU twin:
distance, path, colour bins, reached / farthest and the whole tree, on NY and on a
generated network; the path walk that outgrows its first room walks again. Trees take
32-bit rows; every step flags the distances past 32 bits, and such a tree is redone
with 64-bit rows (engine.ch.phast_gpu)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.ch import contract, phast, phast_gpu, phast_tree
from engine.core.backend import cpu_backend
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable, check_path
from engine.core.units import unit_of
from engine.generate.network import generate_road_network
from engine.routing.reference import scipy_matrix, sssp


def check_same(h, graph, gpu, sources, targets=30, bits=32):
    on_gpu, on_cpu = phast.PhastQuery(h, gpu), phast.PhastQuery(h, cpu_backend())
    matrix = scipy_matrix(graph, h.metric)
    factor = unit_of(graph.metric_units, h.metric).axis()[0]
    rng = np.random.default_rng(5)
    for s in sources:
        kept, twin = on_gpu.device_tree(int(s)), on_cpu.device_tree(int(s))
        assert on_gpu.last_bits == bits
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


def test_generated_32_bit_rows_and_per_level_timing(gpu):
    g = generate_road_network(20_000, seed=5)
    h = contract(g, "travel_time", backend=gpu)
    sources = np.random.default_rng(44).integers(0, g.num_nodes, 6)
    check_same(h, g, gpu, sources)
    on_gpu, on_cpu = phast.PhastQuery(h, gpu), phast.PhastQuery(h, cpu_backend())
    kept = on_gpu.device_tree(int(sources[0]), per_level=True)
    assert on_gpu.last_bits == 32
    assert set(kept.level_ms) == {"init", "up", "core", "down"} and kept.level_ms["down"]
    assert np.array_equal(kept.to_host().distance, on_cpu.tree(int(sources[0])).tree.distance)


def test_shortcuts_past_32_bits_take_the_wide_sweep(gpu):
    """A line of 20,000 arcs of 2^30: shortcuts below its core cost past 2^32, so the
    downward sweep keeps 64-bit costs, and the trees still equal the CPU twin's (the
    first, from node 0, overflows 32-bit rows: all three take 64-bit rows)."""
    n, a = 20_000, np.arange(19_999)
    g = RoadGraph.from_arcs(n, np.concatenate([a, a + 1]), np.concatenate([a + 1, a]),
                            {"distance": np.full(2 * a.size, 1 << 30)})
    h = contract(g, "distance", backend=gpu)
    assert not phast.PhastQuery(h, gpu).index.narrow
    check_same(h, g, gpu, [0, n // 2, n - 1], bits=64)


def one_way_road(w: int, n: int = 600) -> RoadGraph:
    """n nodes, arcs i -> i+1 of cost ``w``: from node 0 every path to a node is its
    shortest, so every candidate a sweep adds is the exact distance of its head."""
    a = np.arange(n - 1)
    return RoadGraph.from_arcs(n, a, a + 1, {"distance": np.full(a.size, w)})


def rows_after_each_step(query, source: int, bits: int):
    """Run the ``bits``-bit query's steps one by one from ``source``; after each: (name,
    the distances in node order as int64 with -1 unreached, the overflow flag or None)."""
    index = query.index
    q = phast_gpu.query(index, [source], bits)
    out = []
    for name, step in q.steps:
        step()
        d = q.d[0][index.rank].get()
        rows = np.where(d == np.iinfo(d.dtype).max, -1, d.astype(np.int64))
        out.append((name, rows, None if bits == 64 else int(q.overflow.get()[0])))
    return out


@pytest.mark.parametrize("w, K, narrow, first", [(1 << 23, 16, True, "down"),
                                                 (1 << 23, None, True, "core"),
                                                 ((1 << 31) - 1, 16, False, "up")],
                         ids=["narrow", "all-core", "wide"])
def test_every_step_flags_exactly_the_distances_past_32_bits(gpu, w, K, narrow, first):
    """From node 0 of a one-way road a 32-bit step raises the flag exactly when the
    64-bit rows then hold a distance that does not fit (2^32-1 or more), and its rows
    hold the 64-bit ones below that. The first to flag is the downward sweep (12-byte
    arcs), the core (the whole road with the default K: no levels) or the upward search."""
    h = contract(one_way_road(w), "distance", backend=gpu, **({} if K is None else {"K": K}))
    query = phast.PhastQuery(h, gpu)
    assert query.index.narrow == narrow and (h.num_levels == 0) == (K is None)
    flagged = []
    for (name, rows32, flag), (name64, rows64, _) in zip(rows_after_each_step(query, 0, 32),
                                                          rows_after_each_step(query, 0, 64)):
        past = rows64 >= 2**32 - 1
        assert name == name64 and flag == int(past.any()), name
        assert np.array_equal(rows32, np.where(past, -1, rows64)), name
        flagged += [name] if flag else []
    assert flagged and flagged[0] == first


def test_trees_past_32_bits_fall_back_to_64_bit_rows(gpu):
    """One-way roads of 599 arcs: of 2^22 (2.5e9 in all, past int32) every tree fits
    32-bit rows; of 2^23 the tree from node 550 does, the one from node 0 (past 2^32)
    is redone with 64-bit rows, per level timed too, and the hierarchy keeps them."""
    cpu = cpu_backend()
    for w, sources, widths in (((1 << 22), (0, 300), [32, 32]),
                               ((1 << 23), (550, 0, 550), [32, 64, 64])):
        h = contract(one_way_road(w), "distance", K=16, backend=gpu)
        on_gpu, on_cpu = phast.PhastQuery(h, gpu), phast.PhastQuery(h, cpu)
        got = []
        for s in sources:
            kept = on_gpu.device_tree(s, per_level=(s == 0))
            got.append(on_gpu.last_bits)
            host, twin = kept.to_host(), on_cpu.tree(s).tree
            for name in ("distance", "parent", "parent_arc"):
                assert np.array_equal(getattr(host, name), getattr(twin, name)), (w, s, name)
            assert kept.farthest() == (599 - s) * w
            if s == 0:
                assert set(kept.level_ms) == {"init", "up", "core", "down"}
        assert got == widths and on_gpu.index.overflowed == (64 in widths)
