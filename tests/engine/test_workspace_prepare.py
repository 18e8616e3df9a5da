"""A graph load prepares only what is cheap (Workspace.prepare): where turns matter the
turn model and its router are left to the prepare job (engine.capabilities.prepare) or
the first route, with the same answers; a hierarchy that serves a metric replaces the
search without one, which is freed (and built again if the hierarchy goes)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.capabilities.prepare import run as prepare_job
from engine.core import backend as backends
from engine.core.jobs import JobContext
from engine.core.progress import CancelToken, Cancelled
from engine.generate.network import generate_road_network
from engine.model.defaults import default_decoder
from engine.model.hierarchy import contract_turn_aware
from engine.workspace import Workspace
from tests.strategies import dimacs_like_graph
from tests.turn_oracle import EdgeOracle, turn_cost_table

CPU = backends.cpu_backend()


@pytest.fixture(scope="module")
def network():
    return generate_road_network(2_000, seed=3)


def oracle_distances(g, metric, source):
    return EdgeOracle(g, metric, turn_cost_table(default_decoder(g, metric))).distances_from(source)


def test_a_load_leaves_the_turn_model_to_later_and_routes_stay_exact(network):
    ws = Workspace(network, CPU)
    ws.prepare(network.default_metric)
    assert ws._models == {} and ws._routers == {} and ws._turns is None
    metric = network.default_metric
    router = ws.router(metric)                       # built on the first route
    assert router.label == "turn-aware bidirectional Dijkstra"
    dist = oracle_distances(network, metric, 5)
    for t in np.random.default_rng(1).choice(network.num_nodes, 40, replace=False):
        if dist[t] >= 0:
            assert router.route(5, int(t)).distance == dist[t]


def test_where_turns_change_nothing_the_load_builds_the_road_router():
    g = dimacs_like_graph(3, 300, 1200, 100)
    ws = Workspace(g, CPU)
    ws.prepare()
    assert ws._models == {} and len(ws._routers) == 1
    assert next(iter(ws._routers.values())).label == "bidirectional Dijkstra"


def test_the_prepare_job_builds_the_model_and_its_router(network):
    ws = Workspace(network, CPU)
    done = prepare_job(ws, {}, JobContext())
    model = ws.turn_model((network.default_metric,))
    assert done.expanded_nodes == model.expanded.num_nodes > network.num_nodes
    assert done.expanded_edges == model.expanded.num_arcs
    assert done.model_bytes > model.expanded.head.nbytes
    assert done.router == "turn-aware bidirectional Dijkstra"
    assert len(ws._routers) == 1
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        prepare_job(Workspace(network, CPU), {}, JobContext(cancel=token))


def test_a_hierarchy_replaces_the_search_it_serves_and_frees_it(network):
    ws = Workspace(network, CPU)
    metric = network.default_metric
    plain = ws.router(metric)
    pairs = [(3, 1500), (700, 12), (42, 1999)]
    before = [plain.route(s, t).distance for s, t in pairs]
    ws.set_hierarchy(contract_turn_aware(ws.turn_model((metric,)), metric, backend=CPU))
    assert all(k[2] is not None for k in ws._routers)      # the plain search was dropped
    ch = ws.router(metric)
    assert ch.name == "ch" and [ch.route(s, t).distance for s, t in pairs] == before
    assert plain not in ws._routers.values()
    ws.set_hierarchy(None)
    again = ws.router(metric)
    assert again.name == "bidirectional_dijkstra" and [again.route(s, t).distance
                                                       for s, t in pairs] == before
