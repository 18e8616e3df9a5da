"""The isochrone command (issue 15): it writes valid GeoJSON (lon/lat, closed
right-hand rings, largest area first), uses PHAST when there is a hierarchy, and bad
cut-offs or a graph without coordinates are one clear line. The areas themselves are
tested by tests/engine/test_isochrone.py."""
from __future__ import annotations

import json

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

from app.cli import main
from tests.engine.test_isochrone import SOURCE, graph  # noqa: F401 (the areas' network, a fixture)


@pytest.fixture(scope="module")
def graph_file(graph, save_graph):
    return save_graph(graph, "iso")


def test_the_command_writes_valid_geojson(capsys, graph, graph_file, tmp_path):
    out = tmp_path / "iso.geojson"
    assert main(["isochrone", graph_file, "--from", str(graph.node_id[SOURCE]), "--metric", "travel_time",
                 "--cutoffs", "1min,2min,3min", "--backend", "cpu", "--geojson", str(out), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["cutoffs"] == [600, 1200, 1800] and r["unit"] == "ds"     # deciseconds
    assert r["cutoffs_text"] == ["1:00 min", "2:00 min", "3:00 min"] and r["tree_method"] != "phast"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["type"] == "FeatureCollection" and len(data["features"]) == 3
    lon_range = (graph.lon.min() - 0.01, graph.lon.max() + 0.01)
    lat_range = (graph.lat.min() - 0.01, graph.lat.max() + 0.01)
    areas = []
    for f in data["features"]:
        geometry = f["geometry"]
        assert geometry["type"] in ("Polygon", "MultiPolygon")
        polygons = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        for rings in polygons:
            for i, ring in enumerate(rings):
                assert ring[0] == ring[-1] and len(ring) >= 4               # closed
                assert shapely.LinearRing(ring).is_ccw == (i == 0)         # right-hand rule
                lon, lat = np.array(ring).T                                 # [lon, lat] order
                assert lon_range[0] <= lon.min() and lon.max() <= lon_range[1]
                assert lat_range[0] <= lat.min() and lat.max() <= lat_range[1]
        area = shape(geometry)
        assert area.is_valid and area.contains(shapely.Point(graph.lon[SOURCE], graph.lat[SOURCE]))
        p = f["properties"]
        assert (p["unit"], p["metric"], p["source"]) == ("ds", "travel_time", int(graph.node_id[SOURCE]))
        areas.append((p["cutoff"], p["cutoff_text"], area))
    assert [a[0] for a in areas] == [1800, 1200, 600] and areas[-1][1] == "1:00 min"   # largest first
    assert areas[1][2].area < areas[0][2].area


def test_phast_when_there_is_a_hierarchy(capsys, graph, graph_file, tmp_path):
    h = tmp_path / "g.rlh"
    assert main(["contract", graph_file, "--metric", "travel_time", "--K", "64", "--backend", "cpu",
                 "--out", str(h), "--json"]) == 0
    capsys.readouterr()
    args = ["isochrone", graph_file, "--from", str(graph.node_id[SOURCE]), "--cutoffs", "2min",
            "--backend", "cpu", "--json"]
    with_h = main(args + ["--hierarchy", str(h)]), json.loads(capsys.readouterr().out)
    without = main(args + ["--metric", "travel_time"]), json.loads(capsys.readouterr().out)
    assert with_h[1]["tree_method"] == "phast" and without[1]["tree_method"] != "phast"
    assert with_h[1]["area_km2"] == pytest.approx(without[1]["area_km2"])


@pytest.mark.parametrize("cutoffs, says", [
    ("600,300", "must increase"), ("300,300", "must increase"), ("0,300", "must be positive"),
    ("-5", "not an amount"), ("5min", "'min' is not a unit of this metric"), ("", "not an amount"),
])
def test_bad_cutoffs_are_one_clear_line(capsys, graph, graph_file, cutoffs, says):
    assert main(["isochrone", graph_file, "--from", str(graph.node_id[SOURCE]), "--cutoffs", cutoffs,
                 "--backend", "cpu"]) == 1                       # the default metric is a length
    err = capsys.readouterr().err
    assert says in err and err.startswith("routelab isochrone: --cutoffs") and err.count("\n") == 1


def test_a_graph_without_coordinates_is_refused(capsys, tmp_path):
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    assert main(["isochrone", str(gr), "--from", "1", "--cutoffs", "5"]) == 1
    assert "needs node coordinates" in capsys.readouterr().err
