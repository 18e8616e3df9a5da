"""After a load with turns, the map is shown first; the turn model and its router are
then built as a job of their own (engine.capabilities.prepare) before the background
hierarchy, which a new load cancels, and the status bar says when routes are ready."""
from __future__ import annotations

from engine.generate.network import generate_road_network
from tests.app.helpers import load_graph


def test_the_prepare_job_follows_the_load_and_says_routes_are_ready(qtbot, window, monkeypatch):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")      # no background hierarchy: alone
    g = generate_road_network(num_nodes=4_000, seed=6)
    window.session.background_hierarchy = True
    with qtbot.waitSignal(window.engine.result, timeout=60_000,
                          check_params_cb=lambda job, r: job.kind == "prepare") as got:
        load_graph(qtbot, window, g)
        assert window.engine.running("prepare")
    prepared = got.args[1]
    assert prepared.router == "turn-aware bidirectional Dijkstra"
    assert prepared.expanded_nodes > g.num_nodes and prepared.model_bytes > 0
    qtbot.waitUntil(lambda: "Routes ready" in window.statusBar().currentMessage())


def test_a_new_load_cancels_it(qtbot, window):
    window.session.background_hierarchy = True
    cancelled = []
    window.engine.cancelled.connect(lambda job, m: cancelled.append(job.kind))
    small = generate_road_network(num_nodes=500, seed=3)      # made before: no delay below
    load_graph(qtbot, window, generate_road_network(num_nodes=200_000, seed=2))
    assert window.engine.running("prepare")
    load_graph(qtbot, window, small)
    # the big network's model takes seconds to build: the new load must have cancelled it
    qtbot.waitUntil(lambda: "prepare" in cancelled, timeout=60_000)
    window.engine.cancel()
