"""The contraction hierarchy in the window: contract with a live chart, cancel and start
again, errors, colour by level, inspect a node and unpack a shortcut, PHAST trees with the
per-level chart, save and open a hierarchy, a hierarchy of another graph.

Every wait is on a signal of the window or of EngineClient (GUI-thread objects).
"""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from engine.core import paths
from engine.routing import reference
from engine.capabilities import contract as contract_capability
from engine.capabilities.tree import PHAST
from engine.ch import STEPS
from engine.core.polylines import route_polyline
from tests.app.helpers import answer_of, ch, click_node, grid_graph, load_graph, routes, trees

K = 100
CONTRACT_TIMEOUT_MS = 60_000
TREE_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=1)


@pytest.fixture(scope="module")
def plain_network(network):
    """The network without turn information (as DIMACS): its hierarchy is node-based,
    whose nodes inspect mode shows."""
    import dataclasses
    return dataclasses.replace(network, turn_restrictions=None, arc_attrs={})


def expanded_of(graph) -> int:
    """The node count of the turn model's expanded graph (engine.model)."""
    return graph.num_arcs + 2 * graph.num_nodes


def contract(qtbot, window, k: int = K):
    """Set K in the panel, click Contract: the hierarchy the window then uses."""
    ch(window).panel.k_spin.setValue(k)
    with qtbot.waitSignal(ch(window).hierarchy_shown, timeout=CONTRACT_TIMEOUT_MS,
                          check_params_cb=lambda h: h is not None) as blocker:
        qtbot.mouseClick(ch(window).panel.contract_button, Qt.LeftButton)
    return blocker.args[0]


def class_curves_visible(window) -> bool:
    return any(c.isVisible() for c in window.map_view._curves)


def test_contract_fills_the_chart_live_and_shows_a_summary(qtbot, window, network):
    load_graph(qtbot, window, network)
    seen = []    # (level, bars drawn when the window had handled it, hierarchy in use then)
    window.engine.record.connect(
        lambda job, r: seen.append((r["level"], ch(window).contract_chart.bar_count(), window.session.hierarchy)))
    h = contract(qtbot, window)
    assert h.turn_aware and h.graph.num_nodes == expanded_of(network)       # banned turns
    assert h.params["backend"] == "cpu" and h.params["K"] == K
    assert h.num_levels > 5 and h.core_nodes.size < 2 * K       # levels may stall near K
    assert [s[0] for s in seen] == list(range(h.num_levels))
    assert [s[1] for s in seen] == list(range(1, h.num_levels + 1))   # one more bar per signal
    assert all(s[2] is None for s in seen)                            # all before the result

    chart = ch(window).contract_chart
    assert ch(window).contract_dock.isVisible()
    assert chart.bar_count() == chart.point_count() == len(h.iterations) == h.num_levels
    top = chart.bars[STEPS[-1]].opts
    assert np.allclose(top["y0"] + top["height"], [sum(r["ms"].values()) for r in h.iterations])
    assert np.array_equal(chart.contracted.getOriginalDataset()[1], [r["contracted"] for r in h.iterations])
    s = h.summary()
    text = ch(window).panel.summary.text()
    assert f"{s['levels']} levels" in text and f"{s['shortcuts']:,} shortcuts" in text
    assert f"edge growth (|E↑|+|E↓|)/|E| = {s['edge_growth']:.2f}" in text and "CPU" in text
    assert f"{s['shortcuts']:,} shortcuts" in chart.title
    assert not window.progress.bar.isVisible() and not ch(window).panel.cancel_button.isEnabled()
    assert trees(window).method_combo.currentData() == PHAST          # the default tree method now


def test_cancel_a_contraction_then_contract_again(qtbot, window, network, monkeypatch):
    real, calls = contract_capability.contract, []

    def held(*args, on_iteration, cancel, **kwargs):
        """The first run waits after each level until it is cancelled (deterministic)."""
        calls.append(1)

        def each(record):
            on_iteration(record)
            deadline = time.monotonic() + 5
            while len(calls) == 1 and not cancel.cancelled and time.monotonic() < deadline:
                time.sleep(0.002)
        return real(*args, on_iteration=each, cancel=cancel, **kwargs)
    monkeypatch.setattr(contract_capability, "contract", held)
    load_graph(qtbot, window, network)
    window.engine.record.connect(
        lambda job, r: ch(window).panel.cancel_button.click() if len(calls) == 1 else None)
    with qtbot.waitSignal(window.engine.cancelled, timeout=CONTRACT_TIMEOUT_MS):
        qtbot.mouseClick(ch(window).panel.contract_button, Qt.LeftButton)
        assert window.progress.bar.isVisible() and ch(window).panel.cancel_button.isEnabled()
    assert window.session.hierarchy is None and ch(window).contract_chart.bar_count() == 1
    assert "cancelled after 1 levels" in ch(window).contract_chart.title
    assert not window.progress.bar.isVisible() and not window.banner.isVisible()

    h = contract(qtbot, window)                   # starting again works
    assert window.session.hierarchy is h and ch(window).contract_chart.bar_count() == h.num_levels


def test_engine_error_shows_the_banner_and_the_window_stays_usable(qtbot, window, network, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("out of shortcut memory")
    load_graph(qtbot, window, network)
    monkeypatch.setattr(contract_capability, "contract", broken)
    with qtbot.waitSignal(window.error_shown, timeout=CONTRACT_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(ch(window).panel.contract_button, Qt.LeftButton)
    assert blocker.args[0] == ("Contraction failed: internal error (RuntimeError: out of shortcut memory) — "
                                "see the terminal for details.")
    assert window.banner.isVisible() and window.session.hierarchy is None and not window.progress.bar.isVisible()
    monkeypatch.undo()
    assert contract(qtbot, window) is window.session.hierarchy


def test_colour_by_level_has_a_legend_and_a_curve_per_level_bin(qtbot, window, network):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    mv, bins = window.map_view, window.session.level_bins
    with qtbot.waitSignal(mv.detail_changed, timeout=2000):
        qtbot.mouseClick(ch(window).panel.levels_button, Qt.LeftButton)
    assert ch(window).levels_action.isChecked() and mv.colouring == "levels"
    sizes = mv.bin_curve_sizes()
    assert len(sizes) == bins.count and sum(sizes) == mv.level.num_segments   # every road, once
    assert sizes[0] > 0 and sum(n > 0 for n in sizes) >= bins.count - 2
    level = mv.level       # the bin of the drawn segments is the higher end's level
    node_level = window.session.node_level              # a road node's: its arcs' highest
    seg = np.maximum(node_level[level.end_a], node_level[level.end_b])
    assert np.array_equal(np.bincount(bins.of(seg), minlength=bins.count), sizes)
    assert not class_curves_visible(window) and not window.controller("load").legend.isVisible()
    legend = ch(window).panel.legend
    labels = bins.labels()
    assert labels[0] in ("0", f"0–{bins.first[1] - 1}") and labels[-1] == f"core ({h.num_levels})"
    assert legend.isVisible() and all(t in legend.text() for t in labels)

    window.set_mode("tree")                      # a tree wins while it is shown ...
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None):
        click_node(qtbot, window, 5)
    assert mv.colouring == "tree" and not legend.isVisible()
    with qtbot.waitSignal(trees(window).tree_shown, timeout=2000, check_params_cb=lambda t: t is None):
        QTest.keyClick(window, Qt.Key_Escape)
    assert mv.colouring == "levels" and legend.isVisible()   # ... then the levels come back

    QTest.keyClick(window, Qt.Key_L)
    assert mv.colouring is None and mv.bin_curve_sizes() == [] and class_curves_visible(window)
    assert window.controller("load").legend.isVisible() and not legend.isVisible()


def node_with_up_shortcut(h) -> int:
    """A non-core node with an upward shortcut and a downward arc, the one with most arcs."""
    up = h.up_harc[h.is_shortcut(h.up_harc)]
    nodes = np.intersect1d(h.arc_tail[up], h.arc_head[h.down_harc])
    return int(nodes[np.argmax([sum(a.size for a in h.node_arcs(v)) for v in nodes])])


def check_unpacked(window, h, arc: int) -> None:
    g, overlay = window.session.graph, ch(window).overlay
    originals = h.unpack(arc)
    assert originals.size >= 2 and (originals >= 0).all() and (originals < g.num_arcs).all()
    assert g.tail[originals[0]] == h.arc_tail[arc] and g.head[originals[-1]] == h.arc_head[arc]
    assert np.array_equal(g.head[originals[:-1]], g.tail[originals[1:]])       # one road path
    assert g.metric(h.metric)[originals].sum() == h.arc_weight[arc]
    x, y = overlay.unpacked.getData()
    assert np.allclose(np.c_[x, y], route_polyline(window.session.drawing.points, g, originals))
    mid = h.midpoint(arc)
    assert mid >= 0 and np.allclose(np.c_[overlay.midpoint.getData()], window.session.drawing.node_xy[[mid]])
    assert f"unpacks to {originals.size} road arcs" in ch(window).panel.arc_info.text()
    assert str(g.node_id[mid]) in ch(window).panel.arc_info.text()


def test_inspect_a_node_then_unpack_its_shortcuts(qtbot, window, plain_network):
    network = plain_network
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    mv, panel = window.map_view, ch(window).panel
    node = node_with_up_shortcut(h)
    QTest.keyClick(window, Qt.Key_I)
    assert (window.session.mode == "inspect") and panel.inspect_button.isChecked()
    with qtbot.waitSignal(ch(window).inspected, timeout=2000, check_params_cb=lambda v: v == node):
        click_node(qtbot, window, node)
    assert window.session.source is None and window.session.route is None       # no routing meanwhile
    up, down = h.node_arcs(node)
    sc_up, sc_down = h.is_shortcut(up), h.is_shortcut(down)
    assert ch(window).overlay.curve_sizes() == {
        (True, False): int((~sc_up).sum()), (True, True): int(sc_up.sum()),
        (False, False): int((~sc_down).sum()), (False, True): int(sc_down.sum())}
    assert ch(window).overlay.curves[True, True].opts["pen"].style() == Qt.CustomDashLine
    assert ch(window).overlay.curves[True, False].opts["pen"].style() == Qt.SolidLine
    assert panel.arc_ids() == [*up.tolist(), *down.tolist()] and panel.arc_list.isVisible()
    assert f"{up.size} up" in panel.inspect_info.text() and f"{down.size} down" in panel.inspect_info.text()

    first = int(up[sc_up][0])                       # pick it in the side panel's list
    with qtbot.waitSignal(ch(window).unpacked, timeout=2000, check_params_cb=lambda a: a == first):
        panel.arc_list.setCurrentRow(panel.arc_ids().index(first))
    check_unpacked(window, h, first)

    # click the middle of the longest drawn shortcut, zoomed so it is long on screen
    shortcuts = np.concatenate([up[sc_up], down[sc_down]])
    xy = window.session.drawing.node_xy
    length = np.hypot(*(xy[h.arc_tail[shortcuts]] - xy[h.arc_head[shortcuts]]).T)
    arc = int(shortcuts[np.argmax(length)])
    centre, half = xy[node], max(length.max(), 50.0)
    mv.view.setRange(xRange=(centre[0] - half, centre[0] + half),
                     yRange=(centre[1] - half, centre[1] + half), padding=0)
    qtbot.wait(10)
    with qtbot.waitSignal(ch(window).unpacked, timeout=2000, check_params_cb=lambda a: a == arc):
        QTest.mouseClick(mv.plot.viewport(), Qt.LeftButton, Qt.NoModifier,
                         mv.plot.mapFromScene(ch(window).overlay.arc_scene_pos(arc)))
    check_unpacked(window, h, arc)
    assert panel.arc_list.currentItem().data(Qt.UserRole) == arc

    QTest.keyClick(window, Qt.Key_Escape)           # Esc clears the inspection
    assert sum(ch(window).overlay.curve_sizes().values()) == 0 and ch(window).overlay.unpacked.getData()[0].size == 0
    QTest.keyClick(window, Qt.Key_I)
    assert not (window.session.mode == "inspect")


def test_phast_tree_after_contraction_with_the_per_level_chart(qtbot, window, network):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    assert trees(window).method_combo.currentText() == "PHAST (hierarchy)"
    source = 42
    qtbot.mouseClick(trees(window).tree_button, Qt.LeftButton)
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda t: t is not None and t.tree.source == source) as blocker:
        click_node(qtbot, window, source)
    answer = blocker.args[0]
    assert answer.method == PHAST and answer.tree.metric == h.metric
    assert np.array_equal(answer.tree.distance, model_distances(network, source, h.metric))
    lm = answer.level_ms
    assert len(lm["up"]) == len(lm["down"]) == h.num_levels and lm["core"] >= 0
    assert ch(window).phast_dock.isVisible()
    assert ch(window).phast_chart.bar_count() == 2 * h.num_levels + 1
    assert "PHAST" in ch(window).phast_chart.title and "PHAST (hierarchy)" in trees(window).info.text()
    target = 2500                                    # a path read from the PHAST tree
    with qtbot.waitSignal(routes(window).shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == target):
        click_node(qtbot, window, target)
    check_route(network, window.session.route.path)

    load_graph(qtbot, window, grid_graph())          # another graph drops the hierarchy
    assert window.session.hierarchy is None and window.engine.worker.workspace.hierarchy is None
    assert trees(window).method_combo.findData(PHAST) < 0 and not ch(window).levels_action.isEnabled()
    assert not ch(window).phast_dock.isVisible() and ch(window).panel.summary.text() == "No hierarchy."


def test_save_and_open_a_hierarchy_and_refuse_one_of_another_graph(qtbot, window, network, tmp_path,
                                                                  monkeypatch):
    load_graph(qtbot, window, network)
    h = contract(qtbot, window)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "net"), ""))
    with answer_of(qtbot, window.engine, "save_hierarchy", timeout=10_000) as blocker:
        ch(window).save_action.trigger()
    path = tmp_path / "net.rlh"
    assert blocker.args[1] == str(path) and path.is_file()

    load_graph(qtbot, window, network)               # the same graph again: no hierarchy yet
    assert window.session.hierarchy is None
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    with qtbot.waitSignal(ch(window).hierarchy_shown, timeout=10_000,
                          check_params_cb=lambda x: x is not None) as blocker:
        ch(window).open_action.trigger()
    opened = blocker.args[0]
    assert opened is not h and opened.turn_aware and opened.graph.num_nodes == expanded_of(network)
    assert np.array_equal(opened.node_level, h.node_level) and np.array_equal(opened.arc_head, h.arc_head)
    assert ch(window).contract_chart.bar_count() == h.num_levels and "net.rlh" in ch(window).contract_chart.title
    assert trees(window).method_combo.currentData() == PHAST

    load_graph(qtbot, window, grid_graph())
    with qtbot.waitSignal(window.error_shown, timeout=10_000) as blocker:
        ch(window).open_hierarchy(path)
    message = blocker.args[0]
    assert message.startswith("Opening the hierarchy net.rlh failed: ")
    assert f"belongs to a graph of {network.num_nodes:,} nodes" in message
    assert window.banner.isVisible() and window.session.hierarchy is None and not window.progress.bar.isVisible()

    garbage = tmp_path / "garbage.rlh"
    garbage.write_bytes(b"not a hierarchy")
    with qtbot.waitSignal(window.error_shown, timeout=10_000) as blocker:
        ch(window).open_hierarchy(garbage)
    assert "not a readable RouteLab hierarchy" in blocker.args[0] and "garbage.rlh" in blocker.args[0]
