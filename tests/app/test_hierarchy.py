"""The contraction hierarchy in the window: contract with a live chart, cancel and start
again, errors, colour by level, inspect a node and unpack a shortcut, PHAST trees with the
per-level chart, save and open a hierarchy, a hierarchy of another graph.

Every wait is on a signal of the window or of EngineClient (GUI-thread objects).
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from app import engine_thread
from app.engine_thread import PHAST
from app.network_geometry import route_polyline
from engine import paths
from engine.ch import STEPS
from tests.app.helpers import click_node, grid_graph, load_graph

K = 100
CONTRACT_TIMEOUT_MS = 60_000
TREE_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def network():
    from engine.generate import generate_road_network
    return generate_road_network(num_nodes=3000, seed=1)


def contract(qtbot, window, k: int = K):
    """Set K in the panel, click Contract: the hierarchy the window then uses."""
    window.hierarchy_panel.k_spin.setValue(k)
    with qtbot.waitSignal(window.hierarchy_shown, timeout=CONTRACT_TIMEOUT_MS,
                          check_params_cb=lambda h: h is not None) as blocker:
        qtbot.mouseClick(window.hierarchy_panel.contract_button, Qt.LeftButton)
    return blocker.args[0]


def class_curves_visible(window) -> bool:
    return any(c.isVisible() for c in window.map_view._curves)


def test_contract_fills_the_chart_live_and_shows_a_summary(qtbot, window, network):
    load_graph(qtbot, window, network)
    seen = []    # (level, bars drawn when the window had handled it, hierarchy in use then)
    window.engine.contract_iteration.connect(
        lambda job, r: seen.append((r["level"], window.contract_chart.bar_count(), window.hierarchy)))
    h = contract(qtbot, window)
    assert h.graph is network and h.params["backend"] == "cpu" and h.params["K"] == K
    assert h.num_levels > 5 and h.core_nodes.size < K
    assert [s[0] for s in seen] == list(range(h.num_levels))
    assert [s[1] for s in seen] == list(range(1, h.num_levels + 1))   # one more bar per signal
    assert all(s[2] is None for s in seen)                            # all before the result

    chart = window.contract_chart
    assert window.contract_dock.isVisible()
    assert chart.bar_count() == chart.point_count() == len(h.iterations) == h.num_levels
    top = chart.bars[STEPS[-1]].opts
    assert np.allclose(top["y0"] + top["height"], [sum(r["ms"].values()) for r in h.iterations])
    assert np.array_equal(chart.contracted.getOriginalDataset()[1], [r["contracted"] for r in h.iterations])
    s = h.summary()
    text = window.hierarchy_panel.summary.text()
    assert f"{s['levels']} levels" in text and f"{s['shortcuts']:,} shortcuts" in text
    assert f"edge growth (|E↑|+|E↓|)/|E| = {s['edge_growth']:.2f}" in text and "CPU" in text
    assert f"{s['shortcuts']:,} shortcuts" in chart.title
    assert not window.progress.isVisible() and not window.hierarchy_panel.cancel_button.isEnabled()
    assert window.method_combo.currentData() == PHAST          # the default tree method now


def test_cancel_a_contraction_then_contract_again(qtbot, window, network, monkeypatch):
    real, calls = engine_thread.contract, []

    def held(*args, on_iteration, cancel, **kwargs):
        """The first run waits after each level until it is cancelled (deterministic)."""
        calls.append(1)

        def each(record):
            on_iteration(record)
            deadline = time.monotonic() + 5
            while len(calls) == 1 and not cancel.cancelled and time.monotonic() < deadline:
                time.sleep(0.002)
        return real(*args, on_iteration=each, cancel=cancel, **kwargs)
    monkeypatch.setattr(engine_thread, "contract", held)
    load_graph(qtbot, window, network)
    window.engine.contract_iteration.connect(
        lambda job, r: window.hierarchy_panel.cancel_button.click() if len(calls) == 1 else None)
    with qtbot.waitSignal(window.engine.contract_cancelled, timeout=CONTRACT_TIMEOUT_MS):
        qtbot.mouseClick(window.hierarchy_panel.contract_button, Qt.LeftButton)
        assert window.progress.isVisible() and window.hierarchy_panel.cancel_button.isEnabled()
    assert window.hierarchy is None and window.contract_chart.bar_count() == 1
    assert "cancelled after 1 levels" in window.contract_chart.title
    assert not window.progress.isVisible() and not window.banner.isVisible()

    h = contract(qtbot, window)                   # starting again works
    assert window.hierarchy is h and window.contract_chart.bar_count() == h.num_levels


def test_engine_error_shows_the_banner_and_the_window_stays_usable(qtbot, window, network, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("out of shortcut memory")
    load_graph(qtbot, window, network)
    monkeypatch.setattr(engine_thread, "contract", broken)
    with qtbot.waitSignal(window.error_shown, timeout=CONTRACT_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.hierarchy_panel.contract_button, Qt.LeftButton)
    assert blocker.args[0] == "Contraction failed: RuntimeError: out of shortcut memory."
    assert window.banner.isVisible() and window.hierarchy is None and not window.progress.isVisible()
    monkeypatch.undo()
    assert contract(qtbot, window) is window.hierarchy


def test_colour_by_level_has_a_legend_and_a_curve_per_level_bin(qtbot, window, network):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    mv, bins = window.map_view, window.level_bins
    with qtbot.waitSignal(mv.detail_changed, timeout=2000):
        qtbot.mouseClick(window.hierarchy_panel.levels_button, Qt.LeftButton)
    assert window.levels_action.isChecked() and mv.colouring == "levels"
    sizes = mv.bin_curve_sizes()
    assert len(sizes) == bins.count and sum(sizes) == mv.level.num_segments   # every road, once
    assert sizes[0] > 0 and sum(n > 0 for n in sizes) >= bins.count - 2
    level = mv.level       # the bin of the drawn segments is the higher end's level
    seg = np.maximum(h.node_level[level.end_a], h.node_level[level.end_b])
    assert np.array_equal(np.bincount(bins.of(seg), minlength=bins.count), sizes)
    assert not class_curves_visible(window) and not window.legend.isVisible()
    legend = window.hierarchy_panel.legend
    labels = bins.labels()
    assert labels[0] in ("0", f"0–{bins.first[1] - 1}") and labels[-1] == f"core ({h.num_levels})"
    assert legend.isVisible() and all(t in legend.text() for t in labels)

    window.set_tree_mode(True)                      # a tree wins while it is shown ...
    with qtbot.waitSignal(window.tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None):
        click_node(qtbot, window, 5)
    assert mv.colouring == "tree" and not legend.isVisible()
    with qtbot.waitSignal(window.tree_shown, timeout=2000, check_params_cb=lambda t: t is None):
        QTest.keyClick(window, Qt.Key_Escape)
    assert mv.colouring == "levels" and legend.isVisible()   # ... then the levels come back

    QTest.keyClick(window, Qt.Key_L)
    assert mv.colouring is None and mv.bin_curve_sizes() == [] and class_curves_visible(window)
    assert window.legend.isVisible() and not legend.isVisible()


def node_with_up_shortcut(h) -> int:
    """A non-core node with an upward shortcut and a downward arc, the one with most arcs."""
    up = h.up_harc[h.is_shortcut(h.up_harc)]
    nodes = np.intersect1d(h.arc_tail[up], h.arc_head[h.down_harc])
    return int(nodes[np.argmax([sum(a.size for a in h.node_arcs(v)) for v in nodes])])


def check_unpacked(window, h, arc: int) -> None:
    g, mv = window.graph, window.map_view
    originals = h.unpack(arc)
    assert originals.size >= 2 and (originals >= 0).all() and (originals < g.num_arcs).all()
    assert g.tail[originals[0]] == h.arc_tail[arc] and g.head[originals[-1]] == h.arc_head[arc]
    assert np.array_equal(g.head[originals[:-1]], g.tail[originals[1:]])       # one road path
    assert g.metric(h.metric)[originals].sum() == h.arc_weight[arc]
    x, y = mv.unpacked.getData()
    assert np.allclose(np.c_[x, y], route_polyline(window.drawing.points, g, originals))
    mid = h.midpoint(arc)
    assert mid >= 0 and np.allclose(np.c_[mv.midpoint.getData()], window.drawing.node_xy[[mid]])
    assert f"unpacks to {originals.size} road arcs" in window.hierarchy_panel.arc_info.text()
    assert str(g.node_id[mid]) in window.hierarchy_panel.arc_info.text()


def test_inspect_a_node_then_unpack_its_shortcuts(qtbot, window, network):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    mv, panel = window.map_view, window.hierarchy_panel
    node = node_with_up_shortcut(h)
    QTest.keyClick(window, Qt.Key_I)
    assert window.inspect_mode and panel.inspect_button.isChecked()
    with qtbot.waitSignal(window.inspected, timeout=2000, check_params_cb=lambda v: v == node):
        click_node(qtbot, window, node)
    assert window.source is None and window.route_result is None       # no routing meanwhile
    up, down = h.node_arcs(node)
    sc_up, sc_down = h.is_shortcut(up), h.is_shortcut(down)
    assert mv.hierarchy_curve_sizes() == {
        (True, False): int((~sc_up).sum()), (True, True): int(sc_up.sum()),
        (False, False): int((~sc_down).sum()), (False, True): int(sc_down.sum())}
    assert mv.hierarchy_curves[True, True].opts["pen"].style() == Qt.CustomDashLine
    assert mv.hierarchy_curves[True, False].opts["pen"].style() == Qt.SolidLine
    assert panel.arc_ids() == [*up.tolist(), *down.tolist()] and panel.arc_list.isVisible()
    assert f"{up.size} up" in panel.inspect_info.text() and f"{down.size} down" in panel.inspect_info.text()

    first = int(up[sc_up][0])                       # pick it in the side panel's list
    with qtbot.waitSignal(window.unpacked, timeout=2000, check_params_cb=lambda a: a == first):
        panel.arc_list.setCurrentRow(panel.arc_ids().index(first))
    check_unpacked(window, h, first)

    # click the middle of the longest drawn shortcut, zoomed so it is long on screen
    shortcuts = np.concatenate([up[sc_up], down[sc_down]])
    xy = window.drawing.node_xy
    length = np.hypot(*(xy[h.arc_tail[shortcuts]] - xy[h.arc_head[shortcuts]]).T)
    arc = int(shortcuts[np.argmax(length)])
    centre, half = xy[node], max(length.max(), 50.0)
    mv.view.setRange(xRange=(centre[0] - half, centre[0] + half),
                     yRange=(centre[1] - half, centre[1] + half), padding=0)
    qtbot.wait(10)
    with qtbot.waitSignal(window.unpacked, timeout=2000, check_params_cb=lambda a: a == arc):
        QTest.mouseClick(mv.plot.viewport(), Qt.LeftButton, Qt.NoModifier,
                         mv.plot.mapFromScene(mv.arc_scene_pos(arc)))
    check_unpacked(window, h, arc)
    assert panel.arc_list.currentItem().data(Qt.UserRole) == arc

    QTest.keyClick(window, Qt.Key_Escape)           # Esc clears the inspection
    assert sum(mv.hierarchy_curve_sizes().values()) == 0 and mv.unpacked.getData()[0].size == 0
    QTest.keyClick(window, Qt.Key_I)
    assert not window.inspect_mode


def test_phast_tree_after_contraction_with_the_per_level_chart(qtbot, window, network):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    assert window.method_combo.currentText() == "PHAST (hierarchy)"
    source = 42
    qtbot.mouseClick(window.tree_button, Qt.LeftButton)
    with qtbot.waitSignal(window.tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None and t.source == source) as blocker:
        click_node(qtbot, window, source)
    answer = blocker.args[0]
    assert answer.method == PHAST and answer.metric == h.metric
    assert np.array_equal(answer.tree.distance, reference.sssp(network, source, h.metric).distance)
    lm = answer.level_ms
    assert len(lm["up"]) == len(lm["down"]) == h.num_levels and lm["core"] >= 0
    assert window.phast_dock.isVisible()
    assert window.phast_chart.bar_count() == 2 * h.num_levels + 1
    assert "PHAST" in window.phast_chart.title and "PHAST (hierarchy)" in window.tree_info.text()
    target = 2500                                    # a path read from the PHAST tree
    with qtbot.waitSignal(window.route_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == target):
        click_node(qtbot, window, target)
    paths.check_path(network, window.route_result.path)

    load_graph(qtbot, window, grid_graph())          # another graph drops the hierarchy
    assert window.hierarchy is None and window.engine.hierarchy is None
    assert window.method_combo.findData(PHAST) < 0 and not window.levels_action.isEnabled()
    assert not window.phast_dock.isVisible() and window.hierarchy_panel.summary.text() == "No hierarchy."


def test_save_and_open_a_hierarchy_and_refuse_one_of_another_graph(qtbot, window, network, tmp_path,
                                                                  monkeypatch):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "net"), ""))
    with qtbot.waitSignal(window.engine.saved, timeout=10_000) as blocker:
        window.save_hierarchy_action.trigger()
    path = tmp_path / "net.rlh"
    assert blocker.args[0] == str(path) and path.is_file()

    load_graph(qtbot, window, network)               # the same graph again: no hierarchy yet
    assert window.hierarchy is None
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    with qtbot.waitSignal(window.hierarchy_shown, timeout=10_000,
                          check_params_cb=lambda x: x is not None) as blocker:
        window.open_hierarchy_action.trigger()
    opened = blocker.args[0]
    assert opened is not h and opened.graph is window.graph
    assert np.array_equal(opened.node_level, h.node_level) and np.array_equal(opened.arc_head, h.arc_head)
    assert window.contract_chart.bar_count() == h.num_levels and "net.rlh" in window.contract_chart.title
    assert window.method_combo.currentData() == PHAST

    load_graph(qtbot, window, grid_graph())
    with qtbot.waitSignal(window.error_shown, timeout=10_000) as blocker:
        window.open_hierarchy(path)
    message = blocker.args[0]
    assert message.startswith("Opening the hierarchy net.rlh failed: ")
    assert f"belongs to a graph of {network.num_nodes:,} nodes" in message
    assert window.banner.isVisible() and window.hierarchy is None and not window.progress.isVisible()

    garbage = tmp_path / "garbage.rlh"
    garbage.write_bytes(b"not a hierarchy")
    with qtbot.waitSignal(window.error_shown, timeout=10_000) as blocker:
        window.open_hierarchy(garbage)
    assert "not a readable RouteLab hierarchy" in blocker.args[0] and "garbage.rlh" in blocker.args[0]
