"""Real units in the window: the route summary, the tree legend and its info say km and
min on the generated graph (metres, deciseconds) and on DIMACS NY (units inferred from
the data: decimetres and 10^-6 h)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.app.helpers import ROUTE_TIMEOUT_MS, click_node, load_graph, routes, trees
from tests.conftest import NY_CO, NY_D, NY_T, need

TREE_TIMEOUT_MS = 60_000


def far_pair(graph) -> tuple[int, int]:
    """Two nodes about a third of the map apart, both near its middle band."""
    xy = graph.xy
    centre = xy.mean(axis=0)
    span = xy.max(axis=0) - xy.min(axis=0)
    s = int(np.argmin(np.hypot(*(xy - centre + span / 6).T)))
    t = int(np.argmin(np.hypot(*(xy - centre - span / 6).T)))
    return s, t


def route_summary_text(qtbot, window, s: int, t: int) -> str:
    click_node(qtbot, window, s)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == t):
        click_node(qtbot, window, t)
    return routes(window).summary.text()


def tree_legend(qtbot, window, node: int, metric: str) -> tuple[list[str], str]:
    routes(window).metric_combo.setCurrentText(metric)
    if window.session.mode != "tree":
        qtbot.mouseClick(trees(window).tree_button, Qt.LeftButton)
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TREE_TIMEOUT_MS,
                          check_params_cb=lambda a: a is not None and a.tree.source == node
                          and a.tree.metric == metric):
        click_node(qtbot, window, node)
    return [label for _, label in trees(window).legend_rows()], trees(window).info.text()


def check_units(qtbot, window, graph):
    s, t = far_pair(graph)
    summary = route_summary_text(qtbot, window, s, t)
    assert " km" in summary and " min" in summary, summary
    assert "units" not in summary
    rows, info = tree_legend(qtbot, window, s, "distance")
    assert all(r.endswith(" km") for r in rows), rows
    rows, info = tree_legend(qtbot, window, s, "travel_time")
    assert all(r.endswith(" min") for r in rows), rows
    assert "farthest" in info and (" min" in info or ":" in info) and "not known" not in info


def test_generated_graph_reads_in_km_and_minutes(qtbot, window):
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=3000, seed=4)
    load_graph(qtbot, window, g)
    check_units(qtbot, window, g)


def test_new_york_reads_in_km_and_minutes(qtbot, window):
    from engine.io import load
    g = load([need(NY_D), need(NY_T), need(NY_CO)])
    assert g.metric_units == {"distance": "dm", "travel_time": "µh"}
    load_graph(qtbot, window, g)
    check_units(qtbot, window, g)
