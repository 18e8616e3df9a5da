"""The background hierarchy respects the memory budget (engine.io.limits): where
contracting the turn model would not fit what the budget leaves beside the process,
a load does not start it and says why, in words, in the status bar and the hierarchy
panel; routes still answer (turn-aware bidirectional Dijkstra). Within the budget it
starts as before."""
from __future__ import annotations

import pytest

from engine.generate.network import generate_road_network
from engine.model import hierarchy as turn_hierarchy
from tests.app.helpers import ch, load_graph, routes


@pytest.fixture(scope="module")
def network():
    return generate_road_network(num_nodes=3_000, seed=4)


def test_refusal_names_what_is_needed_and_the_budget(monkeypatch, network):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1T")
    assert turn_hierarchy.background_refusal(network) is None
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")        # less than the process holds
    text = turn_hierarchy.background_refusal(network)
    assert text is not None and "not built in the background" in text
    assert "GiB" in text and "ROUTELAB_MEMORY_BUDGET" in text and "Contract" in text
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "64G")        # fits, except for a huge need
    monkeypatch.setattr(turn_hierarchy, "CONTRACTION_BYTES_PER_ROAD_ARC", 2**40)
    assert "needs about" in turn_hierarchy.background_refusal(network)


def test_a_load_over_the_budget_starts_no_background_hierarchy(qtbot, window, network, monkeypatch):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")
    window.session.background_hierarchy = True
    shown = []            # every status message: the turn model's progress may follow it
    window.statusBar().messageChanged.connect(shown.append)
    load_graph(qtbot, window, network)
    assert not window.engine.running("contract")
    qtbot.waitUntil(lambda: any("not built in the background" in m for m in shown))
    assert "not built in the background" in ch(window).panel.summary.text()
    with qtbot.waitSignal(routes(window).shown, timeout=60_000,
                          check_params_cb=lambda r: r is not None):
        routes(window).set_source(0)                 # answered with no hierarchy
        routes(window).set_target(network.num_nodes - 1)
    assert window.session.route.method_label == "turn-aware bidirectional Dijkstra"


def test_within_the_budget_the_load_starts_it(qtbot, window, network, monkeypatch):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1T")
    window.session.background_hierarchy = True
    load_graph(qtbot, window, network)
    assert window.engine.running("contract")
    window.engine.cancel("contract")
