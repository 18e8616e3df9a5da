"""The window with real mouse and key events: click two nodes, see the route; clear,
swap, metrics, errors, cancelling, graphs without coordinates, level of detail."""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances

import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine.core.paths import check_path
from tests.app.helpers import (ID_OFFSET, ISLAND, LOAD_TIMEOUT_MS, ROUTE_TIMEOUT_MS, SHARED_DATA, answer_of,
                               click_node, context_menu_action, grid_graph, load_graph,
                               node_viewport_pos, routes, write_dimacs)
from tests.app.test_engine_thread import slow_job

A, B, C = 7, 28, 22      # grid nodes (indices) far enough apart for several arcs


def route_data(window):
    x, _ = window.map_view.route.getData()
    return 0 if x is None else len(x)


def click_route(qtbot, window, s=A, t=B):
    click_node(qtbot, window, s)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None):
        click_node(qtbot, window, t)
    return window.session.route


def test_click_two_nodes_draws_the_route(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    result = click_route(qtbot, window)
    assert (window.session.source, window.session.target) == (A, B)
    assert result.source == A and result.target == B
    check_route(graph, result.path)
    assert route_data(window) == len(result.xy) > 2
    assert "km" in routes(window).summary.text() and "arcs" in routes(window).summary.text()
    assert routes(window).source_edit.text() == str(ID_OFFSET + A)
    assert routes(window).target_edit.text() == str(ID_OFFSET + B)
    assert all(m.isVisible() for m in window.map_view.markers.values())


def test_further_clicks_move_the_target_and_shift_click_the_source(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    click_route(qtbot, window)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        click_node(qtbot, window, C)
    assert (window.session.source, window.session.target) == (A, C)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        click_node(qtbot, window, 0, modifier=Qt.ShiftModifier)
    assert (window.session.source, window.session.target) == (0, C)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        context_menu_action(qtbot, window, 5, "Route from here").trigger()
    assert (window.session.source, window.session.target) == (5, C)
    assert window.session.route.path.nodes[0] == 5


def test_escape_clears(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    click_route(qtbot, window)
    QTest.keyClick(window, Qt.Key_Escape)
    assert window.session.source is None and window.session.target is None
    assert route_data(window) == 0 and routes(window).summary.text() == ""
    assert not any(m.isVisible() for m in window.map_view.markers.values())


def test_swap_reverses_the_route(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    click_route(qtbot, window)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        QTest.keyClick(window, Qt.Key_X)
    assert (window.session.source, window.session.target) == (B, A)
    assert window.session.route.path.nodes[0] == B and window.session.route.path.nodes[-1] == A
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        qtbot.mouseClick(routes(window).swap_button, Qt.LeftButton)
    assert (window.session.source, window.session.target) == (A, B)


def test_metric_selector_routes_again(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    assert [routes(window).metric_combo.itemText(i) for i in range(routes(window).metric_combo.count())] == \
        ["distance", "travel_time"]
    click_route(qtbot, window)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        routes(window).metric_combo.setCurrentText("travel_time")
    assert window.session.route.metric == "travel_time"
    assert "travel_time" in routes(window).summary.text()


def test_unreachable_target_keeps_the_markers(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    click_node(qtbot, window, A)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        click_node(qtbot, window, ISLAND)
    assert window.session.route is None and route_data(window) == 0
    assert "cannot be reached" in routes(window).summary.text()
    assert (window.session.source, window.session.target) == (A, ISLAND)
    assert all(m.isVisible() for m in window.map_view.markers.values())


def test_dragging_a_marker_reroutes_on_release(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    click_route(qtbot, window)
    viewport = window.map_view.plot.viewport()
    start, end = node_viewport_pos(window, B), node_viewport_pos(window, C)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == C):
        QTest.mousePress(viewport, Qt.LeftButton, Qt.NoModifier, start)
        for k in range(1, 9):
            QTest.mouseMove(viewport, start + (end - start) * (k / 8))
            qtbot.wait(5)
        QTest.mouseRelease(viewport, Qt.LeftButton, Qt.NoModifier, end)
    assert window.session.target == C
    marker = window.map_view.markers["target"].pos()
    assert np.allclose([marker.x(), marker.y()], window.session.drawing.node_xy[C])


def test_open_a_dimacs_file_and_route(qtbot, window, graph, tmp_path):
    gr, co = write_dimacs(tmp_path, graph)
    with qtbot.waitSignal(window.graph_shown, timeout=LOAD_TIMEOUT_MS):
        window.open_files([gr, co])
    assert window.session.graph.num_arcs == graph.num_arcs
    assert "tiny.gr" in window.windowTitle()
    assert f"{graph.num_nodes:,} nodes" in window.size_label.text()
    result = click_route(qtbot, window)
    check_route(window.session.graph, result.path)


def test_bad_file_shows_an_error_and_the_graph_stays(qtbot, window, graph, tmp_path):
    load_graph(qtbot, window, graph)
    bad = tmp_path / "garbage.osm.pbf"
    bad.write_bytes(b"\x00\xffnot a road network" * 50)
    with qtbot.waitSignal(window.error_shown, timeout=LOAD_TIMEOUT_MS) as blocker:
        window.open_files([bad])
    assert "garbage.osm.pbf" in blocker.args[0] and "previous graph" in blocker.args[0]
    assert window.banner.isVisible() and window.session.graph is graph
    assert not window.progress.bar.isVisible()
    click_route(qtbot, window)     # the old graph still routes


def test_cancel_button_leaves_the_old_graph(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    started = threading.Event()
    window.engine.load_with("Slow load", slow_job(30, started))
    qtbot.waitUntil(started.is_set, timeout=LOAD_TIMEOUT_MS)
    qtbot.waitUntil(window.cancel_button.isVisible, timeout=LOAD_TIMEOUT_MS)
    with qtbot.waitSignal(window.engine.cancelled, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(window.cancel_button, Qt.LeftButton)
    assert window.session.graph is graph and not window.cancel_button.isVisible()
    click_route(qtbot, window)


def test_graph_without_coordinates_routes_by_typed_ids(qtbot, window):
    g = grid_graph(coordinates=False, source="no coordinates")
    load_graph(qtbot, window, g)
    assert window.map_view.stack.currentWidget() is window.map_view.message
    assert "no coordinates" in window.map_view.message.text()
    qtbot.keyClicks(routes(window).source_edit, str(ID_OFFSET + A))
    QTest.keyClick(routes(window).source_edit, Qt.Key_Return)
    qtbot.keyClicks(routes(window).target_edit, str(ID_OFFSET + B))
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS):
        QTest.keyClick(routes(window).target_edit, Qt.Key_Return)
    assert window.session.route.xy is None and "arcs" in routes(window).summary.text()
    routes(window).target_edit.setText("99999")
    QTest.keyClick(routes(window).target_edit, Qt.Key_Return)
    assert "unknown node id 99999" in routes(window).summary.text()


def test_osm_licence_is_shown_under_the_map(qtbot, window):
    load_graph(qtbot, window, grid_graph(license_text="© OpenStreetMap contributors"))
    assert window.map_view.attribution.isVisible()
    assert window.map_view.attribution.text() == "© OpenStreetMap contributors"
    load_graph(qtbot, window, grid_graph())
    assert not window.map_view.attribution.isVisible()


def test_status_bar_names_backend_and_size(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    qtbot.waitUntil(lambda: window.backend_label.text().startswith("CPU"), timeout=LOAD_TIMEOUT_MS)
    assert window.size_label.text() == f"{graph.num_nodes:,} nodes · {graph.num_arcs:,} arcs"
    assert window.windowTitle() == "RouteLab — test grid"
    assert "motorway" not in window.controller("load").legend.text() and "primary" in window.controller("load").legend.text()


def test_level_of_detail_follows_the_zoom(qtbot, window, monkeypatch):
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=30_000, seed=2)
    monkeypatch.setattr("app.network_geometry.COARSEST_CELLS", 32)   # a small net needs big cells
    monkeypatch.setattr("app.map_view.CROP_ABOVE_SEGMENTS", 1000)    # and crops early
    load_graph(qtbot, window, g)
    mv = window.map_view
    d = window.session.drawing
    xmin, ymin, xmax, ymax = d.bounds

    def show(half_width, cx=(xmin + xmax) / 2, cy=(ymin + ymax) / 2):
        with qtbot.waitSignal(mv.detail_changed, timeout=5000):
            mv.view.setRange(xRange=(cx - half_width, cx + half_width),
                             yRange=(cy - half_width, cy + half_width), padding=0)
        return sum(len(c.getData()[0]) for c in mv._curves) // 2

    far = show(20 * (xmax - xmin))               # zoomed far out: a coarse level
    assert mv.level is not d.exact and mv.level.cell <= mv.metres_per_pixel()
    assert far < d.exact.num_segments
    assert not mv.nodes.isVisible()
    assert not all(c.isVisible() for c in mv._curves)   # minor roads hidden
    near = show(300.0)                            # a few blocks: exact, cropped, node dots
    assert mv.level is d.exact and near < d.exact.num_segments / 10
    assert mv.nodes.isVisible() and 0 < len(mv.nodes.data) <= 2000
    crop = mv._crop
    show(300.0, (xmin + xmax) / 2 + 100)          # a small pan stays inside the crop
    assert mv._crop == crop
    show(300.0, (xmin + xmax) / 2 + 2000)         # a long one refills
    assert mv._crop != crop and mv._crop[0] > crop[0]


@pytest.mark.slow
def test_new_york_opens_and_routes(qtbot, window):
    gr = SHARED_DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not gr.exists():
        pytest.skip(f"shared data file {gr} is absent")
    with qtbot.waitSignal(window.graph_shown, timeout=120_000):
        window.open_files([gr])
    assert window.session.graph.num_nodes == 264_346 and window.session.drawing is not None
    assert len(window.session.drawing.levels) > 1
    click_route(qtbot, window, 1000, 200_000)


def test_save_cache_then_open_it(qtbot, window, graph, tmp_path):
    load_graph(qtbot, window, graph)
    path = tmp_path / "grid.rlg"
    with answer_of(qtbot, window.engine, "cache", timeout=LOAD_TIMEOUT_MS) as blocker:
        window.controller("cache").save_cache(path)
    assert blocker.args[1].path == str(path) and path.is_file()
    with qtbot.waitSignal(window.graph_shown, timeout=LOAD_TIMEOUT_MS):
        window.open_files([path])
    assert window.session.graph is not graph and window.session.graph.num_arcs == graph.num_arcs
    click_route(qtbot, window)


def test_run_window_opens_the_given_files(qtbot, graph, tmp_path):
    from PySide6.QtCore import QCoreApplication, QEvent, QTimer
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.window import run_window
    gr, co = write_dimacs(tmp_path, graph)
    app = QApplication.instance()
    seen = []

    def poll():
        shown = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if shown and shown[0].session.graph is not None:
            seen.append(shown[0].session.graph.source)
            shown[0].close()
            app.quit()
        else:
            QTimer.singleShot(20, poll)
    QTimer.singleShot(0, poll)
    guard = QTimer(singleShot=True, interval=LOAD_TIMEOUT_MS)   # never hang the suite
    guard.timeout.connect(app.quit)
    guard.start()
    try:
        assert run_window([str(gr), str(co)], backend="cpu") == 0
    finally:
        guard.stop()
        # closing the last window asks to quit as well: a Quit event left in the queue
        # would end the next test's event loop at once
        QCoreApplication.removePostedEvents(None, QEvent.Quit)
    assert seen and "tiny.gr" in seen[0]
