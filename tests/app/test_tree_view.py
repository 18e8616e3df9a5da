"""Shortest-path trees in the window: tree mode, distance colours and legend, hover and
click paths read from the tree, the compare chart, engine failures, Esc.

Every wait is on a signal of the window or of EngineClient (GUI-thread objects).
"""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances

import dataclasses

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine import sssp
from engine.core import paths
from engine.routing import reference
from engine.sssp import METHODS
from tests.app.helpers import (ISLAND, ROUTE_TIMEOUT_MS, click_node, context_menu_action, routes, trees,
                               load_graph, node_viewport_pos, show_tree)

A, B, C = 7, 28, 22      # grid nodes (indices), as in test_main_window
TREE_TIMEOUT_MS = 30_000
COMPARE_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def road_network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=4)


def class_curves_visible(window) -> bool:
    return any(c.isVisible() for c in window.map_view._curves)


def test_click_in_tree_mode_colours_the_network_by_distance(qtbot, window, road_network):
    g = road_network
    load_graph(qtbot, window, g)
    source = int(np.argmin(np.hypot(*(g.xy - g.xy.mean(axis=0)).T)))    # near the middle
    answer = show_tree(qtbot, window, source, TREE_TIMEOUT_MS)
    assert answer.method in METHODS and answer.backend.startswith("CPU")      # "auto", resolved
    assert np.array_equal(answer.tree.distance, model_distances(g, source, answer.tree.metric))

    sizes = window.map_view.tree_curve_sizes()
    bins = window.session.tree_bins
    assert 12 <= bins.count <= 16 and len(sizes) == bins.count + 1      # + unreachable
    assert sum(n > 0 for n in sizes[:-1]) >= bins.count - 1
    assert sum(sizes) == window.map_view.level.num_segments             # every road, once
    assert not class_curves_visible(window) and window.map_view.showing_tree

    rows = trees(window).legend_rows()
    assert len(rows) == bins.count and rows[0][1].startswith("0 – ") and rows[-1][1].endswith(" km")
    assert rows[0][0] == bins.colors[0] and "km" in trees(window).legend.text()
    info = trees(window).info.text()
    assert METHODS[answer.method][1] in info and "CPU" in info and " ms" in info
    assert not window.controller("load").legend.isVisible()          # the road-class legend makes way


def test_hover_then_click_show_distance_and_path_from_the_tree(qtbot, window, graph, monkeypatch):
    load_graph(qtbot, window, graph)
    answer = show_tree(qtbot, window, A, TREE_TIMEOUT_MS)
    asked = []
    real_submit = window.engine.submit
    monkeypatch.setattr(window.engine, "submit", lambda kind, *a, **k: (asked.append(kind), real_submit(kind, *a, **k))[1])

    viewport = window.map_view.plot.viewport()
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == B):
        QTest.mouseMove(viewport, node_viewport_pos(window, B))
    path = window.session.route.path
    check_route(graph, path)
    assert path.source == A and path.distance == answer.tree.distance[B]
    assert routes(window).summary.text().startswith(f"<b>{window.session.tree_bins.unit.format(path.distance)}</b>")
    assert window.session.tree_bins.unit.format(path.distance).endswith(" km")
    assert window.session.target is None                   # hovering pins nothing

    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == C):
        click_node(qtbot, window, C)
    assert window.session.target == C and window.map_view.markers["target"].isVisible()
    check_route(graph, window.session.route.path)
    assert len(window.map_view.route.getData()[0]) > 2
    QTest.mouseMove(viewport, node_viewport_pos(window, B))   # the clicked path stays
    qtbot.wait(150)
    assert window.session.route.target == C
    assert asked == []                              # all read from the tree, nothing recomputed
    assert window.session.tree is answer

    click_node(qtbot, window, ISLAND)               # nothing reaches the island
    assert window.session.route is None and "cannot be reached" in routes(window).summary.text()


def test_method_selector_recomputes_the_tree(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    first = show_tree(qtbot, window, A, TREE_TIMEOUT_MS)
    for i in range(1, trees(window).method_combo.count()):
        name = trees(window).method_combo.itemData(i)
        with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                              check_params_cb=lambda t, name=name: t is not None and t.method == name):
            trees(window).method_combo.setCurrentIndex(i)
        assert np.array_equal(window.session.tree.tree.distance, first.tree.distance)
        assert METHODS[name][1] in trees(window).info.text()


def test_context_menu_tree_from_here(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    assert not (window.session.mode == "tree")
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None and t.tree.source == B):
        context_menu_action(qtbot, window, B, "Shortest-path tree from here").trigger()
    assert (window.session.mode == "tree") and window.session.source == B and window.session.target is None
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.source == B):
        context_menu_action(qtbot, window, A, "Route to here").trigger()
    assert not (window.session.mode == "tree") and window.session.tree is None and class_curves_visible(window)


def test_escape_clears_the_tree_and_brings_back_the_classes(qtbot, window, graph):
    load_graph(qtbot, window, graph)
    show_tree(qtbot, window, A, TREE_TIMEOUT_MS)
    click_node(qtbot, window, B)
    with qtbot.waitSignal(trees(window).tree_shown, timeout=1000, check_params_cb=lambda t: t is None):
        QTest.keyClick(window, Qt.Key_Escape)
    assert window.session.tree is None and not window.map_view.showing_tree
    assert window.map_view.tree_curve_sizes() == [] and class_curves_visible(window)
    assert window.session.source is None and window.session.target is None and window.session.route is None
    assert trees(window).legend.text() == "" and window.controller("load").legend.isVisible()
    assert (window.session.mode == "tree")                          # the mode stays: the next click is a tree
    show_tree(qtbot, window, C, TREE_TIMEOUT_MS)
    with qtbot.waitSignal(trees(window).tree_shown, timeout=1000, check_params_cb=lambda t: t is None):
        qtbot.mouseClick(trees(window).clear_button, Qt.LeftButton)
    assert window.session.tree is None


def test_compare_chart_has_a_bar_per_method_and_the_reference(qtbot, window, road_network):
    load_graph(qtbot, window, road_network)
    show_tree(qtbot, window, 10, TREE_TIMEOUT_MS)
    progress = []
    window.engine.progress.connect(lambda job, f, msg: progress.append(msg) if job.kind == "compare" else None)
    with qtbot.waitSignal(trees(window).comparison_shown, timeout=COMPARE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(trees(window).compare_button, Qt.LeftButton)
        assert window.progress.bar.isVisible()
    c = blocker.args[0]
    assert [t.name for t in c.timings] == [*METHODS, "reference"]
    assert c.exact and c.verdict == "all exact" and all(t.ms > 0 and t.runs >= 1 for t in c.timings)
    chart = trees(window).compare_chart
    assert trees(window).compare_dock.isVisible()
    assert len(chart.bars.opts["width"]) == len(METHODS) + 1
    assert np.allclose(chart.bars.opts["width"], [t.ms for t in c.timings])
    ticks = [label for _, label in chart.getPlotItem().getAxis("left")._tickLevels[0]]
    assert ticks == [t.label for t in c.timings]
    assert "all exact" in chart.title and "CPU" in chart.title
    assert any("Comparing" in m for m in progress) and not window.progress.bar.isVisible()


def test_compare_reports_a_method_that_disagrees(qtbot, window, graph, monkeypatch):
    real = sssp.TreeQuery.tree

    def off_by_one(query, source, method="auto", **kw):
        r = real(query, source, method, **kw)
        if method == "kstep":
            d = r.tree.distance.copy()
            d[d > 0] += 1
            r = dataclasses.replace(r, tree=dataclasses.replace(r.tree, distance=d))
        return r
    monkeypatch.setattr(sssp.TreeQuery, "tree", off_by_one)
    load_graph(qtbot, window, graph)
    routes(window).set_source(A)
    with qtbot.waitSignal(trees(window).comparison_shown, timeout=COMPARE_TIMEOUT_MS) as blocker:
        QTest.keyClick(window, Qt.Key_C)
    c = blocker.args[0]
    bad = {t.name: t.mismatches for t in c.timings if t.mismatches}
    assert list(bad) == ["kstep"] and bad["kstep"] > 0
    assert "MISMATCH" in trees(window).compare_chart.title and "kstep" in trees(window).compare_chart.title


def test_engine_failure_shows_a_message_and_the_window_stays_usable(qtbot, window, graph, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("kernel exploded")
    load_graph(qtbot, window, graph)
    monkeypatch.setattr(sssp.TreeQuery, "tree", broken)
    qtbot.mouseClick(trees(window).tree_button, Qt.LeftButton)
    with qtbot.waitSignal(window.error_shown, timeout=TREE_TIMEOUT_MS) as blocker:
        click_node(qtbot, window, A)
    assert blocker.args[0] == ("Shortest-path tree failed: internal error (RuntimeError: kernel exploded) — "
                                "see the terminal for details")
    assert window.banner.isVisible() and window.session.tree is None and class_curves_visible(window)
    assert "kernel exploded" in trees(window).info.text()

    with qtbot.waitSignal(window.error_shown, timeout=COMPARE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(trees(window).compare_button, Qt.LeftButton)
    assert "Comparing SSSP methods failed" in blocker.args[0] and "kernel exploded" in blocker.args[0]
    assert not window.progress.bar.isVisible() and not trees(window).compare_dock.isVisible()

    monkeypatch.undo()                               # the engine works again: so does the window
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None and t.tree.source == B):
        click_node(qtbot, window, B, modifier=Qt.ShiftModifier)
    qtbot.mouseClick(trees(window).tree_button, Qt.LeftButton)          # back to routes
    assert window.session.mode == "route" and not trees(window).tree_button.isChecked()
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None):
        click_node(qtbot, window, C)
    assert (window.session.route.source, window.session.route.target) == (B, C)


def test_tree_follows_the_level_of_detail(qtbot, window, monkeypatch, road_network):
    monkeypatch.setattr("app.network_geometry.COARSEST_CELLS", 32)   # a small net needs big cells
    load_graph(qtbot, window, road_network)
    show_tree(qtbot, window, 0, TREE_TIMEOUT_MS)
    mv, d = window.map_view, window.session.drawing
    xmin, ymin, xmax, ymax = d.bounds
    cx, cy, hw = (xmin + xmax) / 2, (ymin + ymax) / 2, 20 * (xmax - xmin)
    with qtbot.waitSignal(mv.detail_changed, timeout=5000):
        mv.view.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hw, cy + hw), padding=0)
    assert mv.level is not d.exact
    assert sum(mv.tree_curve_sizes()) == mv.level.num_segments < d.exact.num_segments
    assert not class_curves_visible(window)


def test_the_legend_gets_the_height_of_all_its_rows(qtbot, window):
    """Every distance bin has its row on screen: on the default network the panel gave
    the legend one row's height less than it needs (QFormLayout misshared the height of
    wrapped labels), and the last bin was cut off."""
    window.resize(1280, 820)
    window.show()
    with qtbot.waitSignal(window.graph_shown, timeout=120_000):
        window.open_default()
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None):
        trees(window).tree_from(79595)
    info, legend = trees(window).info, trees(window).legend
    assert legend.text().count("<tr>") == 7          # 14 bins in two columns

    def full_height(label):
        return label.height() >= label.heightForWidth(label.width())
    # the layout settles over a few events; a clipped label never gets there
    qtbot.waitUntil(lambda: full_height(info) and full_height(legend), timeout=3000)
