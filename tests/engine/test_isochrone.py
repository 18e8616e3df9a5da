"""Isochrones (issue 15): every node within a cut-off is inside its area, no node far
beyond it is; the areas nest and the bands tile them; the command writes valid GeoJSON
(lon/lat, closed right-hand rings) with PHAST when there is a hierarchy; bad cut-offs
are one clear line."""
from __future__ import annotations

import json

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

from app.cli import main
from engine.routing import reference
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.io.cache import save_cache
from engine.sssp.isochrone import default_buffer_m, isochrones
from engine.core.polylines import arc_polylines

SOURCE = 700


@pytest.fixture(scope="module")
def graph():
    return generate_road_network(3_000, seed=11)


@pytest.fixture(scope="module")
def tree(graph):
    return reference.sssp(graph, SOURCE, "travel_time")


@pytest.fixture(scope="module")
def cutoffs(tree):
    far = tree.distance.max()
    return [round(far * f) for f in (0.15, 0.3, 0.45)]


@pytest.fixture(scope="module")
def iso(graph, tree, cutoffs):
    return isochrones(graph, tree.distance, "travel_time", cutoffs, source=SOURCE)


@pytest.fixture(scope="module")
def graph_file(graph, tmp_path_factory):
    path = tmp_path_factory.mktemp("iso") / "g.rlg"
    save_cache(graph, path)
    return str(path)


def reached_arcs_xy(graph, tree, cutoff: float):
    """The whole polylines (metres) of every arc whose tail is within ``cutoff``: a
    superset of the reached road, so "far from it" is far from the reached road too."""
    arcs = np.flatnonzero((tree.distance[graph.tail] >= 0) & (tree.distance[graph.tail] <= cutoff))
    points, first = arc_polylines(graph, arcs)
    xy = graph.projection.to_xy(points)
    return shapely.linestrings(xy, indices=np.repeat(np.arange(arcs.size), np.diff(first)))


def test_every_node_within_a_cutoff_is_inside_and_none_far_beyond(graph, tree, cutoffs, iso):
    width = iso.buffer_m
    nodes_xy = graph.projection.to_xy(np.stack([graph.lon, graph.lat], axis=1))
    for cutoff, area in zip(cutoffs, iso.areas):
        within = (tree.distance >= 0) & (tree.distance <= cutoff)
        inside = shapely.contains_xy(area, graph.lon, graph.lat)
        assert within.sum() > 50 and inside[within].all(), np.flatnonzero(within & ~inside)[:5]
        lines = reached_arcs_xy(graph, tree, cutoff)
        _, gap = shapely.STRtree(lines).query_nearest(shapely.points(nodes_xy), return_distance=True,
                                                      all_matches=False)
        far = ((tree.distance > 1.5 * cutoff) | (tree.distance < 0)) & (gap > 2 * width)
        assert far.sum() > 50 and not inside[far].any(), np.flatnonzero(far & inside)[:5]


def test_areas_nest_and_bands_tile_them(iso):
    for small, big in zip(iso.areas, iso.areas[1:]):
        assert shapely.difference(small, big).area < 1e-6 * small.area
    assert all(a.is_valid and b.is_valid and not b.is_empty for a, b in zip(iso.areas, iso.bands))
    assert shapely.union_all(iso.bands).symmetric_difference(iso.areas[-1]).area < 1e-5 * iso.areas[-1].area
    for a, b in zip(iso.bands, iso.bands[1:]):
        assert shapely.intersection(a, b).area < 1e-6 * b.area
    assert list(iso.area_m2) == sorted(iso.area_m2)


def test_the_part_of_an_arc_within_the_cutoff_is_taken():
    """A cut-off between an arc's tail and head reaches into the arc in proportion to its
    cost: a road east, 1 km arcs of cost 100, cut-off 250 reaches 2.5 km along it."""
    lon = 10 + np.arange(5) * 1000 / (111_195 * np.cos(np.radians(50)))   # 1 km apart at 50° N
    g = RoadGraph.from_arcs(5, [0, 1, 2, 3], [1, 2, 3, 4], {"time": np.full(4, 100)},
                            lon=lon, lat=np.full(5, 50.0), metric_units={"time": "s"})
    iso = isochrones(g, np.array([0, 100, 200, 300, 400]), "time", [250], buffer_m=20, source=0)
    area = shapely.transform(iso.areas[0], g.projection.to_xy)
    x0 = g.xy[0, 0]
    inside = [(x0 + m, 0) for m in (0, 1000, 2400, 2515)]
    outside = [(x0 + m, 0) for m in (2540, 3000, 4000)] + [(x0 + 1000, 30)]
    assert all(shapely.contains_xy(area, x, y) for x, y in inside)
    assert not any(shapely.contains_xy(area, x, y) for x, y in outside)
    assert iso.area_m2[0] == pytest.approx(2500 * 40 + np.pi * 20 ** 2, rel=0.01)


def test_the_default_buffer_is_half_the_median_arc(graph):
    xy = graph.xy
    median = np.median(np.hypot(*(xy[graph.head] - xy[graph.tail]).T))
    assert default_buffer_m(graph) == pytest.approx(np.clip(median / 2, 10, 150))


def test_the_command_writes_valid_geojson(capsys, graph, graph_file, tmp_path, cutoffs):
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


def test_a_unit_after_the_last_cutoff_applies_to_all():
    from engine.capabilities.isochrone import cutoffs_in_raw_units
    from engine.core.units import Unit
    assert cutoffs_in_raw_units("5, 10, 15 min", Unit("ds")) == [3000, 6000, 9000]
    assert cutoffs_in_raw_units("300,600", Unit("ds")) == [3000, 6000]          # seconds
    assert cutoffs_in_raw_units("0.5, 1.5km", Unit("m")) == [500, 1500]
    with pytest.raises(ValueError, match="'10, 5 min': amounts must increase"):
        cutoffs_in_raw_units("10, 5 min", Unit("ds"))


def test_a_graph_without_coordinates_is_refused(capsys, tmp_path):
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    assert main(["isochrone", str(gr), "--from", "1", "--cutoffs", "5"]) == 1
    assert "needs node coordinates" in capsys.readouterr().err
