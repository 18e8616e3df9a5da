"""The native cache reopens a graph bit for bit and rejects damaged files."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.graph import RoadGraph
from engine.io import LoadError, load
from engine.io.cache import save_cache


def assert_same_graph(a: RoadGraph, b: RoadGraph):
    for name in ("first_out", "head", "node_id", "lon", "lat", "geometry_first", "geometry_lonlat"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name
    for group in ("metrics", "arc_attrs"):
        ga, gb = getattr(a, group), getattr(b, group)
        assert list(ga) == list(gb)
        for k in ga:
            assert ga[k].dtype == gb[k].dtype and np.array_equal(ga[k], gb[k]), k
    ta, tb = a.turn_restrictions, b.turn_restrictions
    assert (ta is None) == (tb is None)
    if ta is not None:
        assert np.array_equal(ta.from_arc, tb.from_arc) and np.array_equal(ta.to_arc, tb.to_arc)
    assert (a.metric_units, a.source, a.data_license) == (b.metric_units, b.source, b.data_license)


def rich_graph() -> RoadGraph:
    tail = np.array([0, 1, 1, 2, 0])
    head = np.array([1, 2, 0, 0, 1])
    return RoadGraph.from_arcs(
        3, tail, head, {"distance": [5, 6, 5, 9, 7], "travel_time": [1, 2, 3, 4, 5]},
        node_id=[10, 20, 30], lon=[8.0, 8.001, 8.002], lat=[47.0, 47.001, 47.0],
        arc_attrs={"road_class": np.array([1, 2, 1, 3, 4], np.int8),
                   "length_m": np.arange(5, dtype=np.float32)},
        geometry_first=[0, 1, 1, 3, 3, 3], geometry_lonlat=[[8.0005, 47.0005], [8.0015, 47.0005],
                                                             [8.0012, 47.0002]],
        banned_turns=([0], [1]), metric_units={"distance": "m", "travel_time": "ds"},
        source="unit test", data_license="© OpenStreetMap contributors")


def test_round_trip_is_bit_identical(tmp_path):
    g = rich_graph()
    h = load([save_cache(g, tmp_path / "g.rlg")])
    assert_same_graph(g, h)
    assert h.turn_restrictions.from_arc.tolist() == g.turn_restrictions.from_arc.tolist()


def test_round_trip_of_a_dimacs_graph(tmp_path, rome):
    assert_same_graph(rome, load([save_cache(rome, tmp_path / "rome.npz")]))


def test_garbage_is_rejected(tmp_path):
    path = tmp_path / "junk.rlg"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(LoadError, match="not a readable RouteLab cache"):
        load([path])


def test_foreign_npz_is_rejected(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, a=np.arange(3))
    with pytest.raises(LoadError, match="no metadata"):
        load([path])


def test_damaged_csr_is_rejected(tmp_path):
    g = rich_graph()
    path = save_cache(g, tmp_path / "g.rlg")
    with np.load(path) as z:
        arrays = dict(z)
    arrays["head"] = arrays["head"] + 100
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(LoadError, match="arc head holds .* out of range"):
        load([path])
