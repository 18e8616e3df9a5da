"""One routing model (issue #34): every path obeys the turn rules. Each router, trees,
CRP and cost-budgeted paths are checked against the independent arc-to-arc oracle of
tests/turn_oracle.py on OSM extracts with restrictions and on the generated network
(1,000 pairs per graph; Porto, when its data is there, under ROUTELAB_HEAVY=1), and
every returned path's turns are walked for a banned one."""
from __future__ import annotations

import os

import numpy as np
import pytest

from engine.core import backend as backends
from engine.core.paths import Unreachable, check_path, path_from_tree
from engine.model.defaults import default_decoder, needs_turns
from engine.workspace import Workspace
from tests.conftest import DATA, ROOT
from tests.turn_oracle import EdgeOracle, least_length_within_budget, turn_cost_table

GRAPHS = ["monaco", "andorra", "heidelberg", "generated", "porto"]
FILES = {"monaco": "monaco.osm.pbf", "andorra": "andorra.osm.pbf",
         "heidelberg": "heidelberg.ors-test.osm.pbf", "porto": "porto_portugal.osm.pbf"}
SOURCES, TARGETS = 20, 50          # 1,000 pairs per graph


def load_named(name: str):
    from engine.io import load
    if name == "generated":
        from engine.generate.network import generate_road_network
        return generate_road_network(6000, seed=11)
    if name == "porto" and os.environ.get("ROUTELAB_HEAVY") != "1":
        pytest.skip("Porto's 1,000 pairs run under ROUTELAB_HEAVY=1")
    pbf = DATA / "osm" / FILES[name]
    for path in (pbf, pbf.parent / (pbf.name.split(".")[0] + ".rlg"),
                 ROOT / ".data" / "osm" / (pbf.name.split(".")[0] + ".rlg")):
        if path.exists():
            return load([path])
    pytest.skip(f"{pbf} is not there")


@pytest.fixture(scope="module", params=GRAPHS)
def case(request):
    g = load_named(request.param)
    ws = Workspace(g, backends.cpu_backend())
    metric = "distance"
    oracle = EdgeOracle(g, metric, turn_cost_table(default_decoder(g, metric)))
    rng = np.random.default_rng(7)
    sources = rng.choice(g.num_nodes, SOURCES, replace=False)
    targets = rng.choice(g.num_nodes, TARGETS, replace=False)
    truth = {int(s): oracle.distances_from(int(s)) for s in sources}
    return request.param, g, ws, metric, oracle, truth, targets


def check_router(router, oracle, truth, targets, graph) -> int:
    """Every pair's distance equals the oracle's and its path is legal; the count checked."""
    checked = 0
    for s, dist in truth.items():
        for t in targets:
            t = int(t)
            if dist[t] < 0:
                with pytest.raises(Unreachable):
                    router.route(s, t)
                continue
            p = router.route(s, t)
            assert p.distance == dist[t], (s, t)
            oracle.check_legal(p)
            checked += 1
    return checked


def test_the_graphs_have_restrictions_that_matter(case):
    name, g, ws, metric, *_ = case
    assert needs_turns(g, default_decoder(g, metric))
    if name != "andorra":                          # Andorra's extract has none
        assert ws.turn_model((metric,)).restrictions > 0


def test_turn_aware_bidirectional_dijkstra(case):
    name, g, ws, metric, oracle, truth, targets = case
    router = ws.router(metric)
    assert router.label == "turn-aware bidirectional Dijkstra"
    assert check_router(router, oracle, truth, targets, g) > 0


def test_turn_aware_ch(case):
    name, g, ws, metric, oracle, truth, targets = case
    from engine.model.hierarchy import contract_turn_aware
    h = contract_turn_aware(ws.turn_model((metric,)), metric, backend=ws.backend)
    assert h.turn_aware
    ws.set_hierarchy(h)
    router = ws.router(metric)
    assert router.label == "turn-aware CH query"
    check_router(router, oracle, truth, targets, g)
    ws.set_hierarchy(None)


def test_trees_direct_and_phast(case):
    name, g, ws, metric, oracle, truth, targets = case
    from engine.capabilities.tree import _direct_tree, _phast_tree
    from engine.model.hierarchy import contract_turn_aware
    ws.set_hierarchy(contract_turn_aware(ws.turn_model((metric,)), metric, backend=ws.backend))
    for s, dist in list(truth.items())[:8]:
        for run in (_direct_tree, _phast_tree):
            tree = run(ws, s, metric, "auto", False).tree
            np.testing.assert_array_equal(tree.distance, dist)
            for t in targets[:10]:
                if dist[t] >= 0:
                    p = path_from_tree(g, tree, int(t))
                    assert p.distance == dist[t]
                    oracle.check_legal(p)
    ws.set_hierarchy(None)


def test_crp_under_the_default_decoder_agrees(case):
    name, g, ws, metric, oracle, truth, targets = case
    ws.customize(default_decoder(g, metric), timed=False)
    router = ws.crp_router()
    check_router(router, oracle, truth, targets, g)


def test_cost_budgeted_paths(case):
    name, g, ws, metric, oracle, truth, targets = case
    if name not in ("monaco", "generated"):
        pytest.skip("the label-setting oracle is plain Python: two graphs")
    budget_metric = "travel_time"
    costs = EdgeOracle(g, budget_metric, turn_cost_table(default_decoder(g, budget_metric)))
    query = ws.csp_query(metric, budget_metric)
    from engine.csp.query.results import NoPathWithinBudget
    rng = np.random.default_rng(3)
    checked = 0
    for s in list(truth)[:5]:
        tcost = costs.distances_from(s)
        for t in targets[:6]:
            t = int(t)
            if truth[s][t] <= 0:
                continue
            budget = int(tcost[t] * rng.uniform(1.0, 1.3))
            want = least_length_within_budget(oracle, costs, s, t, budget)
            try:
                r = query.solve(s, t, budget)
            except NoPathWithinBudget:
                assert want is None
                continue
            assert r.length == want, (s, t, budget)
            oracle.check_legal(r.path)
            checked += 1
    assert checked >= 10


def test_node_based_is_labelled_and_may_take_a_banned_turn(case):
    name, g, ws, metric, oracle, truth, targets = case
    router = ws.router(metric, node_based=True)
    assert not hasattr(router, "turn_aware")
    s = next(iter(truth))
    t = int(targets[0])
    if truth[s][t] >= 0:
        check_path(g, router.route(s, t))            # a node-based path, not checked for turns


def test_node_based_takes_banned_turns_that_the_model_avoids():
    """The oracle has teeth: on Heidelberg, between the ends of banned turns (chosen as
    the audit chose them), node-based shortest paths take banned turns, and the
    turn-aware routes of the same pairs do not."""
    g = load_named("heidelberg")
    ws = Workspace(g, backends.cpu_backend())
    oracle = EdgeOracle(g, "distance", np.zeros(8, dtype=np.int64))
    plain, aware = ws.router("distance", node_based=True), ws.router("distance")
    r = g.turn_restrictions
    illegal = 0
    for s, t in zip(g.tail[r.from_arc], g.head[r.to_arc]):
        if s == t:
            continue
        try:
            p = plain.route(int(s), int(t))
        except Unreachable:
            continue
        try:
            oracle.check_legal(p)
        except AssertionError:
            illegal += 1
            try:
                oracle.check_legal(aware.route(int(s), int(t)))
            except Unreachable:          # the banned turn was the only way there
                pass
    assert illegal >= 10


@pytest.mark.slow
def test_dimacs_default_route_is_the_classic_one_and_free_turns_agree(ny):
    """NY has no restrictions and no turn costs: the default route is node-based and
    equals SciPy's node distance (1,000 pairs); a turn-aware search with every turn
    free gives the same answers (200 pairs; 1,000 under ROUTELAB_HEAVY=1)."""
    from engine.routing.reference import sssp
    ws = Workspace(ny, backends.cpu_backend())
    assert ws.turn_model(("distance",)) is None
    plain = ws.router("distance")
    assert plain.label == "bidirectional Dijkstra"
    from engine.model.router import turn_aware_router
    free = turn_aware_router(ws.turn_model(("distance",), force=True), "distance")
    rng = np.random.default_rng(2)
    free_pairs = 1000 if os.environ.get("ROUTELAB_HEAVY") == "1" else 200
    checked = 0
    for s in rng.choice(ny.num_nodes, 25, replace=False):
        dist = sssp(ny, int(s), "distance").distance
        for t in rng.choice(ny.num_nodes, 40, replace=False):
            assert plain.route(int(s), int(t)).distance == dist[t]
            if checked < free_pairs:
                assert free.route(int(s), int(t)).distance == dist[t]
            checked += 1
    assert checked == 1000


@pytest.mark.parametrize("banned", [True, False])
def test_free_crossings_are_hubs_and_routes_stay_exact(banned):
    """A crossing where every turn is allowed and free is one hub edge (end -> start)
    in the expanded graph, not indeg x outdeg turn edges. Exact against the oracle, by
    bidirectional Dijkstra, the CH query and trees read off PHAST, with the generated
    network's banned left turns (crossings with a ban are not hubs) and without them
    (every crossing a hub: SciPy's node distance)."""
    import dataclasses
    from engine.crp.metric.decoder import Decoder
    from engine.model.expanded import turn_model
    from engine.model.router import turn_aware_router
    from engine.generate.network import generate_road_network
    g = generate_road_network(4000, seed=8)
    if not banned:
        g = dataclasses.replace(g, turn_restrictions=None)
    free = Decoder(name="free", kind="metric", metric="travel_time")
    model = turn_model(g, {"travel_time": free})
    assert model.free_node.any() and (model.free_node.all() != banned)
    hubs = int(model.free_node.sum())
    assert model.expanded.num_arcs == 2 * g.num_arcs + hubs + model.turns.num_turns - int(
        model.free_node[g.head[model.turns.from_arc]].sum())
    from engine.ch.phast import PhastQuery
    from engine.model.hierarchy import contract_turn_aware
    h = contract_turn_aware(model, "travel_time", backend=backends.cpu_backend())
    h.attach(model.expanded)
    routers = [turn_aware_router(model, "travel_time"), turn_aware_router(model, "travel_time", h)]
    phast = PhastQuery(h, backends.cpu_backend())
    oracle = EdgeOracle(g, "travel_time", np.zeros(8, dtype=np.int64))
    rng = np.random.default_rng(13)
    for s in rng.choice(g.num_nodes, 12, replace=False):
        dist = oracle.distances_from(int(s))
        tree = model.road_tree(phast.tree(model.start(int(s))).tree, int(s))
        np.testing.assert_array_equal(tree.distance, dist)
        for t in rng.choice(g.num_nodes, 30, replace=False):
            if dist[t] < 0:
                continue
            for router in routers:
                p = router.route(int(s), int(t))
                assert p.distance == dist[t]
                oracle.check_legal(p)
            oracle.check_legal(path_from_tree(g, tree, int(t)))
