"""A PHAST tree kept where it was computed (engine.ch.phast_tree), on the CPU: every
reader (distance, path, colour bins, to_host) agrees with SciPy's Dijkstra and with the
host tree's own readers (path_from_tree, the window's DistanceBins.of)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.ch import contract, phast
from engine.core import tree_bins
from engine.core.backend import cpu_backend
from engine.core.paths import Unreachable, check_path, path_from_tree
from engine.core.units import unit_of
from engine.generate.network import generate_road_network
from engine.routing.reference import scipy_matrix, sssp

CPU = cpu_backend()


@pytest.fixture(scope="module")
def small():
    g = generate_road_network(3_000, seed=4)
    return g, contract(g, "travel_time", backend=CPU)


def reference_bins(distance: np.ndarray, factor: float):
    """The bins as the window made them from host distances before (float searchsorted)."""
    d = np.sort(distance[distance >= 0]).astype(np.float64)
    jump = np.diff(d)
    cut = np.flatnonzero((jump > d[:-1]) & (jump > (d[-1] - d[0]) / 8))
    cut = cut[cut >= 1]
    starts, ends = np.r_[0, cut + 1], np.r_[cut, d.size - 1]
    parts = [(float(d[a]), float(d[b]), int(b - a + 1)) for a, b in zip(starts, ends)]
    lows, highs = tree_bins.bin_edges(parts, factor)
    b = np.clip(np.searchsorted(lows, distance, side="right") - 1, 0, lows.size - 1)
    return lows, highs, np.where(distance < 0, lows.size, b)


def test_readers_equal_the_host_tree_and_scipy(small):
    g, h = small
    query, matrix = phast.PhastQuery(h, CPU), scipy_matrix(g, "travel_time")
    factor = unit_of(g.metric_units, "travel_time").axis()[0]
    rng = np.random.default_rng(7)
    for s in rng.integers(0, g.num_nodes, 6):
        kept, host = query.device_tree(int(s)), query.tree(int(s)).tree
        want = sssp(g, int(s), "travel_time", matrix).distance
        assert np.array_equal(host.distance, want)
        assert np.array_equal(kept.to_host().parent_arc, host.parent_arc)
        assert kept.reached() == int((want >= 0).sum()) and kept.farthest() == want.max()
        for t in rng.integers(0, g.num_nodes, 20):
            assert kept.distance(int(t)) == want[t]
            if want[t] < 0:
                with pytest.raises(Unreachable):
                    kept.path(int(t))
                continue
            p = kept.path(int(t))
            check_path(g, p)
            assert p.distance == want[t]
            assert np.array_equal(p.arcs, path_from_tree(g, host, int(t)).arcs)
        colours = kept.bins(factor)
        lows, highs, node_bin = reference_bins(want, factor)
        assert np.array_equal(colours.lows, lows) and np.array_equal(colours.highs, highs)
        assert colours.node_bin.dtype == np.uint8 and np.array_equal(colours.node_bin, node_bin)
        assert 12 <= colours.count <= tree_bins.MAX_BINS


def test_a_road_takes_the_bin_of_its_farther_end():
    """segment_bins (a byte per node) == the bin of the larger end's distance, unreached
    when either end is: what the window drew from host distances."""
    rng = np.random.default_rng(3)
    d = rng.integers(-1, 10_000, 5_000)
    d[rng.random(d.size) < 0.1] = -1
    lows = np.array([0.0, 750.5, 1500, 2250, 4000, 9000])
    nb = tree_bins.node_bins(np, d, lows)
    a, b = rng.integers(0, d.size, 20_000), rng.integers(0, d.size, 20_000)
    seg = np.where((d[a] < 0) | (d[b] < 0), -1, np.maximum(d[a], d[b]))
    want = np.where(seg < 0, lows.size, np.clip(np.searchsorted(lows, seg, side="right") - 1, 0, 5))
    assert np.array_equal(tree_bins.segment_bins(nb, a, b), want)


def test_too_many_bins_for_a_byte_are_refused():
    with pytest.raises(ValueError, match="fit a byte per node"):
        tree_bins.node_bins(np, np.zeros(3, dtype=np.int64), np.arange(300.0))


def test_source_alone_and_unreached_nodes(small):
    g, h = small
    kept = phast.PhastQuery(h, CPU).device_tree(0)
    assert kept.distance(0) == 0 and kept.path(0).num_arcs == 0
    colours = kept.bins(1.0)
    assert colours.node_bin[0] == 0


def test_parents_are_made_when_first_read(small):
    """Distances and the colours need no parents: a tree pays for them (and reports
    their time) only once a path or the whole tree is read."""
    g, h = small
    kept = phast.PhastQuery(h, CPU).device_tree(5)
    assert set(kept.step_ms) == {"distances"}
    before = kept.compute_ms
    kept.bins(unit_of(g.metric_units, "travel_time").axis()[0])
    kept.distance(7)
    assert set(kept.step_ms) == {"distances"}
    t = int(np.flatnonzero(kept.to_host().distance > 0)[0])
    assert set(kept.step_ms) == {"distances", "parents"}
    assert kept.compute_ms == pytest.approx(before + kept.step_ms["parents"])
    check_path(g, kept.path(t))
