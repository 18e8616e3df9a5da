"""The window is legal from the first click (issue #34): on an extract with a banned
turn the drawn route goes round it before any hierarchy exists; the turn-aware
hierarchy is built in the background after a load, clicks are answered meanwhile, and
once it is ready the route is asked again, found by the CH query and unchanged."""
from __future__ import annotations

import pytest

from engine.io import load
from tests.app.helpers import ch, load_graph, routes, shift_click_route, write_banned_left_osm
from tests.turn_oracle import check_turn_aware

BUILD_TIMEOUT_MS = 120_000


def ids(graph, path) -> list[int]:
    return graph.node_id[path.nodes].tolist()


@pytest.fixture()
def extract(tmp_path):
    return load([write_banned_left_osm(tmp_path)])


def test_first_click_avoids_the_banned_turn_then_the_ch_query_takes_over(qtbot, window, extract):
    g = extract
    load_graph(qtbot, window, g)
    a, c = (int(i) for i in g.index_of([1, 3]))
    first = shift_click_route(qtbot, window, a, c)
    assert window.session.hierarchy is None
    assert ids(g, first.path) == [1, 2, 4, 3]
    assert first.method_label == "turn-aware bidirectional Dijkstra"
    assert "by turn-aware bidirectional Dijkstra" in routes(window).summary.text()
    check_turn_aware(g, first.path)
    with qtbot.waitSignal(routes(window).shown, timeout=BUILD_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and "CH" in r.method_label):
        ch(window).contract(background=True)
    after = window.session.route
    assert window.session.hierarchy.turn_aware
    assert after.method_label == "turn-aware CH query"
    assert "by turn-aware CH query" in routes(window).summary.text()
    assert after.path.arcs.tolist() == first.path.arcs.tolist()


def test_a_load_builds_the_hierarchy_in_the_background_and_clicks_answer_meanwhile(qtbot, window):
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=8_000, seed=3)
    window.session.background_hierarchy = True
    load_graph(qtbot, window, g)
    assert window.engine.running("contract")            # started by the load itself
    first = shift_click_route(qtbot, window, 17, 6_000)
    assert window.engine.running("contract"), "the route waited for the whole contraction"
    assert first.method_label == "turn-aware bidirectional Dijkstra"
    check_turn_aware(g, first.path)
    with qtbot.waitSignal(routes(window).shown, timeout=BUILD_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and "CH" in r.method_label):
        pass
    after = window.session.route
    assert window.session.hierarchy.turn_aware
    assert after.path.distance == first.path.distance
    check_turn_aware(g, after.path)
