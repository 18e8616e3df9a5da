"""CU-CH contraction and PHAST queries on the CPU: exactness, invariants, unpacking."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.ch import phast
from engine.core.backend import cpu_backend
from engine.ch import Hierarchy, contract
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.io import LoadError, load
from engine.ch.query import ChQuery
from engine.core.paths import Unreachable, check_path
from engine.routing.reference import scipy_matrix, sssp
from tests.conftest import PORTO, need
from tests.engine.test_sssp import check_tree
from tests.strategies import random_graphs

CPU = cpu_backend()


def check_invariants(h: Hierarchy) -> None:
    level = h.node_level
    for lv in range(h.num_levels):
        up = h.up_harc[h.up_first[lv]:h.up_first[lv + 1]]
        down = h.down_harc[h.down_first[lv]:h.down_first[lv + 1]]
        # arcs of level l leave (enter) U_l toward strictly higher levels: U_l is
        # independent in G_l, and every upward arc goes up
        assert np.all(level[h.arc_tail[up]] == lv) and np.all(level[h.arc_head[up]] > lv)
        assert np.all(level[h.arc_head[down]] == lv) and np.all(level[h.arc_tail[down]] > lv)
    assert np.all(level[h.core_nodes] == h.num_levels)
    assert np.all(level < h.num_levels + 1)


def check_shortcuts_unpack(h: Hierarchy, graph: RoadGraph, sample: int = 300) -> None:
    w = graph.metric(h.metric)
    shortcuts = np.arange(h.num_original_arcs, h.arc_tail.size)
    rng = np.random.default_rng(0)
    for harc in rng.choice(shortcuts, min(sample, shortcuts.size), replace=False):
        arcs = h.unpack(harc)
        assert graph.tail[arcs[0]] == h.arc_tail[harc] and graph.head[arcs[-1]] == h.arc_head[harc]
        assert np.all(graph.head[arcs[:-1]] == graph.tail[arcs[1:]])
        assert int(w[arcs].sum()) == h.arc_weight[harc]
        assert h.midpoint(harc) == graph.head[h.unpack(h.arc_child1[harc])[-1]]


def check_queries(h: Hierarchy, graph: RoadGraph, sources) -> None:
    matrix = scipy_matrix(graph, h.metric)
    query = phast.PhastQuery(h, CPU)
    for s in sources:
        reference = sssp(graph, int(s), h.metric, matrix)
        tree = query.tree(int(s)).tree
        check_tree(graph, tree, reference)
        target = int((int(s) * 7919 + 13) % graph.num_nodes)
        if tree.distance[target] >= 0:
            p = query.path(tree, target)
            check_path(graph, p)
            assert p.distance == reference.distance[target]


@pytest.mark.parametrize("metric", ["distance", "travel_time"])
def test_new_york_200_sources(ny, metric):
    h = contract(ny, metric, backend=CPU)
    check_invariants(h)
    check_shortcuts_unpack(h, ny)
    check_queries(h, ny, np.random.default_rng(31).integers(0, ny.num_nodes, 200))
    assert 20 < h.num_levels < 120 and 1.0 < h.edge_growth < 4.0
    check_point_to_point(h, ny, sources=25, targets=24, seed=35)


def check_point_to_point(h: Hierarchy, graph: RoadGraph, sources: int, targets: int,
                         seed: int) -> None:
    """The CH query (engine/ch/query.py) on sources x targets random pairs: valid
    paths whose distances equal SciPy's Dijkstra."""
    matrix = scipy_matrix(graph, h.metric)
    query, rng = ChQuery(h), np.random.default_rng(seed)
    for s in rng.integers(0, graph.num_nodes, sources):
        reference = sssp(graph, int(s), h.metric, matrix)
        for t in rng.integers(0, graph.num_nodes, targets):
            if reference.distance[t] < 0:
                with pytest.raises(Unreachable):
                    query.route(int(s), int(t))
                continue
            p = query.route(int(s), int(t))
            check_path(graph, p)
            assert p.distance == reference.distance[t], (int(s), int(t))


def test_rome_200_sources(rome):
    h = contract(rome, K=64, backend=CPU)
    check_invariants(h)
    check_shortcuts_unpack(h, rome)
    check_queries(h, rome, np.random.default_rng(32).integers(0, rome.num_nodes, 200))


@pytest.mark.slow
def test_porto_200_sources():
    porto = load([need(PORTO)])
    for metric in porto.metric_names:
        h = contract(porto, metric, backend=CPU)
        check_invariants(h)
        check_queries(h, porto, np.random.default_rng(33).integers(0, porto.num_nodes, 200))


def test_generated_200_sources():
    g = generate_road_network(30_000, seed=4)
    for metric in g.metric_names:
        h = contract(g, metric, K=300, C=0.5, backend=CPU)
        check_invariants(h)
        check_shortcuts_unpack(h, g)
        check_queries(h, g, np.random.default_rng(34).integers(0, g.num_nodes, 200))


def test_a_dense_level_graph_ends_the_levels():
    """In a clique an independent set is one node, so each level would contract one
    node: the first such level ends the levels (engine.ch.contraction.STALLED) and the rest is
    the core, with exact queries."""
    n = 120
    tail, head = np.nonzero(~np.eye(n, dtype=bool))
    w = np.random.default_rng(5).integers(1, 100, tail.size)
    g = RoadGraph.from_arcs(n, tail.astype(np.int64), head.astype(np.int64), {"w": w})
    h = contract(g, K=2, C=1.0, backend=CPU)
    assert h.num_levels == 1 and h.core_nodes.size == n - h.iterations[0]["contracted"]
    check_invariants(h)
    check_queries(h, g, range(0, n, 7))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(2, 40), max_arcs=140, weights=st.integers(0, 30)), st.integers(2, 8),
       st.sampled_from([0.1, 0.3, 0.7, 1.0]), st.data())
def test_random_graphs(g, K, C, data):
    h = contract(g, K=K, C=C, backend=CPU)
    check_invariants(h)
    if h.num_shortcuts:
        check_shortcuts_unpack(h, g, sample=20)
    sources = data.draw(st.lists(st.integers(0, g.num_nodes - 1), min_size=1, max_size=3))
    check_queries(h, g, sources)


def test_batch_equals_single_queries(rome):
    h = contract(rome, K=64, backend=CPU)
    sources = [0, 5, 17, 3000]
    query = phast.PhastQuery(h, CPU)
    batch = query.distances(sources)
    for row, s in zip(batch, sources):
        assert np.array_equal(row, query.tree(s).tree.distance)


def test_per_level_query_times(rome):
    h = contract(rome, K=64, backend=CPU)
    r = phast.PhastQuery(h, CPU).tree(3, per_level=True)
    assert len(r.level_ms["up"]) > 0 and len(r.level_ms["down"]) > 0 and r.level_ms["core"] >= 0


def test_iteration_records_and_progress(rome):
    records, messages = [], []
    h = contract(rome, K=64, backend=CPU, on_iteration=records.append,
                 progress=lambda f, m: messages.append((f, m)))
    assert len(records) == h.num_levels == len(h.iterations)
    first = records[0]
    assert first["nodes"] == rome.num_nodes and 0 < first["contracted"] <= 0.3 * rome.num_nodes + 1
    assert set(first["ms"]) == {"score", "select", "shortcut", "update", "extract"}
    assert sum(r["contracted"] for r in records) + h.core_nodes.size == rome.num_nodes
    assert messages[-1][0] == 1.0


def test_cancel_between_levels(rome):
    from engine.core.progress import CancelToken, Cancelled
    token = CancelToken()
    with pytest.raises(Cancelled):
        contract(rome, K=64, backend=CPU, cancel=token, on_iteration=lambda r: token.cancel())


def test_cancel_inside_a_level(rome, monkeypatch):
    """A level is checked between its steps: cancelled during SCORE, nothing after it runs."""
    import engine.ch.contraction as ch
    from engine.core.progress import CancelToken, Cancelled
    token, real = CancelToken(), ch.importance
    monkeypatch.setattr(ch, "importance", lambda *a: (token.cancel(), real(*a))[1])
    monkeypatch.setattr(ch, "independent_set", lambda *a: pytest.fail("SELECT ran after cancel"))
    with pytest.raises(Cancelled):
        contract(rome, K=64, backend=CPU, cancel=token)


def test_the_package_face_loads_no_numba():
    """engine.ch's parameters, its Hierarchy and its face are read without Numba or
    SciPy (the command line and the window ask for them at start-up)."""
    import subprocess
    import sys
    code = ("import sys, engine.ch, engine.ch.parameters, engine.ch.hierarchy; "
            "from engine.ch import DEFAULT_K, Hierarchy, check_parameters; "
            "print(sorted({'numba', 'scipy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_parameters(rome):
    with pytest.raises(ValueError, match="K"):
        contract(rome, K=1, backend=CPU)
    with pytest.raises(ValueError, match="C"):
        contract(rome, C=0.0, backend=CPU)


def test_save_and_load(tmp_path, rome):
    h = contract(rome, K=64, backend=CPU)
    path = h.save(tmp_path / "rome.rlh")
    again = Hierarchy.load(path, rome)
    for name in ("node_level", "arc_tail", "arc_head", "arc_weight", "arc_child1", "up_harc",
                 "down_harc", "core_nodes", "core_dist"):
        assert np.array_equal(getattr(h, name), getattr(again, name)), name
    assert again.iterations == h.iterations and again.num_levels == h.num_levels
    assert np.array_equal(phast.PhastQuery(again, CPU).tree(9).tree.distance,
                          phast.PhastQuery(h, CPU).tree(9).tree.distance)


def test_load_rejects_another_graph_and_garbage(tmp_path, rome):
    path = contract(rome, K=64, backend=CPU).save(tmp_path / "rome.rlh")
    other = generate_road_network(500, seed=1)
    with pytest.raises(LoadError, match="belongs to a graph"):
        Hierarchy.load(path, other)
    junk = tmp_path / "junk.rlh"
    junk.write_bytes(b"not a hierarchy")
    with pytest.raises(LoadError, match="not a readable RouteLab hierarchy"):
        Hierarchy.load(junk)


@pytest.mark.parametrize("detour, contracted_on_detour, limit, dropped", [
    ((1, 2, 1), False, 64, True),     # as long as u-w-v, through surviving nodes
    ((1, 2, 2), False, 64, False),    # longer
    ((1, 1, 1), True, 64, False),     # shorter, but through a node contracted now
    ((1, 1, 1), False, 2, False),     # the search stops before it reaches v
])
def test_local_witness_search(detour, contracted_on_detour, limit, dropped, monkeypatch):
    """u=0 -> w=1 -> v=2 costs 4; the detour 0 -> 3 -> 4 -> 2 is three hops,
    beyond the 2-hop test, so only the local search can witness it."""
    from engine.ch import witness
    from engine.ch.level_graph import normalized
    tail = np.array([0, 1, 0, 3, 4], np.int64)
    head = np.array([1, 2, 3, 4, 2], np.int64)
    weight = np.array([2, 2, *detour], np.int64)
    g = normalized(CPU, 5, tail, head, weight, np.arange(5, dtype=np.int64))
    contracted = np.array([False, True, False, False, contracted_on_detour])
    monkeypatch.setattr(witness, "SETTLE_LIMIT", limit)
    found = witness.witnessed(g, contracted, g.out_first(), np.array([0]), np.array([2]),
                              np.array([4]), np.array([True]))
    assert found.tolist() == [dropped]
