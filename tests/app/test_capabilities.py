"""Capabilities in the window: routes name the router that found them (the CH query with
a hierarchy of the metric, else bidirectional Dijkstra) and are exact; a capability
registered in engine.capabilities alone appears in ``routelab --help`` and in the
window's menu, and its menu action runs it on the engine thread and shows its text.
"""
from __future__ import annotations

import pytest
from PySide6.QtCore import QThread, Qt

from engine import capabilities
from engine.capabilities import Capability, Param
from tests.turn_oracle import check_turn_aware
from tests.app.helpers import ROUTE_TIMEOUT_MS, ch, load_graph, routes, shift_click_route

CONTRACT_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=1)


def check_exact(graph, route, metric: str) -> None:
    """Turn-aware and as short as the independent arc-to-arc oracle says."""
    assert route.path.metric == metric
    check_turn_aware(graph, route.path)


def test_click_routes_say_which_router_found_them_and_are_exact(qtbot, window, network):
    load_graph(qtbot, window, network)
    s, t = 42, 2500
    plain = shift_click_route(qtbot, window, s, t)
    assert plain.method_label == "turn-aware bidirectional Dijkstra"
    assert "by turn-aware bidirectional Dijkstra" in routes(window).summary.text()
    check_exact(network, plain, "distance")

    ch(window).panel.k_spin.setValue(100)
    with qtbot.waitSignal(ch(window).hierarchy_shown, timeout=CONTRACT_TIMEOUT_MS,
                          check_params_cb=lambda h: h is not None):
        qtbot.mouseClick(ch(window).panel.contract_button, Qt.LeftButton)
    assert window.session.hierarchy.metric == "distance"
    for a, b in ((s, t), (2500, 7), (1234, 2999)):
        r = shift_click_route(qtbot, window, a, b)
        assert r.method_label == "turn-aware CH query"
        assert "by turn-aware CH query" in routes(window).summary.text()
        check_exact(network, r, "distance")
    assert shift_click_route(qtbot, window, s, t).path.distance == plain.path.distance

    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.metric == "travel_time"):
        routes(window).metric_combo.setCurrentText("travel_time")   # no hierarchy of this metric
    r = window.session.route
    assert r.method_label == "turn-aware bidirectional Dijkstra"
    assert "by turn-aware bidirectional Dijkstra" in routes(window).summary.text()
    check_exact(network, r, "travel_time")


# ------------------------------------------------- a capability registered alone
def _echo_run(workspace, params: dict, ctx):
    ctx.progress(0.5, "echoing")
    return {"thread": QThread.currentThread().objectName(), "source": params["source"],
            "nodes": workspace.graph.num_nodes, "times": params["times"]}


def _echo_json(workspace, params: dict, result: dict) -> dict:
    return {**result, "from": int(workspace.graph.node_id[result["source"]])}


def _echo_text(r: dict) -> str:
    return f"echo from {r['from']} x{r['times']} on {r['thread']}: {r['nodes']} nodes"


@pytest.fixture
def echo():
    capability = capabilities.register(Capability(
        name="echo_test", label="Echo (test)", help="a throwaway capability for the tests",
        params=(Param("source", int, None, "node", flag="--from", required=True, node=True),
                Param("times", int, 3, "how many times")),
        run=_echo_run, to_json=_echo_json, to_text=_echo_text,
        menu="&Echo", shortcut="Ctrl+Shift+E"))
    yield capability
    capabilities.unregister("echo_test")


def test_a_registered_capability_is_a_command_a_menu_entry_and_runs_on_the_engine(qtbot, echo, graph,
                                                                                 capsys):
    from app.cli import parser
    from app.main import main
    with pytest.raises(SystemExit):
        main(["--help"])                      # what `routelab --help` prints
    assert "echo_test" in capsys.readouterr().out
    assert "echo_test" in parser().format_help()
    assert parser().parse_args(["echo_test", "g.gr", "--from", "1"]).times == 3

    from app.main_window import MainWindow
    window = MainWindow(backend="cpu")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        menus = {a.text(): a.menu() for a in window.menuBar().actions()}
        assert "&Echo" in menus
        action = next(a for a in menus["&Echo"].actions() if a.text() == "Echo (test)")
        assert action.shortcut().toString() == "Ctrl+Shift+E"
        load_graph(qtbot, window, graph)
        routes(window).set_source(5)
        controller = window.controller("echo_test")
        with qtbot.waitSignal(window.engine.result, timeout=ROUTE_TIMEOUT_MS,
                              check_params_cb=lambda job, text: job.kind == "echo_test") as blocker:
            action.trigger()
        job, text = blocker.args
        assert job.params == {"source": 5, "times": 3}
        assert text == "echo from 1005 x3 on RouteLab engine: 37 nodes"
        assert text in controller.output.toPlainText() and controller.dock.isVisible()
    finally:
        window.close()
        window.engine.shutdown()
