"""Metric objects, the Workspace's choice of query objects, and the capability registry."""
from __future__ import annotations

import numpy as np
import pytest

from engine import capabilities
from engine.core.backend import cpu_backend
from engine.capabilities import Capability, Param
from engine.ch import contract
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.io import LoadError
from engine.core.jobs import JobContext
from engine.core.metric import Metric
from engine.core.paths import check_path
from engine.routing.reference import shortest_path
from engine.workspace import Workspace

CPU = cpu_backend()


@pytest.fixture(scope="module")
def small():
    """The generated network without its turn information (as a DIMACS graph): the
    workspace searches the road graph itself (the node-based fast path, engine.model);
    tests/engine/test_turn_model.py covers the turn-aware choices."""
    import dataclasses
    return dataclasses.replace(generate_road_network(3000, seed=5), turn_restrictions=None,
                               arc_attrs={})


def test_metric_hash_follows_the_weights(small):
    m = small.metric_of("travel_time")
    assert m is small.metric_of("travel_time") and m.unit == small.metric_units.get("travel_time", "")
    same = Metric("travel_time", m.weights.copy())
    changed_w = m.weights.copy()
    changed_w[17] += 1
    assert same.hash == m.hash
    assert Metric("travel_time", changed_w).hash != m.hash
    assert Metric("travel_time", m.weights.astype(np.int64)).hash != m.hash   # dtype counts


def test_hierarchy_serves_only_its_metric(small, tmp_path):
    h = contract(small, "travel_time", K=64, backend=CPU)
    assert h.serves(small.metric_of("travel_time")) and not h.serves(small.metric_of("distance"))
    with pytest.raises(ValueError, match="built for the metric 'travel_time'"):
        h.check_metric(small.metric_of("distance"))
    edited = small.metric_of("travel_time").weights.copy()
    edited[0] += 5
    with pytest.raises(ValueError, match="changed since the hierarchy was built"):
        h.check_metric(Metric("travel_time", edited))
    path = h.save(tmp_path / "h.rlh")
    other = RoadGraph.from_arcs(small.num_nodes, small.tail, small.head,
                                {"travel_time": edited, "distance": small.metric("distance")})
    with pytest.raises(LoadError, match="other arcs or costs"):
        type(h).load(path, other)


def test_workspace_picks_the_router_for_the_metric(small):
    ws = Workspace(small, CPU)
    assert ws.router("travel_time").name == "bidirectional_dijkstra"
    ws.set_hierarchy(contract(small, "travel_time", K=64, backend=CPU))
    fast, plain = ws.router("travel_time"), ws.router("distance")
    assert (fast.name, plain.name) == ("ch", "bidirectional_dijkstra")
    assert ws.router("travel_time") is fast            # kept for the next query
    rng = np.random.default_rng(3)
    for s, t in rng.integers(0, small.num_nodes, (50, 2)):
        for metric, router in (("travel_time", fast), ("distance", plain)):
            p = router.route(int(s), int(t))
            check_path(small, p)
            assert p.distance == shortest_path(small, int(s), int(t), metric).distance
    ws.set_hierarchy(None)
    assert ws.router("travel_time").name == "bidirectional_dijkstra"


def test_workspace_phast_needs_a_matching_hierarchy(small):
    ws = Workspace(small, CPU)
    with pytest.raises(ValueError, match="no contraction hierarchy"):
        ws.phast_query("distance")
    ws.set_hierarchy(contract(small, "distance", K=64, backend=CPU))
    with pytest.raises(ValueError, match="built for the metric 'distance'"):
        ws.phast_query("travel_time")
    assert ws.phast_query("distance") is ws.phast_query(None)
    assert ws.tree_query("distance") is ws.tree_query("distance")


def test_capabilities_run_on_a_workspace(small):
    ws = Workspace(small, CPU)
    records = []
    ctx = JobContext(record=records.append)
    h = capabilities.get("contract").run(ws, {"metric": "distance", "K": 64, "C": 0.3}, ctx)
    assert ws.hierarchy is h and len(records) == h.num_levels
    route = capabilities.get("route").run(ws, {"source": 1, "target": 2000, "metric": "distance"}, ctx)
    assert route.method == "ch" and route.method_label == "CH query"
    tree = capabilities.get("tree").run(ws, {"source": 1, "metric": "distance", "method": "phast"}, ctx)
    assert tree.tree.distance[2000] == route.path.distance
    c = capabilities.get("compare").run(ws, {"source": 1, "metric": "distance"}, ctx)
    assert c.exact and {t.name for t in c.timings} >= {"near_far", "reference"}


def test_registry_register_and_unregister():
    names = [c.name for c in capabilities.all_capabilities()]
    assert names[:5] == ["info", "route", "tree", "compare", "contract"]
    extra = Capability("echo_count", "Count nodes", "print the node count",
                       (Param("times", int, 1, "how often"),),
                       run=lambda ws, p, ctx: ws.graph.num_nodes * p["times"],
                       to_json=lambda ws, p, r: {"count": r}, to_text=lambda r: str(r["count"]))
    capabilities.register(extra)
    try:
        assert capabilities.get("echo_count") is extra and extra.defaults() == {"times": 1}
    finally:
        capabilities.unregister("echo_count")
    with pytest.raises(KeyError, match="unknown capability 'echo_count'"):
        capabilities.get("echo_count")
    with pytest.raises(TypeError, match="parameter type"):
        capabilities.register(Capability("bad", "Bad", "", (Param("x", list),), run=None,
                                         to_json=None, to_text=None))
