"""The generated network written to files (issue #37, item 1) reads back through the
project's own loaders: the .rlg to the same arrays, DIMACS text to the same arcs,
weights and coordinates (to the micro-degree), and the .osm.pbf through engine.io.osm
to the same nodes, arcs, attributes and banned turns, so that turn-aware distances
agree. The text formatter is checked against Python's own formatting."""
from __future__ import annotations

import numpy as np
import pytest

from engine.generate.network import generate_road_network
from engine.io import load
from engine.io.cache import load_cache, save_cache
from engine.io.dimacs_write import dimacs_targets, write_dimacs
from engine.io.text_rows import Int, Table, fixed, in_order, rows


@pytest.fixture(scope="module")
def net():
    return generate_road_network(6_000, seed=5)


def same_arrays(a, b) -> None:
    for name in ("first_out", "head", "node_id", "lon", "lat", "geometry_first", "geometry_lonlat"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    for group in ("metrics", "arc_attrs"):
        x, y = getattr(a, group), getattr(b, group)
        assert list(x) == list(y)
        for k in x:
            assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k
    assert np.array_equal(a.turn_restrictions.from_arc, b.turn_restrictions.from_arc)
    assert np.array_equal(a.turn_restrictions.to_arc, b.turn_restrictions.to_arc)


# ------------------------------------------------------------------ text rows
def test_rows_match_python_formatting():
    rng = np.random.default_rng(3)
    v = np.concatenate([[0, 1, -1, 9, 10, -10, 2**62, -(2**62)], rng.integers(-10**12, 10**12, 500)])
    w = rng.integers(0, 10**6, v.size)
    code = rng.integers(0, 3, v.size)
    present = rng.random(v.size) < 0.5
    text = rows(b"a ", Int(v), b" ", Int(w, pad=4), Table(code, (b"", b" x=1", b" yy")),
                b" ", fixed(v, 7), Int(w, present=present), b"\n")
    expected = "".join(
        f"a {a} {b:04d}{['', ' x=1', ' yy'][c]} {'-' if a < 0 else ''}{abs(a) // 10**7}."
        f"{abs(a) % 10**7:07d}{b if p else ''}\n"
        for a, b, c, p in zip(v.tolist(), w.tolist(), code.tolist(), present.tolist()))
    assert text.decode() == expected


def test_blocks_made_in_threads_come_in_order():
    import time
    rng = np.random.default_rng(1)
    delays = rng.random(60) * 0.004

    def make(k):
        time.sleep(delays[k])          # later blocks often finish first
        if k == 41:
            raise ValueError("block 41")
        return k * k

    made = in_order(make, range(60), threads=4)
    assert [next(made) for _ in range(41)] == [k * k for k in range(41)]
    with pytest.raises(ValueError, match="block 41"):
        next(made)


# ------------------------------------------------------------------ .rlg
def test_the_cache_reloads_to_the_same_graph(net, tmp_path):
    path = save_cache(net, tmp_path / "net.rlg")
    same_arrays(load_cache(path), net)


# ------------------------------------------------------------------ DIMACS
def test_dimacs_names():
    grs, co = dimacs_targets("/x/road-t.big.gr", ("distance", "travel_time"))
    assert {k: p.name for k, p in grs.items()} == {"distance": "road-d.big.gr",
                                                   "travel_time": "road-t.big.gr"}
    assert co.name == "road-d.big.co"
    grs, co = dimacs_targets("/x/net.gr", ("distance", "travel_time"))
    assert {k: p.name for k, p in grs.items()} == {"distance": "net.gr"} and co.name == "net.co"
    with pytest.raises(ValueError, match="ends with .gr"):
        dimacs_targets("/x/net.txt", ("distance",))


def test_dimacs_round_trip_gives_the_same_arcs_weights_and_coordinates(net, tmp_path):
    written = write_dimacs(net, tmp_path / "road-d.gen.gr", comment="test\nnetwork")
    assert [p.name for p in written] == ["road-d.gen.gr", "road-t.gen.gr", "road-d.gen.co"]
    assert written[0].read_text().startswith("c test\nc network\nc metric: distance\np sp 6000 ")
    g = load([tmp_path / "road-d.gen.gr"])             # the -t file and .co as siblings
    assert np.array_equal(g.first_out, net.first_out) and np.array_equal(g.head, net.head)
    for metric in ("distance", "travel_time"):
        assert np.array_equal(g.metrics[metric], net.metrics[metric]), metric
    assert np.array_equal(g.node_id, np.arange(1, net.num_nodes + 1))
    assert np.abs(g.lon - net.lon).max() <= 0.5e-6 and np.abs(g.lat - net.lat).max() <= 0.5e-6
    assert g.metric_units == {"distance": "m", "travel_time": "ds"}


def test_dimacs_with_a_plain_name_writes_one_metric_and_the_coordinates(net, tmp_path):
    written = write_dimacs(net, tmp_path / "plain.gr")
    assert [p.name for p in written] == ["plain.gr", "plain.co"]
    g = load([written[0]])
    assert list(g.metrics) == ["weight"] and np.array_equal(g.metrics["weight"], net.metrics["distance"])
    assert g.has_coordinates


def test_a_big_graphs_units_come_from_a_sample(monkeypatch, net, tmp_path):
    from engine.io import dimacs
    monkeypatch.setattr(dimacs, "UNIT_SAMPLE_ARCS", 1000)
    write_dimacs(net, tmp_path / "s-d.gen.gr")
    g = load([tmp_path / "s-d.gen.gr"])
    assert g.metric_units == {"distance": "m", "travel_time": "ds"}


# ------------------------------------------------------------------ OSM
def _arc_order(g):
    return np.lexsort((g.head, g.tail))


def _bans(g) -> set:
    tr = g.turn_restrictions
    return set(zip(g.tail[tr.from_arc].tolist(), g.head[tr.from_arc].tolist(),
                   g.head[tr.to_arc].tolist()))


def test_the_osm_pbf_reads_back_to_the_same_network(tmp_path):
    pytest.importorskip("osmium")
    from engine.generate.osm_writer import write_osm_pbf
    from engine.io.osm import load_osm_report
    from tests.turn_oracle import EdgeOracle
    g = generate_road_network(4_000, seed=2)
    path = write_osm_pbf(g, tmp_path / "gen.osm.pbf")
    h, report = load_osm_report(path)
    assert (h.num_nodes, h.num_arcs) == (g.num_nodes, g.num_arcs)
    assert np.array_equal(h.node_id, np.arange(1, g.num_nodes + 1))
    assert np.abs(h.lon - g.lon).max() <= 0.5e-7 and np.abs(h.lat - g.lat).max() <= 0.5e-7
    og, oh = _arc_order(g), _arc_order(h)
    assert np.array_equal(g.tail[og], h.tail[oh]) and np.array_equal(g.head[og], h.head[oh])
    for metric in ("distance", "travel_time"):       # lengths from 1e-7-degree locations
        assert np.abs(g.metrics[metric][og].astype(int) - h.metrics[metric][oh]).max() <= 1
    for name in ("road_class", "lanes", "oneway", "toll", "speed_kmh"):
        assert np.array_equal(g.arc_attrs[name][og], h.arc_attrs[name][oh]), name
    assert np.abs(g.arc_attrs["length_m"][og] - h.arc_attrs["length_m"][oh]).max() < 0.05
    assert report.restrictions_used == len(g.turn_restrictions) > 0
    assert _bans(h) == _bans(g)
    # turn-aware distances on the loaded graph, with the generated arc costs, are the same
    cost_h = np.empty(h.num_arcs, np.int64)
    cost_h[oh] = g.metrics["distance"][og]
    free = np.zeros(16, np.int64)
    a, b = EdgeOracle(g, "distance", free), EdgeOracle(h, cost_h, free)
    via = g.head[g.turn_restrictions.from_arc[:4]]
    for source in np.concatenate([[0, g.num_nodes - 1], g.tail[g.turn_restrictions.from_arc[:4]], via]):
        assert np.array_equal(a.distances_from(int(source)), b.distances_from(int(source)))


def test_the_osm_writer_refuses_graphs_it_cannot_write(tmp_path):
    pytest.importorskip("osmium")
    from engine.generate.osm_writer import write_osm_pbf
    from engine.io.dimacs_write import write_dimacs as to_dimacs
    g = generate_road_network(500, seed=1)
    to_dimacs(g, tmp_path / "p.gr")
    plain = load([tmp_path / "p.gr"])                 # no road attributes
    with pytest.raises(ValueError, match="arc attributes"):
        write_osm_pbf(plain, tmp_path / "p.osm.pbf")
    assert not (tmp_path / "p.osm.pbf").exists()
