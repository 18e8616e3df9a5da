"""OpenStreetMap reader: tiny hand-written .osm files, then the shared extracts."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.core.graph import ROAD_CLASS_INDEX, haversine_m
from engine.io import LoadError, load
from engine.io.osm import (FERRY_KMH, LICENSE, NO_LIMIT_KMH, load_osm, load_osm_report,
                           parse_duration, parse_lanes, parse_maxspeed)
from engine.core.progress import Cancelled, CancelToken

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "osm"


# ------------------------------------------------------------------ fixtures
def write_osm(path: Path, nodes: dict, ways=(), relations=()) -> Path:
    """An .osm XML file: nodes {id: (lon, lat)}, ways [(id, refs, tags)],
    relations [(id, [(type, ref, role)], tags)]."""
    def tags_xml(tags):
        return "".join(f'<tag k="{k}" v="{v}"/>' for k, v in tags.items())
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="test">']
    lines += [f'<node id="{i}" version="1" lon="{lon:.7f}" lat="{lat:.7f}"/>'
              for i, (lon, lat) in sorted(nodes.items())]
    for wid, refs, tags in ways:
        nds = "".join(f'<nd ref="{r}"/>' for r in refs)
        lines.append(f'<way id="{wid}" version="1">{nds}{tags_xml(tags)}</way>')
    for rid, members, tags in relations:
        mem = "".join(f'<member type="{t}" ref="{r}" role="{role}"/>' for t, r, role in members)
        lines.append(f'<relation id="{rid}" version="1">{mem}{tags_xml(tags)}</relation>')
    lines.append("</osm>")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def grid_nodes(ids, lon0=7.0, lat0=45.0, step=0.001):
    """Nodes on a row, id i at lon0 + i*step (about 80 m apart)."""
    return {i: (lon0 + i * step, lat0) for i in ids}


def arcs_by_ids(g) -> dict:
    """(tail id, head id) -> list of arc indices."""
    out = {}
    for arc, (t, h) in enumerate(zip(g.node_id[g.tail], g.node_id[g.head])):
        out.setdefault((int(t), int(h)), []).append(arc)
    return out


def arc(g, t, h) -> int:
    [a] = arcs_by_ids(g)[(t, h)]
    return a


# ------------------------------------------------------------------ directions
@pytest.mark.parametrize("tags, forward, backward", [
    ({"highway": "residential"}, True, True),
    ({"highway": "residential", "oneway": "yes"}, True, False),
    ({"highway": "residential", "oneway": "1"}, True, False),
    ({"highway": "residential", "oneway": "-1"}, False, True),
    ({"highway": "residential", "oneway": "no"}, True, True),
    ({"highway": "motorway"}, True, False),
    ({"highway": "motorway_link"}, True, False),
    ({"highway": "motorway", "oneway": "no"}, True, True),
    ({"highway": "primary", "junction": "roundabout"}, True, False),
    ({"highway": "primary", "junction": "circular", "oneway": "-1"}, False, True),
])
def test_oneway_semantics(tmp_path, tags, forward, backward):
    g = load_osm(write_osm(tmp_path / "t.osm", grid_nodes([1, 2]), [(10, [1, 2], tags)]))
    arcs = arcs_by_ids(g)
    assert ((1, 2) in arcs) == forward and ((2, 1) in arcs) == backward
    assert g.arc_attrs["oneway"].tolist() == [forward != backward] * g.num_arcs


def test_roundabout_is_split_not_a_self_loop(tmp_path):
    nodes = {1: (7.0, 45.0), 2: (7.001, 45.001), 3: (7.0, 45.002), 4: (6.999, 45.001),
             5: (7.0, 44.999)}
    ways = [(10, [1, 2, 3, 4, 1], {"highway": "primary", "junction": "roundabout"}),
            (11, [5, 1], {"highway": "residential"})]
    g = load_osm(write_osm(tmp_path / "r.osm", nodes, ways))
    arcs = arcs_by_ids(g)
    # split at the middle node 3: two one-way arcs around, each with one interior point
    assert set(arcs) == {(1, 3), (3, 1), (5, 1), (1, 5)}
    a, b = arc(g, 1, 3), arc(g, 3, 1)
    assert g.arc_attrs["roundabout"][[a, b]].all()
    assert g.arc_geometry(a)[1].tolist() == [7.001, 45.001]
    assert g.arc_geometry(b)[1].tolist() == [6.999, 45.001]


def test_lonely_closed_way_keeps_both_halves(tmp_path):
    nodes = {1: (7.0, 45.0), 2: (7.001, 45.0), 3: (7.001, 45.001)}
    g = load_osm(write_osm(tmp_path / "c.osm", nodes,
                           [(10, [1, 2, 3, 1], {"highway": "service"})]))
    assert g.num_nodes == 2 and g.num_arcs == 4
    assert (g.tail != g.head).all()


# ------------------------------------------------------------------ topology
def test_degree2_chain_becomes_one_arc_with_geometry(tmp_path):
    nodes = {1: (7.0, 45.0), 2: (7.001, 45.0005), 3: (7.002, 45.0), 4: (7.003, 45.001),
             5: (7.003, 45.002)}
    ways = [(10, [1, 2, 3, 4], {"highway": "secondary"}),
            (11, [4, 5], {"highway": "secondary"})]
    g = load_osm(write_osm(tmp_path / "c.osm", nodes, ways))
    assert g.node_id.tolist() == [1, 4, 5]
    assert g.num_arcs == 4
    fwd, bwd = arc(g, 1, 4), arc(g, 4, 1)
    assert g.arc_geometry(fwd).tolist() == [list(nodes[i]) for i in (1, 2, 3, 4)]
    assert g.arc_geometry(bwd).tolist() == [list(nodes[i]) for i in (4, 3, 2, 1)]
    poly = np.array([nodes[i] for i in (1, 2, 3, 4)])
    expected = haversine_m(poly[:-1, 0], poly[:-1, 1], poly[1:, 0], poly[1:, 1]).sum()
    assert g.arc_attrs["length_m"][fwd] == pytest.approx(expected, rel=1e-6)
    assert g.metrics["distance"][fwd] == round(expected)
    assert g.arc_attrs["road_class"][fwd] == ROAD_CLASS_INDEX["secondary"]
    assert g.metric_units == {"distance": "m", "travel_time": "ds"}
    assert g.data_license == LICENSE and g.source == "c.osm"


def test_intersection_in_the_middle_of_a_way_splits_it(tmp_path):
    nodes = grid_nodes([1, 2, 3]) | {4: (7.002, 45.001)}
    ways = [(10, [1, 2, 3], {"highway": "tertiary"}), (11, [2, 4], {"highway": "tertiary"})]
    g = load_osm(write_osm(tmp_path / "x.osm", nodes, ways))
    assert set(arcs_by_ids(g)) == {(1, 2), (2, 1), (2, 3), (3, 2), (2, 4), (4, 2)}
    assert g.geometry_first[-1] == 0


def test_missing_node_cuts_the_way(tmp_path):
    nodes = grid_nodes([1, 2, 4, 5])                       # node 3 is not in the file
    g, report = load_osm_report(write_osm(tmp_path / "m.osm", nodes,
                                          [(10, [1, 2, 3, 4, 5], {"highway": "residential"})]))
    assert set(arcs_by_ids(g)) == {(1, 2), (2, 1), (4, 5), (5, 4)}
    assert report.missing_nodes == 1


def test_negative_ids_of_an_editors_file(tmp_path):
    nodes = {-3: (7.0, 45.0), -2: (7.001, 45.0), 5: (7.002, 45.0)}
    ways = [(-1, [-3, -2, 5], {"highway": "residential"}), (11, [5], {"highway": "residential"})]
    g = load_osm(write_osm(tmp_path / "n.osm", nodes, ways))
    assert g.node_id.tolist() == [-3, 5]
    assert g.arc_geometry(arc(g, -3, 5))[1].tolist() == [7.001, 45.0]


@pytest.mark.parametrize("tags, kept", [
    ({"highway": "residential", "access": "private"}, False),
    ({"highway": "residential", "access": "no"}, False),
    ({"highway": "residential", "motor_vehicle": "no"}, False),
    ({"highway": "residential", "vehicle": "private"}, False),
    ({"highway": "residential", "access": "no", "motorcar": "yes"}, True),
    ({"highway": "residential", "motor_vehicle": "private", "motorcar": "destination"}, True),
    ({"highway": "residential", "access": "destination"}, True),
    ({"highway": "service", "service": "parking_aisle"}, True),
    ({"highway": "road"}, True),
    ({"highway": "pedestrian", "area": "yes"}, False),
    ({"highway": "service", "area": "yes"}, False),
    ({"highway": "footway"}, False),
    ({"highway": "construction", "construction": "primary"}, False),
    ({"highway": "proposed"}, False),
    ({"highway": "track"}, False),
])
def test_access_and_classes(tmp_path, tags, kept):
    keep = (10, [1, 2], {"highway": "primary"})        # so every file has a road
    g = load_osm(write_osm(tmp_path / "a.osm", grid_nodes([1, 2, 3, 4]),
                           [keep, (11, [3, 4], tags)]))
    assert ((3, 4) in arcs_by_ids(g)) == kept


def test_road_is_unclassified_and_links_keep_their_class(tmp_path):
    ways = [(10, [1, 2], {"highway": "road"}), (11, [2, 3], {"highway": "trunk_link"})]
    g = load_osm(write_osm(tmp_path / "c.osm", grid_nodes([1, 2, 3]), ways))
    cls = g.arc_attrs["road_class"]
    assert cls[arc(g, 1, 2)] == ROAD_CLASS_INDEX["unclassified"]
    assert cls[arc(g, 2, 3)] == ROAD_CLASS_INDEX["trunk"]


# ------------------------------------------------------------------ attributes
@pytest.mark.parametrize("value, kmh", [
    ("50", 50), ("50 km/h", 50), ("50km/h", 50), ("30 mph", 30 * 1.609344),
    ("30mph", 30 * 1.609344), ("10 knots", 18.52), ("70;50", 70), (" 80 ", 80),
    ("none", NO_LIMIT_KMH), ("walk", 7), ("RU:urban", 60), ("DE:rural", 100),
    ("DE:zone30", 30), ("DE:zone:30", 30), ("de:living_street", 7), ("FR:rural", 80),
    ("GB:nsl_single", 60 * 1.609344), ("XX:urban", 50), ("IT:motorway", 130),
    ("signals", None), ("variable", None), ("fast", None), ("0", None), ("", None),
    (None, None), ("1000", None),
])
def test_parse_maxspeed(value, kmh):
    got = parse_maxspeed(value)
    assert got == (None if kmh is None else pytest.approx(kmh))


@pytest.mark.parametrize("value, lanes", [("2", 2), ("2;3", 2), ("x", None), ("0", None),
                                          ("1.5", None), (None, None), ("500", 127)])
def test_parse_lanes(value, lanes):
    assert parse_lanes(value) == lanes


@pytest.mark.parametrize("value, seconds", [("00:30", 1800), ("1:15:30", 4530), ("45", 2700),
                                            ("soon", None), ("0", None), (None, None)])
def test_parse_duration(value, seconds):
    assert parse_duration(value) == seconds


def test_arc_attributes(tmp_path):
    ways = [(10, [1, 2], {"highway": "primary", "maxspeed": "50", "maxspeed:backward": "30",
                          "lanes": "4", "lanes:backward": "1", "toll": "yes"}),
            (11, [2, 3], {"highway": "residential", "maxspeed": "signals", "oneway": "yes",
                          "lanes": "2"}),
            (12, [3, 4], {"highway": "motorway", "maxspeed": "60 mph"})]
    g = load_osm(write_osm(tmp_path / "s.osm", grid_nodes([1, 2, 3, 4]), ways))
    at = g.arc_attrs
    f, b, r, m = arc(g, 1, 2), arc(g, 2, 1), arc(g, 2, 3), arc(g, 3, 4)
    assert at["speed_kmh"][[f, b, r]].tolist() == [50, 30, 30]   # residential default 30
    assert at["speed_kmh"][m] == pytest.approx(96.56, abs=0.01)
    assert at["lanes"][[f, b, r, m]].tolist() == [2, 1, 2, 0]
    assert at["toll"][[f, b, r]].tolist() == [True, True, False]
    assert at["oneway"][[f, b, r, m]].tolist() == [False, False, True, True]
    for name, dtype in [("length_m", np.float32), ("road_class", np.int8),
                        ("speed_kmh", np.float32), ("lanes", np.int8), ("oneway", bool),
                        ("toll", bool), ("roundabout", bool)]:
        assert at[name].dtype == dtype
    expected_ds = np.maximum(1, np.rint(at["length_m"].astype(np.float64)
                                        / (at["speed_kmh"] / 3.6) * 10))
    assert np.abs(g.metrics["travel_time"] - expected_ds).max() <= 1


def test_ferry(tmp_path):
    nodes = {1: (7.0, 45.0), 2: (7.1, 45.0), 3: (7.1, 45.1), 4: (7.2, 45.1)}
    ways = [(10, [1, 2], {"route": "ferry", "motor_vehicle": "yes", "duration": "00:30"}),
            (11, [2, 3], {"route": "ferry", "motorcar": "yes"}),
            (12, [3, 4], {"route": "ferry", "foot": "yes"})]       # no cars aboard
    g = load_osm(write_osm(tmp_path / "f.osm", nodes, ways))
    at = g.arc_attrs
    timed, untimed = arc(g, 1, 2), arc(g, 2, 3)
    assert (3, 4) not in arcs_by_ids(g)
    assert (at["road_class"] == ROAD_CLASS_INDEX["ferry"]).all()
    assert at["speed_kmh"][timed] == pytest.approx(at["length_m"][timed] / 1800 * 3.6, rel=1e-4)
    assert g.metrics["travel_time"][timed] == pytest.approx(18000, abs=2)
    assert at["speed_kmh"][untimed] == FERRY_KMH


# ------------------------------------------------------------------ restrictions
def cross(tmp_path, relations):
    """A crossing: centre 1, arms 2 (north), 3 (east), 4 (south), 5 (west), one way each."""
    nodes = {1: (7.0, 45.0), 2: (7.0, 45.001), 3: (7.001, 45.0), 4: (7.0, 44.999),
             5: (6.999, 45.0)}
    ways = [(20 + i, [1, i], {"highway": "residential"}) for i in (2, 3, 4, 5)]
    return load_osm_report(write_osm(tmp_path / "x.osm", nodes, ways, relations))


def banned_pairs(g) -> set:
    tr = g.turn_restrictions
    ids = g.node_id
    return {(int(ids[g.tail[f]]), int(ids[g.head[t]])) for f, t in zip(tr.from_arc, tr.to_arc)}


def test_no_left_turn(tmp_path):
    # from the west arm (way 25) into the north arm (way 22): west -> centre -> north
    g, report = cross(tmp_path, [(1, [("w", 25, "from"), ("n", 1, "via"), ("w", 22, "to")],
                                  {"type": "restriction", "restriction": "no_left_turn"})])
    tr = g.turn_restrictions
    assert len(tr) == 1
    assert (tr.from_arc[0], tr.to_arc[0]) == (arc(g, 5, 1), arc(g, 1, 2))
    assert report.restrictions_used == 1 and report.banned_turns == 1


def test_only_straight_on(tmp_path):
    # from the south arm, only north is allowed: east, west and the u-turn are banned
    g, _ = cross(tmp_path, [(1, [("w", 24, "from"), ("n", 1, "via"), ("w", 22, "to")],
                             {"type": "restriction", "restriction": "only_straight_on"})])
    assert banned_pairs(g) == {(4, 3), (4, 5), (4, 4)}
    assert (g.turn_restrictions.from_arc == arc(g, 4, 1)).all()


def test_motorcar_restriction_and_exemptions(tmp_path):
    rel = [("w", 25, "from"), ("n", 1, "via"), ("w", 22, "to")]
    g, report = cross(tmp_path, [
        (1, rel, {"type": "restriction", "restriction:motorcar": "no_left_turn"}),
        (2, [("w", 24, "from"), ("n", 1, "via"), ("w", 23, "to")],
         {"type": "restriction", "restriction": "no_right_turn", "except": "bicycle;motorcar"}),
        (3, [("w", 23, "from"), ("n", 1, "via"), ("w", 24, "to")],
         {"type": "restriction", "restriction:hgv": "no_left_turn"}),
        (4, [("w", 23, "from"), ("w", 99, "via"), ("w", 24, "to")],
         {"type": "restriction", "restriction": "no_u_turn"}),
        (5, [("w", 23, "from"), ("n", 1, "via"), ("w", 77, "to")],    # unknown way
         {"type": "restriction", "restriction": "no_left_turn"}),
    ])
    assert banned_pairs(g) == {(5, 2)}
    assert (report.restrictions, report.restrictions_used, report.restrictions_not_for_cars,
            report.restrictions_via_way, report.restrictions_unresolved) == (5, 1, 2, 1, 1)


def test_no_u_turn_on_the_same_way(tmp_path):
    g, _ = cross(tmp_path, [(1, [("w", 23, "from"), ("n", 1, "via"), ("w", 23, "to")],
                             {"type": "restriction", "restriction": "no_u_turn"})])
    assert banned_pairs(g) == {(3, 3)}


def test_way_through_the_via_node_is_ambiguous(tmp_path):
    # way 30 runs west -> centre -> east: "from 30" could come from either side
    nodes = {1: (7.0, 45.0), 2: (7.0, 45.001), 3: (7.001, 45.0), 5: (6.999, 45.0)}
    ways = [(30, [5, 1, 3], {"highway": "residential"}), (22, [1, 2], {"highway": "residential"})]
    rels = [(1, [("w", 30, "from"), ("n", 1, "via"), ("w", 22, "to")],
             {"type": "restriction", "restriction": "no_left_turn"}),
            (2, [("w", 22, "from"), ("n", 1, "via"), ("w", 30, "to")],
             {"type": "restriction", "restriction": "only_right_turn"})]
    g, report = load_osm_report(write_osm(tmp_path / "a.osm", nodes, ways, rels))
    assert len(g.turn_restrictions) == 0
    assert report.restrictions_unresolved == 2


# ------------------------------------------------------------------ errors, progress
def test_file_with_no_roads(tmp_path):
    p = write_osm(tmp_path / "empty.osm", grid_nodes([1, 2]),
                  [(10, [1, 2], {"highway": "footway"})])
    with pytest.raises(LoadError, match="no drivable roads"):
        load_osm(p)
    with pytest.raises(LoadError, match="no drivable roads"):
        load_osm(write_osm(tmp_path / "nothing.osm", {}))


@pytest.mark.parametrize("name, data", [
    ("garbage.osm.pbf", bytes(range(256)) * 20),
    ("empty.osm.pbf", b""),
    ("garbage.osm", b"\x00\x01 not xml at all"),
    ("garbage.osm.gz", b"not gzip"),
    ("garbage.osm.bz2", b"not bzip2"),
    ("cut.osm", b'<osm version="0.6"><node id="1" lat="1" lon="1"/><way id="2">'),
])
def test_unreadable_files_raise_load_error(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(LoadError) as e:
        load_osm(p)
    assert e.value.path == str(p) and e.value.reason


def test_truncated_pbf(tmp_path):
    src = DATA / "monaco.osm.pbf"
    if not src.exists():
        pytest.skip(f"shared data not found at {DATA}")
    p = tmp_path / "cut.osm.pbf"
    p.write_bytes(src.read_bytes()[:300_000])
    with pytest.raises(LoadError, match="not a readable"):
        load_osm(p)


def test_xml_error_names_the_line(tmp_path):
    p = tmp_path / "bad.osm"
    p.write_text('<?xml version="1.0"?>\n<osm version="0.6">\n'
                 '<node id="1" lat="1" lon="1">\n</osm>\n')   # node never closed
    with pytest.raises(LoadError) as e:
        load_osm(p)
    assert e.value.line == 4


def test_load_dispatches_and_reports_progress(tmp_path):
    p = write_osm(tmp_path / "t.osm", grid_nodes([1, 2]), [(10, [1, 2], {"highway": "primary"})])
    calls = []
    g = load(p, progress=lambda f, msg: calls.append((f, msg)))
    assert g.num_arcs == 2
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1


def test_cancel(tmp_path):
    p = write_osm(tmp_path / "t.osm", grid_nodes([1, 2]), [(10, [1, 2], {"highway": "primary"})])
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        load_osm(p, cancel=token)


# ------------------------------------------------------------------ shared data
def shared(name: str) -> Path:
    p = DATA / name
    if not p.exists():
        pytest.skip(f"shared OSM data not found at {p} (see DESIGN.md, Data)")
    return p


def check_sane(g, lon_range, lat_range):
    assert g.num_arcs > g.num_nodes
    assert lon_range[0] < g.lon.min() and g.lon.max() < lon_range[1]
    assert lat_range[0] < g.lat.min() and g.lat.max() < lat_range[1]
    at = g.arc_attrs
    chord = haversine_m(g.lon[g.tail], g.lat[g.tail], g.lon[g.head], g.lat[g.head])
    assert (at["length_m"] >= chord * (1 - 1e-6) - 1e-3).all()
    assert (g.tail != g.head).all()
    assert (g.metrics["distance"] >= 1).all() and (g.metrics["travel_time"] >= 1).all()
    assert ((at["speed_kmh"] >= 1) & (at["speed_kmh"] <= 300)).all()
    # graph nodes are intersections and ends: every node has an arc
    deg = np.bincount(g.tail, minlength=g.num_nodes) + np.bincount(g.head, minlength=g.num_nodes)
    assert (deg > 0).all()
    # the stored geometry reproduces the stored length
    for a in range(0, g.num_arcs, max(1, g.num_arcs // 200)):
        poly = g.arc_geometry(a)
        along = haversine_m(poly[:-1, 0], poly[:-1, 1], poly[1:, 0], poly[1:, 1]).sum()
        assert math.isclose(along, at["length_m"][a], rel_tol=1e-5, abs_tol=1e-3)


def test_monaco():
    g, report = load_osm_report(shared("monaco.osm.pbf"))
    assert 1000 < g.num_nodes < 16_383
    check_sane(g, (7.3, 7.55), (43.68, 43.8))   # Monaco and its French border
    assert len(g.turn_restrictions) > 10
    assert report.restrictions_used > 20


def test_andorra():
    g = load_osm(shared("andorra.osm.pbf"))
    assert 1000 < g.num_nodes < 16_574
    check_sane(g, (1.3, 1.9), (42.3, 42.8))


@pytest.mark.slow
def test_porto():
    g = load_osm(shared("porto_portugal.osm.pbf"))
    assert 30_000 < g.num_nodes < 150_000     # intersections of 276k car-road nodes
    assert len(g.turn_restrictions) > 200
    check_sane(g, (-9.0, -8.0), (40.8, 41.6))
