"""CRP end to end on the CPU: exact turn-aware routes against an independent oracle
(SciPy on an arc-to-arc graph built in tests/turn_oracle.py), restrictions honoured,
paths valid, and the command line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.crp import CrpQuery, Overlay, load_decoder, partition_graph
from engine.crp.customization.customize import customize
from engine.crp.metric import FORBIDDEN
from engine.crp.metric.costs import decode
from engine.crp.metric.decoder import parse_decoder
from engine.crp.query.router import path_turns
from engine.generate.network import generate_road_network
from engine.io import load
from engine.core.paths import Unreachable
from engine.routing.reference import sssp
from tests.conftest import DATA, NY_T, PORTO, need
from tests.engine.test_osm import write_osm
from tests.turn_oracle import EdgeOracle

HEIDELBERG = DATA / "osm" / "heidelberg.ors-test.osm.pbf"


def crp_setup(graph, decoder_name, seed=0, levels=None):
    overlay = Overlay(graph, partition_graph(graph, levels=levels, seed=seed))
    decoder = load_decoder(decoder_name) if isinstance(decoder_name, str) else decoder_name
    metric = customize(overlay, decoder)
    return overlay, metric, CrpQuery(overlay, metric)


def turn_lookup(overlay, metric) -> dict:
    t = overlay.turns
    return {(int(a), int(b)): int(w) for a, b, w in zip(t.from_arc, t.to_arc, metric.turn_weight)}


def check_path(graph, metric, turns, path, banned) -> None:
    """Valid: starts at s, ends at t, consecutive arcs meet, no banned turn, and the
    arc and turn costs add up to the reported cost."""
    a = path.arcs.astype(np.int64)
    if a.size == 0:
        assert path.source == path.target and path.distance == 0
        return
    assert graph.tail[a[0]] == path.source and graph.head[a[-1]] == path.target
    assert np.all(graph.head[a[:-1]] == graph.tail[a[1:]])
    pairs = list(zip(a[:-1].tolist(), a[1:].tolist()))
    assert not banned.intersection(pairs)
    assert int(metric.arc_cost[a[0]]) + sum(turns[p] for p in pairs) == path.distance


def compare_with_oracle(graph, overlay, metric, query, num_sources, per_source, seed=1):
    """num_sources x per_source random pairs: the CRP cost equals the oracle's, and
    every path is valid. Returns the number of pairs checked."""
    costs = decode(graph, overlay.turns, metric.decoder)
    oracle = EdgeOracle(graph, costs.arc_cost, costs.program.turn_cost)
    turns = turn_lookup(overlay, metric)
    banned = oracle.banned
    rng = np.random.default_rng(seed)
    checked = 0
    for s in rng.integers(0, graph.num_nodes, num_sources):
        expect = oracle.distances_from(int(s))
        for t in rng.integers(0, graph.num_nodes, per_source):
            try:
                path = query.route(int(s), int(t))
                got = path.distance
                check_path(graph, metric, turns, path, banned)
            except Unreachable:
                got = -1
            assert got == expect[t], (int(s), int(t), got, int(expect[t]))
            checked += 1
    return checked


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("decoder", ["car-fastest", "delivery", "car-shortest"])
def test_generated_graph_matches_oracle(decoder):
    g = generate_road_network(12_000, seed=7)
    assert len(g.turn_restrictions) > 0
    overlay, metric, query = crp_setup(g, decoder)
    assert compare_with_oracle(g, overlay, metric, query, 20, 10) == 200


def test_ny_dimacs_time_matches_oracle():
    g = load([need(NY_T)])
    overlay, metric, query = crp_setup(g, "dimacs-time")
    assert compare_with_oracle(g, overlay, metric, query, 10, 20) == 200


@pytest.mark.parametrize("path", [PORTO, HEIDELBERG], ids=["porto", "heidelberg"])
def test_osm_extracts_match_oracle(path):
    g = load([need(path)])
    overlay = Overlay(g, partition_graph(g, seed=0))
    for name in ("car-fastest", "delivery"):
        metric = customize(overlay, load_decoder(name))
        assert compare_with_oracle(g, overlay, metric, CrpQuery(overlay, metric), 10, 20) == 200


def test_zero_turn_costs_equal_the_node_based_reference():
    g = generate_road_network(6_000, seed=3)
    free = type(g).from_arcs(g.num_nodes, g.tail, g.head, g.metrics, lon=g.lon, lat=g.lat,
                             arc_attrs=g.arc_attrs, metric_units=g.metric_units)
    decoder = parse_decoder('name = "plain"\nkind = "metric"\nmetric = "travel_time"\n')
    overlay, metric, query = crp_setup(free, decoder)
    rng = np.random.default_rng(4)
    for s in rng.integers(0, free.num_nodes, 8):
        ref = sssp(free, int(s), "travel_time").distance
        for t in rng.integers(0, free.num_nodes, 25):
            try:
                got = query.route(int(s), int(t)).distance
            except Unreachable:
                got = -1
            assert got == ref[t]


def test_partition_seeds_and_levels_do_not_change_answers():
    g = generate_road_network(5_000, seed=11)
    answers = []
    for seed, levels in ((0, None), (3, (6, 9)), (1, (4,))):
        _, _, q = crp_setup(g, "car-fastest", seed=seed, levels=levels)
        answers.append([_cost(q, s, t) for s, t in np.random.default_rng(2).integers(0, 5000, (60, 2))])
    assert answers[0] == answers[1] == answers[2]


def _cost(query, s, t) -> int:
    try:
        return query.route(int(s), int(t)).distance
    except Unreachable:
        return -1


def test_route_from_arc_to_arc_and_reset():
    g = generate_road_network(3_000, seed=2)
    overlay, metric, query = crp_setup(g, "car-fastest")
    p = query.route(10, 2500)
    first, last = int(p.arcs[0]), int(p.arcs[-1])
    q = query.route_arcs(first, last)
    assert q.arcs[0] == first and q.arcs[-1] == last
    assert q.distance == p.distance - int(metric.arc_cost[first])
    query.reset()
    assert query.route(10, 2500).distance == p.distance


# ------------------------------------------------------------------ restrictions
def crossing(tmp_path, relation_tags, to_way):
    """A plus-shaped crossing (centre 1; arms 2 north, 3 east, 4 south, 5 west, two-way)
    with a ring road linking the arm ends, and a restriction from the south arm."""
    nodes = {1: (7.0, 45.0), 2: (7.0, 45.001), 3: (7.001, 45.0), 4: (7.0, 44.999),
             5: (6.999, 45.0)}
    ways = [(20 + i, [1, i], {"highway": "residential"}) for i in (2, 3, 4, 5)]
    ways.append((30, [2, 3, 4, 5, 2], {"highway": "residential"}))
    rel = [(1, [("w", 24, "from"), ("n", 1, "via"), ("w", to_way, "to")],
            {"type": "restriction", "restriction": relation_tags})]
    return load([write_osm(tmp_path / "x.osm", nodes, ways, rel)])


def node(g, osm_id) -> int:
    return int(g.index_of([osm_id])[0])


@pytest.mark.parametrize("kind, to_way, forbidden_next", [
    ("no_left_turn", 25, [5]),             # south -> west is a left turn (heading north)
    ("only_straight_on", 22, [3, 5]),      # only north: east and west are banned
])
def test_hand_made_restrictions_are_honoured(tmp_path, kind, to_way, forbidden_next):
    g = crossing(tmp_path, kind, to_way)
    _, metric, query = crp_setup(g, "car-shortest")
    for target in forbidden_next:
        path = query.route(node(g, 4), node(g, target))
        ids = g.node_id[path.nodes].tolist()
        assert ids[:3] != [4, 1, target]                 # not through the banned turn
        assert ids[0] == 4 and ids[-1] == target
    assert g.node_id[query.route(node(g, 4), node(g, 2)).nodes].tolist() == [4, 1, 2]


def test_restriction_leaving_no_way_is_unreachable(tmp_path):
    nodes = {1: (7.0, 45.0), 2: (7.001, 45.0), 3: (7.001, 45.001)}
    ways = [(10, [1, 2], {"highway": "residential", "oneway": "yes"}),
            (11, [2, 3], {"highway": "residential", "oneway": "yes"})]
    rel = [(1, [("w", 10, "from"), ("n", 2, "via"), ("w", 11, "to")],
            {"type": "restriction", "restriction": "no_left_turn"})]
    g = load([write_osm(tmp_path / "dead.osm", nodes, ways, rel)])
    _, _, query = crp_setup(g, "car-fastest", levels=(1,))
    with pytest.raises(Unreachable):
        query.route(node(g, 1), node(g, 3))


def test_generated_banned_turns_never_taken_where_plain_routes_take_them():
    """The regression behind this work: node-based routes drive through banned turns."""
    from engine.routing.bidirectional import BidirectionalDijkstra
    g = generate_road_network(8_000, seed=5)
    r = g.turn_restrictions
    banned = set(zip(r.from_arc.tolist(), r.to_arc.tolist()))
    overlay, metric, query = crp_setup(g, "car-fastest")
    plain = BidirectionalDijkstra(g, "travel_time")
    turns = turn_lookup(overlay, metric)
    crossed = 0
    for f, t in list(banned)[:40]:
        s, d = int(g.tail[f]), int(g.head[t])
        p = plain.route(s, d)
        pairs = set(zip(p.arcs[:-1].tolist(), p.arcs[1:].tolist()))
        crossed += bool(pairs & banned)
        check_path(g, metric, turns, query.route(s, d), banned)
    assert crossed > 0          # the plain router does use banned turns on these pairs


def test_osm_extract_banned_turn_regression():
    g = load([need(HEIDELBERG)])
    r = g.turn_restrictions
    banned = set(zip(r.from_arc.tolist(), r.to_arc.tolist()))
    overlay, metric, query = crp_setup(g, "car-fastest")
    turns = turn_lookup(overlay, metric)
    for f, t in list(banned)[:60]:
        s, d = int(g.tail[f]), int(g.head[t])
        try:
            check_path(g, metric, turns, query.route(s, d), banned)
        except Unreachable:
            pass


def test_turn_summary_counts_the_turns_taken():
    g = generate_road_network(3_000, seed=9)
    overlay, metric, query = crp_setup(g, "delivery")
    p = query.route(5, 2900)
    info = path_turns(query, p.arcs)
    assert sum(info["by_type"].values()) == p.num_arcs - 1
    assert info["cost"] == p.distance - int(metric.arc_cost[p.arcs].astype(np.int64).sum())
    assert info["unit"] == "ds"


def test_forbidden_classes_are_avoided():
    g = generate_road_network(6_000, seed=1)
    overlay, metric, query = crp_setup(g, "avoid-motorways")
    assert (metric.arc_cost[g.arc_attrs["road_class"] == 0] == FORBIDDEN).all()
    rng = np.random.default_rng(0)
    for s, t in rng.integers(0, g.num_nodes, (40, 2)):
        try:
            p = query.route(int(s), int(t))
        except Unreachable:
            continue
        assert (g.arc_attrs["road_class"][p.arcs] != 0).all()

