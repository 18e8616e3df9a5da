"""Export (issue 15): route and cost-budgeted paths as GeoJSON and GPX, trees as GeoJSON and
CSV, written by the commands; lon/lat order, the road's own geometry, the attribution,
units in the text, and a budget given with its unit."""
from __future__ import annotations

import csv
import dataclasses
import json

import gpxpy
import numpy as np
import pytest
from shapely.geometry import shape

from app.cli import main
from engine.core.backend import cpu_backend
from engine.generate.network import generate_road_network
from engine.core.polylines import path_lonlat
from engine.workspace import Workspace
from tests.turn_oracle import oracle_for

OSM = "© OpenStreetMap contributors"
S, T = 3, 1500                       # internal indices of a route's ends


@pytest.fixture(scope="module")
def graph():
    g = generate_road_network(2_000, seed=7)
    assert g.geometry_lonlat.shape[0] > 0           # arcs with interior points: the line must follow them
    return dataclasses.replace(g, data_license=OSM)  # as an OSM extract would be


@pytest.fixture(scope="module")
def graph_file(graph, save_graph):
    return save_graph(graph, "export")


def ids(graph, *nodes) -> list[str]:
    return [str(graph.node_id[v]) for v in nodes]


def run_json(capsys, *argv) -> dict:
    assert main([*map(str, argv), "--json"]) == 0, capsys.readouterr()
    return json.loads(capsys.readouterr().out)


def lonlat(graph, v: int) -> list[float]:
    return [graph.lon[v], graph.lat[v]]


# ------------------------------------------------------------------------ route
def test_route_geojson_and_gpx_follow_the_road(capsys, graph, graph_file, tmp_path):
    s, t = ids(graph, S, T)
    gj, gpx_file = tmp_path / "route.geojson", tmp_path / "route.gpx"
    r = run_json(capsys, "route", graph_file, "--from", s, "--to", t, "--geojson", gj, "--gpx", gpx_file)
    assert r["geojson"] == str(gj) and r["gpx"] == str(gpx_file) and r["unit"] == "m"

    data = json.loads(gj.read_text(encoding="utf-8"))
    assert data["type"] == "FeatureCollection" and len(data["features"]) == 1
    feature = data["features"][0]
    assert feature["type"] == "Feature" and feature["geometry"]["type"] == "LineString"
    coords = np.array(feature["geometry"]["coordinates"])
    assert coords[0] == pytest.approx(lonlat(graph, S)) and coords[-1] == pytest.approx(lonlat(graph, T))
    path = Workspace(graph, cpu_backend()).router("distance").route(S, T)      # turn-aware
    expected = path_lonlat(graph, path.nodes, path.arcs)
    assert coords.shape == expected.shape and np.allclose(coords, expected)
    assert len(coords) > len(r["path"])              # the arcs' interior points are in it
    props = feature["properties"]
    assert (props["from"], props["to"], props["metric"], props["cost"], props["unit"]) == \
        (int(s), int(t), "distance", r["distance"], "m")
    assert props["length_m"] == pytest.approx(r["length_m"], abs=0.1)
    assert props["length_m"] <= r["distance"]                   # the cost adds turn costs
    assert props["travel_time_s"] > 0 and props["method"] == "bidirectional_dijkstra"
    assert props["attribution"] == OSM
    line = shape(feature["geometry"])                # round trip through shapely
    assert line.is_valid and np.allclose(np.asarray(line.coords), coords)

    gpx = gpxpy.parse(gpx_file.read_text(encoding="utf-8"))
    assert len(gpx.tracks) == 1 and len(gpx.tracks[0].segments) == 1
    points = gpx.tracks[0].segments[0].points
    assert len(points) == len(coords)
    assert np.allclose([[p.longitude, p.latitude] for p in points], coords)
    assert gpx.copyright_author == OSM and "km" in gpx.description


def test_route_text_has_units_and_names_the_files(capsys, graph, graph_file, tmp_path):
    s, t = ids(graph, S, T)
    out = tmp_path / "r.gpx"
    assert main(["route", graph_file, "--from", s, "--to", t, "--metric", "travel_time",
                 "--gpx", str(out)]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first.startswith(f"travel_time from {s} to {t}: ") and " min (" in first and " ds)" in first
    assert " km, " in text and f"GPX written to {out}" in text and out.exists()


def test_a_path_export_needs_coordinates(capsys, tmp_path):
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    out = tmp_path / "r.geojson"
    assert main(["route", str(gr), "--from", "1", "--to", "3", "--geojson", str(out)]) == 1
    assert "needs node coordinates" in capsys.readouterr().err and not out.exists()


# ------------------------------------------------------------------------ tree
def test_tree_csv_has_one_row_per_node_with_distance_and_parent(capsys, graph, graph_file, tmp_path):
    out, npz = tmp_path / "tree.csv", tmp_path / "tree.npz"
    run_json(capsys, "tree", graph_file, "--from", ids(graph, S)[0], "--backend", "cpu",
             "--metric", "travel_time", "--csv", out, "--out", npz)
    with open(out, newline="", encoding="utf-8") as f:          # RFC 4180: the header first
        rows = list(csv.DictReader(f))
    assert out.read_bytes().startswith(b"node_id,distance,parent,lon,lat\r\n")
    assert list(rows[0]) == ["node_id", "distance", "parent", "lon", "lat"]
    meta = json.loads((tmp_path / "tree.csv-metadata.json").read_text(encoding="utf-8"))   # CSVW
    assert [c["name"] for c in meta["tableSchema"]["columns"]] == list(rows[0])
    assert "travel_time" in meta["tableSchema"]["columns"][1]["dc:description"] and \
        "in ds (deciseconds" in meta["tableSchema"]["columns"][1]["dc:description"]
    assert len(rows) == graph.num_nodes
    expected = oracle_for(graph, "travel_time").distances_from(S)      # turn-aware
    with np.load(npz) as z:
        parent = z["parent"]
    for v, row in enumerate(rows):
        assert int(row["node_id"]) == graph.node_id[v]
        assert (int(row["distance"]) if row["distance"] else -1) == expected[v]
        assert (int(row["parent"]) if row["parent"] else -1) == parent[v]
        assert [float(row["lon"]), float(row["lat"])] == pytest.approx(lonlat(graph, v))
    assert rows[S]["parent"] == "" and rows[S]["distance"] == "0"


def test_tree_geojson_is_a_point_per_reached_node(capsys, graph, graph_file, tmp_path):
    out = tmp_path / "tree.geojson"
    r = run_json(capsys, "tree", graph_file, "--from", ids(graph, S)[0], "--backend", "cpu", "--geojson", out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["type"] == "FeatureCollection" and data["metric"] == "distance" and data["unit"] == "m"
    assert data["attribution"] == OSM and len(data["features"]) == r["reached"]
    expected = oracle_for(graph, "distance").distances_from(S)       # turn-aware
    index = {int(i): v for v, i in enumerate(graph.node_id)}
    for f in data["features"][::37]:
        v = index[f["properties"]["node_id"]]
        assert f["geometry"]["type"] == "Point"
        assert f["geometry"]["coordinates"] == pytest.approx(lonlat(graph, v))
        assert f["properties"]["distance"] == expected[v] == f["properties"]["metres"]
        parent = f["properties"]["parent"]
        assert (parent is None) == (v == S)
        if parent is not None:     # the tail of the last arc of v's own shortest path
            u = index[parent]
            assert np.any((graph.tail == u) & (graph.head == v))
    assert shape(data["features"][0]["geometry"]).geom_type == "Point"


def test_tree_text_shows_the_farthest_node_in_km(capsys, graph, graph_file):
    assert main(["tree", graph_file, "--from", ids(graph, S)[0], "--backend", "cpu"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "farthest " in first and " km (" in first and " m)" in first


# ------------------------------------------------------------------------ csp
def test_csp_exports_and_takes_a_budget_with_its_unit(capsys, graph, graph_file, tmp_path):
    s, t = ids(graph, S, T)
    raw = run_json(capsys, "csp", graph_file, "--from", s, "--to", t, "--budget", "6000")   # ds
    assert (raw["budget"], raw["length_unit"], raw["budget_unit"]) == (6000, "m", "ds")
    out = tmp_path / "csp.geojson"
    timed = run_json(capsys, "csp", graph_file, "--from", s, "--to", t, "--budget", "10min",
                     "--geojson", out, "--gpx", tmp_path / "csp.gpx")
    assert timed["budget"] == 6000 and timed["length"] == raw["length"] and timed["cost"] == raw["cost"]
    feature = json.loads(out.read_text(encoding="utf-8"))["features"][0]
    props = feature["properties"]
    assert (props["length"], props["cost"], props["budget"]) == (raw["length"], raw["cost"], 6000)
    assert (props["length_unit"], props["cost_unit"], props["budget_text"]) == ("m", "ds", "10:00 min")
    coords = feature["geometry"]["coordinates"]
    assert coords[0] == pytest.approx(lonlat(graph, S)) and coords[-1] == pytest.approx(lonlat(graph, T))
    gpx = gpxpy.parse((tmp_path / "csp.gpx").read_text(encoding="utf-8"))
    assert len(gpx.tracks[0].segments[0].points) == len(coords)

    assert main(["csp", graph_file, "--from", s, "--to", t, "--budget", "10min"]) == 0
    text = capsys.readouterr().out
    assert f"within travel_time budget 10:00 min ({6000:,} ds): cost " in text


@pytest.mark.parametrize("budget, says", [("2km", "'km' is not a unit of this metric"),
                                          ("1.5", "'1.5' is not a whole number"),
                                          ("5min,6min", "more than one amount"),
                                          ("soon", "'soon' is not an amount")])
def test_a_bad_budget_is_one_clear_line(capsys, graph, graph_file, budget, says):
    assert main(["csp", graph_file, *["--from", *ids(graph, S)], "--to", ids(graph, T)[0],
                 "--budget", budget]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_failed_export_leaves_no_file(capsys, graph, graph_file, tmp_path):
    out = tmp_path / "no" / "route.geojson"
    assert main(["route", graph_file, "--from", ids(graph, S)[0], "--to", ids(graph, T)[0],
                 "--geojson", str(out)]) == 1
    assert "route.geojson" in capsys.readouterr().err and not out.parent.exists()
