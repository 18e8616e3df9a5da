"""Cost-budgeted paths in the window (issue #14, acceptance 4), CPU backend, headless:
csp mode, two real clicks give the constrained path (checked against the engine
outside the window) with both references and the Pareto chart; a burst of slider
moves ends on the final budget's answer; a Pareto point clicked in the chart is drawn;
a budget below the least cost says so and the window goes on working."""
from __future__ import annotations

from tests.turn_oracle import check_route, model_distances
from engine.core.backend import cpu_backend
from engine.workspace import Workspace

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from engine.csp import CspQuery
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable
from engine.core.polylines import route_polyline
from app.features.csp.budget import BudgetScale
from app.features.csp.charts import metric_text
from tests.app.helpers import click_node, grid_graph, load_graph, node_viewport_pos

TIMEOUT_MS = 20_000


def csp(window):
    return window.controller("csp")


def clickable(window, node: int) -> bool:
    """A click on the node's pixel snaps back to the node (no nearer neighbour)."""
    mv = window.map_view
    p = mv.view.mapSceneToView(mv.plot.mapToScene(node_viewport_pos(window, node)))
    return mv.drawing.nearest_node(p.x(), p.y()) == node


def pair_with_trade_off(window, query: CspQuery, seed: int = 0) -> tuple[int, int]:
    """Clickable endpoints whose budget range is wide and whose midpoint budget gives
    a path longer than the shortest, with at least three Pareto points."""
    g = window.session.graph
    rng = np.random.default_rng(seed)
    for s, t in rng.integers(0, g.num_nodes, (600, 2)).tolist():
        try:
            r = query.solve(s, t, 2**62)
        except Unreachable:
            continue
        scale = BudgetScale(r.least_cost, r.shortest_cost)
        if scale.steps < 40 or not (clickable(window, s) and clickable(window, t)):
            continue
        mid = query.solve(s, t, scale.budget(scale.steps // 2), pareto=True)
        if len(mid.pareto) >= 3 and mid.length > r.shortest_length:
            return s, t
    pytest.skip("no pair with a cost/length trade-off found")


def wait_shown(qtbot, window, action):
    """Do ``action``; the CspResult drawn after it."""
    with qtbot.waitSignal(csp(window).shown, timeout=TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None) as blocker:
        action()
    return blocker.args[0]


def arcs_drawn(window) -> np.ndarray:
    x, y = csp(window).path_curve.getData()
    return np.column_stack([x, y])


def polyline(window, arcs) -> np.ndarray:
    return route_polyline(window.session.drawing.points, window.session.graph, arcs)


def check_answer(window, query, r) -> None:
    """``r`` is the window's answer for the slider's budget: exact, drawn, charted."""
    c, s = csp(window), window.session
    budget = c.budget()
    assert r.budget == budget and (r.source, r.target) == (s.source, s.target)
    expected = query.solve(s.source, s.target, budget, pareto=True)
    assert r.length == query.solve(s.source, s.target, budget).length == expected.length
    assert r.cost <= budget
    assert np.allclose(arcs_drawn(window), polyline(window, r.path.arcs))
    assert c.charts.chosen() == (r.length, r.cost)
    assert c.charts.budget_line() == budget
    assert c.charts.pareto_points() == [(p.length, p.cost) for p in expected.pareto]
    assert c.charts.history_points() == len(r.history) > 0


def test_cost_budgeted_paths_in_the_window(qtbot, window):
    graph = generate_road_network(3000, seed=4)
    load_graph(qtbot, window, graph)
    query = Workspace(graph, cpu_backend()).csp_query("distance", "travel_time")
    c = csp(window)
    c.mode_action.trigger()                                 # B
    assert window.session.mode == "csp" and c.mode_button.isChecked() and c.dock.isVisible()
    assert not c.slider.isEnabled()
    qtbot.wait(50)                       # the charts' dock has taken its room from the map
    s, t = pair_with_trade_off(window, query)
    click_node(qtbot, window, s)
    r = wait_shown(qtbot, window, lambda: click_node(qtbot, window, t))
    assert (window.session.source, window.session.target) == (s, t)
    # the slider spans [least cost, shortest path's cost] and starts halfway
    bounds = query.solve(s, t, 2**62)
    assert (c.scale.least, c.scale.shortest) == (bounds.least_cost, bounds.shortest_cost)
    assert c.slider.minimum() == -1 and c.slider.value() == c.scale.steps // 2
    assert metric_text(bounds.least_cost, "ds") in c.low_label.text() and " min" in c.low_label.text()
    assert metric_text(bounds.shortest_cost, "ds") in c.high_label.text()
    check_answer(window, query, r)
    assert r.length > bounds.shortest_length                # the budget binds
    assert all(n > 0 for n in c.reference_points().values())
    route_x = window.map_view.route.getData()[0]
    assert window.session.route is None and (route_x is None or len(route_x) == 0)   # no blue route
    assert "Pareto set" in c.summary.text() and "labels" in c.summary.text()

    # a burst of slider moves: the last answer is the final budget's
    for i in range(10):
        c.slider.setValue((7 * i) % c.scale.steps)
        qtbot.wait(20)                      # past the debounce: a job each, queued newest-wins
    c.slider.setValue(c.scale.steps // 3)
    final = c.budget()
    qtbot.waitUntil(lambda: c.result is not None and c.result.budget == final
                    and not window.engine.running("csp"), timeout=TIMEOUT_MS)
    check_answer(window, query, c.result)

    check_pareto_clicks(qtbot, window)
    check_below_least_cost(qtbot, window, query, bounds)
    check_marker_drag(qtbot, window, query, s, t)

    # Esc clears everything; leaving the mode too
    window.clear()
    assert c.path_points() == 0 and not any(c.reference_points().values())
    assert c.charts.pareto_points() == [] and not c.slider.isEnabled()
    click_node(qtbot, window, s)
    wait_shown(qtbot, window, lambda: click_node(qtbot, window, t))
    window.set_mode("route")
    assert c.path_points() == 0 and not any(c.reference_points().values())
    qtbot.waitUntil(lambda: window.session.route is not None, timeout=TIMEOUT_MS)


def check_pareto_clicks(qtbot, window) -> None:
    """A real click on a Pareto point in the chart, then ``pick``: its path is drawn."""
    c = csp(window)
    r = c.result
    qtbot.waitUntil(lambda: c.charts.isVisible(), timeout=2000)
    answer = c.charts.pareto_points().index(c.charts.chosen())
    i = max(range(len(r.pareto)), key=lambda k: abs(k - answer))     # far from the answer
    view = c.charts.graphics
    pos = view.mapFromScene(c.charts.point_scene_pos(i))
    with qtbot.waitSignal(c.charts.picked, timeout=2000) as picked:
        QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, pos)
    assert picked.args == [i] and c.charts.picked_index() == i
    assert np.allclose(arcs_drawn(window), polyline(window, r.pareto[i].arcs))
    assert f"Pareto point {i + 1} of {len(r.pareto)}" in c.summary.text()
    assert c.charts.chosen() == (r.length, r.cost)                   # the answer stays chosen
    c.charts.pick(answer)
    assert np.allclose(arcs_drawn(window), polyline(window, r.path.arcs))


def check_below_least_cost(qtbot, window, query, bounds) -> None:
    """One step below the least cost: the engine's message, no path; then back."""
    c = csp(window)
    with qtbot.waitSignal(c.failed, timeout=TIMEOUT_MS) as failed:
        c.slider.setValue(-1)
    assert c.budget() == bounds.least_cost - 1
    message = failed.args[0]
    assert "no path within budget" in message and f"{bounds.least_cost:,}" in message
    assert message in c.error_label.text() and "below the least cost" in c.budget_label.text()
    assert c.result is None and c.path_points() == 0 and c.charts.pareto_points() == []
    assert c.charts.budget_line() == bounds.least_cost - 1
    assert all(n > 0 for n in c.reference_points().values())       # the references stay
    r = wait_shown(qtbot, window, lambda: c.slider.setValue(c.scale.steps))
    assert c.error_label.text() == ""
    assert r.length == bounds.shortest_length and r.budget == bounds.shortest_cost
    check_answer(window, query, r)


def check_marker_drag(qtbot, window, query, s, t) -> None:
    """Dragging the destination: the last answer shows until the drop's answer."""
    c, mv, g = csp(window), window.map_view, window.session.graph
    t2 = int(g.head[g.first_out[t]])            # one arc on from t: reachable from s
    mv.marker_dragged.emit("target", t2, False)
    assert c.path_points() > 0
    r = wait_shown(qtbot, window, lambda: mv.marker_dragged.emit("target", t2, True))
    assert (r.source, r.target) == (s, t2)
    check_answer(window, query, r)


def test_one_metric_graphs_cannot_budget(qtbot, window):
    g = grid_graph()
    one = RoadGraph.from_arcs(g.num_nodes, g.tail, g.head, {"distance": g.metrics["distance"]},
                              lon=g.lon, lat=g.lat, metric_units={"distance": "m"})
    load_graph(qtbot, window, one)
    c = csp(window)
    window.set_mode("csp")
    assert not c.minimize_combo.isEnabled() and not c.budget_combo.isEnabled()
    assert "one metric" in c.note.text()
    click_node(qtbot, window, 0)
    click_node(qtbot, window, 20)
    qtbot.wait(100)
    assert "two metrics" in c.error_label.text() and not window.engine.running("csp")


def test_unreachable_target_says_so(qtbot, window):
    from tests.app.helpers import ISLAND
    load_graph(qtbot, window, grid_graph())
    window.set_mode("csp")
    c = csp(window)
    click_node(qtbot, window, 0)
    with qtbot.waitSignal(c.failed, timeout=TIMEOUT_MS) as failed:
        click_node(qtbot, window, ISLAND)
    assert failed.args[0] in c.error_label.text() and not c.slider.isEnabled()


def test_units_and_the_budget_scale():
    assert metric_text(7250, "ds") == "12:05 min" and metric_text(7249, "ds") == "12:04.9 min"
    assert metric_text(12_340, "m") == "12.34 km" and metric_text(640, "m") == "640 m"
    assert metric_text(5, "") == "5 units" and metric_text(1200, "cents") == "1,200 cents"
    small, wide = BudgetScale(100, 130), BudgetScale(1000, 51_000)
    assert small.steps == 30 and [small.budget(v) for v in (-1, 0, 15, 30)] == [99, 100, 115, 130]
    assert wide.steps == 1000 and [wide.budget(v) for v in (-1, 0, 500, 1000)] == [999, 1000, 26_000, 51_000]
    assert wide.value(26_000) == 500 and wide.value(10) == -1
    same = BudgetScale(50, 50)
    assert same.steps == 0 and same.budget(0) == 50 and same.budget(-1) == 49


def test_the_bi_criteria_hierarchy_in_the_window(qtbot, window, tmp_path, monkeypatch):
    """Build (a real click; progress in the status bar), the same exact answers on it,
    save, a cancelled build, a refused file, then open the saved one."""
    from PySide6.QtWidgets import QFileDialog
    from tests.app.helpers import answer_of
    graph = generate_road_network(3000, seed=4)
    load_graph(qtbot, window, graph)
    query = Workspace(graph, cpu_backend()).csp_query("distance", "travel_time")
    c, h = csp(window), window.controller("csp_hierarchy")
    row = h.row
    c.mode_action.trigger()
    qtbot.wait(50)
    assert row.build_button.isEnabled() and not row.use_check.isEnabled()
    assert not row.save_button.isEnabled() and "No bi-criteria hierarchy" in row.label.text()
    s, t = pair_with_trade_off(window, query)
    click_node(qtbot, window, s)
    r = wait_shown(qtbot, window, lambda: click_node(qtbot, window, t))
    check_answer(window, query, r)
    assert "on the bi-criteria hierarchy" not in c.summary.text()

    # Build: a long job with progress; then every query labels on it, with the same answers
    progress = []
    window.engine.progress.connect(lambda job, f, m: progress.append(m))
    with qtbot.waitSignal(c.shown, timeout=60_000, check_params_cb=lambda x: x is not None):
        qtbot.mouseClick(row.build_button, Qt.LeftButton)
        assert not row.build_button.isEnabled() and "Building" in row.label.text()
    assert any(m.startswith("Contracting:") for m in progress)
    assert row.use_check.isChecked() and row.save_button.isEnabled()
    assert "shortcuts" in row.label.text() and "core" in row.label.text()
    qtbot.waitUntil(lambda: not window.engine.running("csp"), timeout=TIMEOUT_MS)
    assert "on the bi-criteria hierarchy" in c.summary.text()
    check_answer(window, query, c.result)
    c.slider.setValue(c.scale.steps // 4)
    final = c.budget()
    qtbot.waitUntil(lambda: c.result is not None and c.result.budget == final
                    and not window.engine.running("csp"), timeout=TIMEOUT_MS)
    check_answer(window, query, c.result)
    check_below_least_cost(qtbot, window, query, query.solve(s, t, 2**62))

    # Save through the dialog
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "h"), ""))
    with answer_of(qtbot, window.engine, "save_csp_hierarchy", timeout=20_000) as blocker:
        qtbot.mouseClick(row.save_button, Qt.LeftButton)
    path = tmp_path / "h.rlb"
    assert blocker.args[1] == str(path) and path.is_file()

    # the other metric pair has none; a build for it cancelled from the status bar
    c.minimize_combo.setCurrentText("travel_time")
    c.budget_combo.setCurrentText("distance")
    assert not row.use_check.isEnabled() and row.build_button.isEnabled()
    window.engine.progress.connect(lambda job, f, m: window.cancel_button.click()
                                   if job.kind == "csp_hierarchy" else None)
    with qtbot.waitSignal(window.engine.cancelled, timeout=60_000):
        qtbot.mouseClick(row.build_button, Qt.LeftButton)
    assert row.build_button.isEnabled() and "No bi-criteria hierarchy" in row.label.text()
    assert not window.banner.isVisible()

    # a file for other metrics is refused, and the window goes on
    with qtbot.waitSignal(window.error_shown, timeout=20_000) as blocker:
        h.open_hierarchy(path)
    assert "h.rlb" in blocker.args[0] and "not 'travel_time' within 'distance'" in blocker.args[0]
    assert row.build_button.isEnabled() and not row.use_check.isEnabled()

    # a new graph forgets it; opening the saved file brings it back
    load_graph(qtbot, window, graph)
    window.set_mode("csp")
    assert "No bi-criteria hierarchy" in row.label.text()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    with answer_of(qtbot, window.engine, "open_csp_hierarchy", timeout=20_000):
        qtbot.mouseClick(row.open_button, Qt.LeftButton)
    assert row.use_check.isChecked() and "shortcuts" in row.label.text()
    click_node(qtbot, window, s)
    r = wait_shown(qtbot, window, lambda: click_node(qtbot, window, t))
    check_answer(window, query, r)
    assert "on the bi-criteria hierarchy" in c.summary.text()
