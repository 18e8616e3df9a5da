"""File ▸ Export and the service area in the window (issue 15): the menu action writes
what the map shows (route: GeoJSON/GPX, tree: GeoJSON/CSV, service area: GeoJSON), says
so when there is nothing to export, and a real click in tree mode with the service area
on fills its bands on the map, computed on the engine thread."""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances

import csv
import json

import gpxpy
import numpy as np
import pytest
import shapely
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QFileDialog

from engine.routing import reference
from tests.app.helpers import ROUTE_TIMEOUT_MS, load_graph, shift_click_route, show_tree

A, B = 7, 28                 # grid nodes (indices), as in test_main_window
AREA_TIMEOUT_MS = 60_000


def export(window):
    return window.controller("export")


def service(window):
    return window.controller("isochrone")


def export_action(window):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    return next(a for a in menu.actions() if a.text() == "&Export…")


def test_file_export_writes_the_route_and_the_tree(qtbot, window, graph, tmp_path, monkeypatch):
    load_graph(qtbot, window, graph)
    action = export_action(window)
    action.trigger()                                  # nothing shown yet: a message, no dialog
    assert window.last_error.startswith("Nothing to export")
    with pytest.raises(ValueError, match="Nothing to export"):
        export(window).export_to(tmp_path / "x.geojson")

    route = shift_click_route(qtbot, window, A, B)
    out = tmp_path / "route.geojson"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kw: (str(out), "GeoJSON line (*.geojson)")))
    with qtbot.waitSignal(export(window).exported, timeout=ROUTE_TIMEOUT_MS):
        action.trigger()                              # File ▸ Export… with the dialog answered
    feature = json.loads(out.read_text(encoding="utf-8"))["features"][0]
    coords = np.array(feature["geometry"]["coordinates"])
    assert feature["geometry"]["type"] == "LineString"
    assert coords[0] == pytest.approx([graph.lon[A], graph.lat[A]])
    assert coords[-1] == pytest.approx([graph.lon[B], graph.lat[B]])
    assert len(coords) == len(route.xy)               # the line drawn on the map, point for point
    assert feature["properties"]["cost"] == route.path.distance
    assert feature["properties"]["from"] == graph.node_id[A]
    assert "Exported" in window.statusBar().currentMessage()

    gpx_file = tmp_path / "route.gpx"
    export(window).export_to(gpx_file)
    assert len(gpxpy.parse(gpx_file.read_text(encoding="utf-8")).tracks[0].segments[0].points) == len(coords)
    with pytest.raises(ValueError, match="exported as .geojson or .gpx"):
        export(window).export_to(tmp_path / "route.csv")

    tree = show_tree(qtbot, window, A)
    table = tmp_path / "tree.csv"
    export(window).export_to(table)
    with open(table, newline="", encoding="utf-8") as f:            # the header row first
        rows = list(csv.DictReader(f))
    assert len(rows) == graph.num_nodes
    expected = model_distances(graph, A, tree.tree.metric)
    assert [int(r["distance"]) if r["distance"] else -1 for r in rows] == expected.tolist()
    points = tmp_path / "tree.geojson"
    export(window).export_to(points)
    assert len(json.loads(points.read_text(encoding="utf-8"))["features"]) == int((expected >= 0).sum())


@pytest.fixture(scope="module")
def road_network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=4)


def test_service_area_appears_after_a_click_in_tree_mode(qtbot, window, road_network, tmp_path):
    g = road_network
    load_graph(qtbot, window, g)
    area = service(window)
    area.check.setChecked(True)                       # no tree yet: nothing asked
    source = int(np.argmin(np.hypot(*(g.xy - g.xy.mean(axis=0)).T)))
    with qtbot.waitSignal(area.shown, timeout=AREA_TIMEOUT_MS,
                          check_params_cb=lambda a: a is not None and a.tree.tree.source == source):
        show_tree(qtbot, window, source)
    answer = area.answer
    cutoffs = answer.isochrones.cutoffs
    assert area.cutoffs.text() == "1, 2, 3, 4 km" and cutoffs == (1000, 2000, 3000, 4000)
    assert len(area.overlay.items) == 4 and area.overlay.filled_points() > 100
    assert "4.00 km" in area.legend.text() and "km²" in area.legend.toolTip()

    # the first band holds the source and the nodes near it; the bands, every node within 4 km
    d, xy = window.session.tree.tree.distance, g.xy
    paths = [it.path() for it in area.overlay.items]
    assert paths[0].contains(QPointF(*xy[source]))
    near = np.flatnonzero((d > 0) & (d < 500))
    assert near.size and all(paths[0].contains(QPointF(*xy[v])) for v in near)
    within = np.flatnonzero((d >= 0) & (d <= 4000))
    assert within.size > near.size and all(any(p.contains(QPointF(*xy[v])) for p in paths) for v in within)
    # semi-transparent fills, below the route and the markers
    assert area.overlay.items[0].brush().color().alpha() < 255     # semi-transparent
    assert area.overlay.items[0].zValue() < window.map_view.route.zValue()

    out = tmp_path / "area.geojson"
    export(window).export_to(out, "service_area")
    features = json.loads(out.read_text(encoding="utf-8"))["features"]
    assert [f["properties"]["cutoff"] for f in features] == [4000, 3000, 2000, 1000]
    assert all(shapely.geometry.shape(f["geometry"]).is_valid for f in features)

    area.cutoffs.setText("3, 1 km")                   # bad cut-offs: one clear line, no areas
    with qtbot.waitSignal(window.engine.error, timeout=AREA_TIMEOUT_MS,
                          check_params_cb=lambda job, message: job.kind == "isochrone"):
        area.cutoffs.editingFinished.emit()
    assert "must increase" in area.legend.text() and not area.overlay.items

    area.check.setChecked(False)
    assert not area.overlay.items and area.answer is None
