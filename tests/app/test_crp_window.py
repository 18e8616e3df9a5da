"""Live metric editing in the window (CPU backend, headless), on the generated network
and on an OSM extract: partition, "car fastest", two clicks give a CRP route; avoiding
motorways changes it and leaves a ghost; a dearer left turn never adds left turns; an
invalid expression keeps the metric and the route; a burst of 50 slider moves ends on
the route of the final decoder while the GUI thread keeps running; an edit is parsed
once and costs one engine round trip (its customization answers the route)."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer

from engine.crp import CrpQuery
from engine.crp.customization.customize import customize
from engine.core.graph import ROAD_CLASS_INDEX
from engine.core.paths import Unreachable
from tests.app.helpers import click_node, load_graph, routes
from tests.conftest import DATA, need

pytest.importorskip("pymetis")

HEIDELBERG = DATA / "osm" / "heidelberg.ors-test.osm.pbf"
CRP_TIMEOUT_MS = 60_000
MOTORWAY = ROAD_CLASS_INDEX["motorway"]


def crp(window):
    return window.controller("customize")


def editor(window):
    return crp(window).panel.editor


def reveal(e, widget):
    """Bring the editor's tab that holds ``widget`` to the front (as a person would)."""
    for i in range(e.tabs.count()):
        if e.tabs.widget(i).isAncestorOf(widget):
            e.tabs.setCurrentIndex(i)
    assert widget.isVisible()
    return widget


def partition(qtbot, window):
    with qtbot.waitSignal(crp(window).metric_shown, timeout=CRP_TIMEOUT_MS):
        qtbot.mouseClick(crp(window).panel.partition_button, Qt.LeftButton)
    assert crp(window).dock.isVisible()


def wait_route(qtbot, window, action):
    """Do ``action``; wait for the route drawn after the customization it causes."""
    with qtbot.waitSignal(routes(window).shown, timeout=CRP_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None):
        action()
    return window.session.route


def motorway_pair(window, seed=0):
    """Endpoints whose car-fastest route uses a motorway and which stay connected
    without motorways (found with the engine, outside the window)."""
    g, s = window.session.graph, window.session
    overlay = s.cell_metric.overlay
    fastest = CrpQuery(overlay, s.cell_metric)
    avoiding = editor(window).decoder()
    avoiding = replace(avoiding, forbid=tuple(avoiding.forbid) + ("motorway",))
    no_motorway = CrpQuery(overlay, customize(overlay, avoiding))
    rng = np.random.default_rng(seed)
    for a, b in rng.integers(0, g.num_nodes, (400, 2)):
        try:
            p = fastest.route(int(a), int(b))
            if (g.arc_attrs["road_class"][p.arcs] == MOTORWAY).any() and p.num_arcs > 10:
                no_motorway.route(int(a), int(b))
                return int(a), int(b)
        except Unreachable:
            continue
    pytest.skip("no route through a motorway found")


def live_session(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    e = editor(window)
    assert e.decoder().name == "car-fastest"          # the maps' default preset
    partition(qtbot, window)
    s, t = motorway_pair(window)
    window.map_view.fit()
    click_node(qtbot, window, s)
    route = wait_route(qtbot, window, lambda: click_node(qtbot, window, t))
    assert route.method_label == "CRP query" and route.turns is not None
    return s, t, route


def check_edits(qtbot, window):
    g, session, e = window.session.graph, window.session, editor(window)
    first = session.route
    # avoid motorways: another route, with no motorway, and the old one as a ghost
    box = reveal(e, e.avoid_boxes["motorway"])
    route = wait_route(qtbot, window, lambda: qtbot.mouseClick(box, Qt.LeftButton))
    assert "motorway" in e.decoder().forbid
    assert not (g.arc_attrs["road_class"][route.path.arcs] == MOTORWAY).any()
    assert not np.array_equal(route.path.arcs, first.path.arcs)
    assert session.ghost is first and window.map_view.ghost_points() > 0
    assert "changed from the last metric" in routes(window).summary.text()
    # a dearer left turn: never more left turns
    lefts = route.turns["by_type"]["left"]
    spin = reveal(e, e.turn_spins["left"])
    route = wait_route(qtbot, window, lambda: spin.setValue(spin.value() + 120))
    assert route.turns["by_type"]["left"] <= lefts
    assert "left" in routes(window).summary.text()
    # an invalid expression: inline error, the metric and the route stay
    metric, shown = session.cell_metric, session.route
    reveal(e, e.expression_edit).setFocus()
    qtbot.keyClicks(e.expression_edit, "cost * (1 +")
    qtbot.keyClick(e.expression_edit, Qt.Key_Return)
    qtbot.wait(200)
    assert e.error_label.isVisible() and "^" in e.error_label.text()
    assert session.cell_metric is metric and session.route is shown
    assert not window.engine.running("customize")
    assert "keeps" in crp(window).panel.status.text()


def check_burst(qtbot, window, s, t):
    """50 slider moves in a burst: the GUI keeps ticking, the last route is the final
    decoder's (checked against the engine outside the window)."""
    e, session = editor(window), window.session
    e.expression_edit.clear()
    qtbot.keyClick(e.expression_edit, Qt.Key_Return)
    slider = reveal(e, e.speed_sliders["residential"])
    ticks = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    start = slider.value()
    for i in range(50):
        slider.setValue(start + (i % 25) - 12 if i < 49 else start - 7)
        qtbot.wait(3)
    final = e.decoder()
    assert dict(final.speeds)["residential"] == start - 7
    qtbot.waitUntil(lambda: session.cell_metric.decoder == final and session.route is not None
                    and session.route.path.metric == final.name
                    and not window.engine.running("customize") and not window.engine.running("route"),
                    timeout=CRP_TIMEOUT_MS)
    qtbot.wait(100)
    timer.stop()
    gaps = np.diff(ticks)
    assert len(ticks) > 20 and gaps.max() < 0.5, f"the GUI stalled {gaps.max():.2f} s"
    expected = CrpQuery(session.cell_metric.overlay, customize(session.cell_metric.overlay, final)).route(s, t)
    assert session.route.path.distance == expected.distance
    assert np.array_equal(session.route.path.arcs, expected.arcs)


def test_live_metric_editing_on_the_generated_network(qtbot, window):
    from engine.generate.network import generate_road_network
    s, t, _ = live_session(qtbot, window, generate_road_network(8_000, seed=3))
    check_edits(qtbot, window)
    check_burst(qtbot, window, s, t)


def test_live_metric_editing_on_an_osm_extract(qtbot, window):
    from engine.io import load
    graph = load([need(HEIDELBERG)])
    s, t, _ = live_session(qtbot, window, graph)
    check_edits(qtbot, window)


def test_a_decoder_failing_in_the_engine_keeps_the_metric(qtbot, window):
    from engine.generate.network import generate_road_network
    load_graph(qtbot, window, generate_road_network(2_000, seed=5))
    partition(qtbot, window)
    e, metric = editor(window), window.session.cell_metric
    with qtbot.waitSignal(crp(window).metric_failed, timeout=CRP_TIMEOUT_MS) as failed:
        reveal(e, e.expression_edit).setFocus()
        qtbot.keyClicks(e.expression_edit, "cost / 0")
        qtbot.keyClick(e.expression_edit, Qt.Key_Return)
    assert "infinite" in failed.args[0] or "zero" in failed.args[0]
    assert window.session.cell_metric is metric
    assert "the map keeps car-fastest" in crp(window).panel.status.text()


def test_cells_mode_shows_a_cell_and_its_matrix(qtbot, window):
    from engine.generate.network import generate_road_network
    load_graph(qtbot, window, generate_road_network(3_000, seed=6))
    partition(qtbot, window)
    panel = crp(window).panel
    panel.level_combo.setCurrentIndex(2)                # level 1
    assert window.map_view.colouring == "cells"
    window.set_mode("cells")
    click_node(qtbot, window, 100)
    overlay = window.session.cell_metric.overlay
    cell = int(overlay.cell_of[1][100])
    assert window.session.crp_cell == cell
    entries, exits = crp(window).cells.points_drawn()
    assert (entries, exits) == overlay.levels[1].counts(cell)[:2]
    assert crp(window).cells.matrix_lines() > 0


def test_an_edit_is_parsed_once_and_is_one_round_trip(qtbot, window, monkeypatch):
    """One decoder edit: its TOML is parsed once (by the editor; every parse of a decoder
    goes through engine.crp.metric.decoder's tomllib.loads), and one job goes to the
    engine (the customization, which answers the route on the new metric too)."""
    import engine.crp.metric.decoder as decoder_module
    from engine.generate.network import generate_road_network
    load_graph(qtbot, window, generate_road_network(3_000, seed=4))
    partition(qtbot, window)
    g = window.session.graph
    click_node(qtbot, window, 7)
    wait_route(qtbot, window, lambda: click_node(qtbot, window, g.num_nodes - 9))
    qtbot.waitUntil(lambda: not window.engine.running("route"), timeout=CRP_TIMEOUT_MS)
    parses, jobs = [], []
    loads = decoder_module.tomllib.loads

    class CountingToml:
        @staticmethod
        def loads(text):
            parses.append(text)
            return loads(text)
    monkeypatch.setattr(decoder_module, "tomllib", CountingToml)
    window.engine.submitted.connect(lambda job: jobs.append(job.kind))
    e = editor(window)
    spin = reveal(e, e.turn_spins["left"])
    route = wait_route(qtbot, window, lambda: spin.setValue(spin.value() + 45))
    qtbot.wait(300)                                   # nothing else follows the answer
    assert len(parses) == 1, f"{len(parses)} parses of one edit"
    assert jobs == ["customize"], f"one edit made the jobs {jobs}"
    metric = window.session.cell_metric
    assert metric.decoder == e.decoder() and route.method_label == "CRP query"
    assert not window.engine.running("route")
    expected = CrpQuery(metric.overlay, metric).route(route.source, route.target)
    assert route.path.distance == expected.distance
