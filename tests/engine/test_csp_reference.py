"""The independent reference for cost-budgeted paths (engine/csp/reference.py) against
brute-force enumeration of simple paths, Vine's query sets (engine/csp/query_sets.py,
scripts/csp_queries.py), and cspy on Rome99 when that test extra is installed."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.csp.query_sets import (SETS, build_query_sets, internal_queries, set_of,
                                   synthetic_cost, with_cost_metric)
from engine.csp.reference import (least_cost, path_totals, reference_csp, reference_csp_compiled,
                                  reference_pareto)
from engine.generate.network import generate_road_network
from engine.routing.reference import shortest_path
from tests.conftest import ROME, need
from tests.cspy_peer import cspy_graph
from tests.strategies import random_arc_lists


# ------------------------------------------------------------ small graphs, brute force
def csr(num_nodes: int, arcs: list[tuple[int, int, int, int]]):
    """(first_out, head, length, cost) of (tail, head, length, cost) arcs, sorted by tail."""
    arcs = sorted(arcs, key=lambda a: a[0])
    tails = np.array([a[0] for a in arcs], dtype=np.int64)
    first_out = np.searchsorted(tails, np.arange(num_nodes + 1)).astype(np.int64)
    cols = [np.array([a[k] for a in arcs], dtype=np.int64) for k in (1, 2, 3)]
    return (first_out, *cols)


def simple_paths(first_out, head, source, target):
    """Every simple source -> target path as a list of arc ids (depth-first search)."""
    found, stack = [], [(source, [], {source})]
    while stack:
        v, arcs, seen = stack.pop()
        if v == target:
            found.append(arcs)
            continue
        for a in range(first_out[v], first_out[v + 1]):
            if head[a] not in seen:
                stack.append((int(head[a]), arcs + [a], seen | {int(head[a])}))
    return found


def brute_pairs(g, source, target):
    first_out, head, length, cost = g
    return {(int(length[p].sum()), int(cost[p].sum()))
            for p in (np.asarray(p, dtype=np.int64) for p in simple_paths(first_out, head,
                                                                        source, target))}


def brute_pareto(pairs, max_cost=None):
    pairs = [p for p in pairs if max_cost is None or p[1] <= max_cost]
    return sorted(p for p in set(pairs)
                  if not any(q != p and q[0] <= p[0] and q[1] <= p[1] for q in pairs))


def brute_csp(pairs, budget):
    feasible = [p for p in pairs if p[1] <= budget]
    return min(feasible) if feasible else None     # least length, then least cost


def check_csp(g, source, target, budget):
    """reference_csp agrees with brute force, and its arcs are a path with its totals."""
    expected = brute_csp(brute_pairs(g, source, target), budget)
    got = reference_csp(*g, source, target, budget)
    if expected is None:
        assert got is None
        return
    assert got[:2] == expected
    assert path_totals(*g, source, target, got[2]) == expected


# s=0, a=1, b=2, t=3; x=4 is unreachable from s
TRIANGLE = csr(5, [(0, 1, 1, 10), (1, 3, 1, 10),     # short and costly: (2, 20)
                   (0, 2, 4, 2), (2, 3, 4, 2),       # middle: (8, 4)
                   (0, 3, 20, 1),                     # long and cheap: (20, 1)
                   (4, 3, 1, 1)])


def test_triangle_budgets():
    assert reference_pareto(*TRIANGLE, 0, 3) == [(2, 20), (8, 4), (20, 1)]
    assert reference_pareto(*TRIANGLE, 0, 3, max_cost=10) == [(8, 4), (20, 1)]
    assert reference_csp(*TRIANGLE, 0, 3, 0) is None              # below the least cost
    assert reference_csp(*TRIANGLE, 0, 3, 1)[:2] == (20, 1)       # exactly the least cost
    assert reference_csp(*TRIANGLE, 0, 3, 19)[:2] == (8, 4)
    assert reference_csp(*TRIANGLE, 0, 3, 20)[:2] == (2, 20)      # cost of the shortest path
    assert reference_csp(*TRIANGLE, 0, 3, 10**9)[:2] == (2, 20)
    assert least_cost(TRIANGLE[0], TRIANGLE[1], TRIANGLE[3], 0, 3) == 1


def test_paths_are_arc_ids():
    first_out, head, _, _ = TRIANGLE
    arcs = reference_csp(*TRIANGLE, 0, 3, 20)[2]
    assert [int(head[a]) for a in arcs] == [1, 3] and arcs.dtype == np.int64


def test_unreachable_and_source_is_target():
    assert reference_csp(*TRIANGLE, 0, 4, 10**9) is None
    assert reference_pareto(*TRIANGLE, 0, 4) == []
    assert least_cost(TRIANGLE[0], TRIANGLE[1], TRIANGLE[3], 3, 0) is None
    length, cost, arcs = reference_csp(*TRIANGLE, 2, 2, 0)
    assert (length, cost, arcs.size) == (0, 0, 0)
    assert reference_pareto(*TRIANGLE, 2, 2) == [(0, 0)]
    assert reference_csp(*TRIANGLE, 0, 3, -1) is None


def test_zero_arcs_and_parallel_arcs():
    # parallel 0->1 arcs (3, 0), (0, 3), (1, 1); zero-length 1->2; zero-cost 2->3
    g = csr(4, [(0, 1, 3, 0), (0, 1, 0, 3), (0, 1, 1, 1), (1, 2, 0, 2), (2, 3, 5, 0),
                (1, 3, 9, 0), (3, 0, 0, 0)])
    assert reference_pareto(*g, 0, 3) == brute_pareto(brute_pairs(g, 0, 3))
    for budget in range(-1, 8):
        check_csp(g, 0, 3, budget)
    assert reference_csp(*g, 0, 3, 2)[:2] == (3 + 0 + 5, 0 + 2 + 0)
    assert reference_csp(*g, 0, 3, 3)[:2] == (1 + 0 + 5, 1 + 2 + 0)
    assert reference_csp(*g, 0, 3, 5)[:2] == (0 + 0 + 5, 3 + 2 + 0)
    assert reference_csp(*g, 0, 1, 0)[:2] == (3, 0)


def test_all_zero_costs_give_the_shortest_path():
    g = csr(4, [(0, 1, 2, 0), (1, 3, 2, 0), (0, 2, 1, 0), (2, 3, 1, 0)])
    assert reference_csp(*g, 0, 3, 0)[:2] == (2, 0)
    assert reference_pareto(*g, 0, 3) == [(2, 0)]


SMALL_GRAPHS = random_arc_lists(nodes=(1, 7), max_arcs=16, weights=st.integers(0, 6)).map(
    lambda case: (case[0], csr(case[0], case[1]), case[2], case[3]))   # (n, csr, source, target)


@settings(max_examples=300, deadline=None)
@given(SMALL_GRAPHS, st.integers(-1, 40))
def test_random_small_graphs_against_brute_force(case, budget):
    n, g, source, target = case
    pairs = brute_pairs(g, source, target)
    check_csp(g, source, target, budget)
    assert reference_pareto(*g, source, target) == brute_pareto(pairs)
    assert reference_pareto(*g, source, target, max_cost=budget) == brute_pareto(pairs, budget)
    expected_least = min((c for _, c in pairs), default=None)
    assert least_cost(g[0], g[1], g[3], source, target) == expected_least
    compiled = reference_csp_compiled(*g, source, target, budget)
    plain = reference_csp(*g, source, target, budget)
    assert compiled == (None if plain is None else plain[:2])


def test_long_pareto_sets_against_brute_force():
    """A chain of stages with three trade-off arcs each (length l, cost about 20 - l),
    plus random arcs: thousands of paths and Pareto sets of dozens of pairs."""
    rng = np.random.default_rng(7)
    arcs = [(i, i + 1, l, 20 - l + int(rng.integers(0, 3)))
            for i in range(7) for l in rng.integers(0, 21, size=3).tolist()]
    arcs += [(u, v, int(rng.integers(0, 40)), int(rng.integers(0, 40)))
             for u, v in rng.integers(0, 8, size=(12, 2)).tolist()]
    g = csr(8, arcs)
    for source, target in [(0, 7), (1, 6), (7, 0)]:
        pairs = brute_pairs(g, source, target)
        pareto = reference_pareto(*g, source, target)
        assert pareto == brute_pareto(pairs)
        assert len(pareto) >= 20 or (source, target) == (7, 0)
        for budget in sorted({c for _, c in pareto}):
            check_csp(g, source, target, budget)
            check_csp(g, source, target, budget - 1)


# ------------------------------------------------------------------------- query sets
@pytest.fixture(scope="module")
def generated():
    return generate_road_network(3000, seed=3)


@pytest.fixture(scope="module")
def generated_sets(generated):
    return build_query_sets(generated, "distance", "travel_time", seed=5, per_set=20)


RANGES = {"Q1": (1 / 8, 1 / 4), "Q2": (1 / 4, 1 / 2), "Q3": (1 / 2, None)}   # times d


def test_query_sets_follow_vines_definition(generated, generated_sets):
    q, d = generated_sets, generated_sets["diameter"]
    assert (q["length_metric"], q["cost_metric"], q["seed"]) == ("distance", "travel_time", 5)
    assert d >= max(e["shortest_length"] for s in SETS for e in q["sets"][s])   # a lower bound
    for name in SETS:
        assert len(q["sets"][name]) == 20
        for e, (s, t, budget) in zip(q["sets"][name], internal_queries(generated, q, name)):
            low, high = RANGES[name]
            assert low * d <= e["shortest_length"]
            assert high is None or e["shortest_length"] < high * d
            assert set_of(e["shortest_length"], d) == name
            assert e["least_cost"] <= e["budget"] == budget <= e["shortest_path_cost"]
            ref = shortest_path(generated, s, t, "distance")
            assert e["shortest_length"] == ref.distance


def test_query_set_costs_agree_with_the_reference(generated, generated_sets):
    """least_cost is the least cost, shortest_path_cost the cost of a shortest path:
    a budget of least_cost - 1 has no path, shortest_path_cost gives the shortest length."""
    g, L, C = generated, generated.metrics["distance"], generated.metrics["travel_time"]
    for e, (s, t, budget) in list(zip(generated_sets["sets"]["Q1"],
                                      internal_queries(g, generated_sets, "Q1")))[:8]:
        assert least_cost(g.first_out, g.head, C, s, t) == e["least_cost"]
        assert reference_csp(g.first_out, g.head, L, C, s, t, e["least_cost"] - 1) is None
        full = reference_csp(g.first_out, g.head, L, C, s, t, e["shortest_path_cost"])
        assert full[:2] == (e["shortest_length"], e["shortest_path_cost"])
        less = reference_csp(g.first_out, g.head, L, C, s, t, e["shortest_path_cost"] - 1)
        assert less is None or less[0] > e["shortest_length"]
        length, cost, arcs = reference_csp(g.first_out, g.head, L, C, s, t, budget)
        assert e["shortest_length"] <= length and cost <= budget
        assert path_totals(g.first_out, g.head, L, C, s, t, arcs) == (length, cost)


def test_shortest_path_cost_is_the_least_among_ties():
    """A two-way chain with two parallel arcs per hop, same length and costs 3 and 5: a
    shortest path costs 3 per hop, whichever arc a Dijkstra by length kept."""
    from engine.core.graph import RoadGraph
    hops = [(i, i + 1) for i in range(39)] + [(i + 1, i) for i in range(39)]
    tail = [u for u, _ in hops] * 2
    head = [v for _, v in hops] * 2
    chain = RoadGraph.from_arcs(40, tail, head, {"distance": [10] * 156,
                                                 "travel_time": [5] * 78 + [3] * 78})
    q = build_query_sets(chain, "distance", "travel_time", seed=2, per_set=5)
    for name in SETS:
        for e in q["sets"][name]:
            assert e["shortest_path_cost"] == e["least_cost"] == 3 * e["shortest_length"] // 10


def test_query_sets_are_deterministic_by_seed(generated, generated_sets):
    again = build_query_sets(generated, "distance", "travel_time", seed=5, per_set=20)
    assert again == generated_sets
    other = build_query_sets(generated, "distance", "travel_time", seed=6, per_set=20)
    assert other["sets"] != generated_sets["sets"]


def test_script_writes_the_sets_as_json(tmp_path, generated, generated_sets):
    from engine.io.cache import save_cache
    from scripts.csp_queries import main
    graph_file = save_cache(generated, tmp_path / "g.rlg")
    out = tmp_path / "q.json"
    assert main([str(graph_file), "--out", str(out), "--length", "distance",
                 "--cost", "travel_time", "--seed", "5", "--per-set", "20"]) == 0
    written = json.loads(out.read_text())
    assert written["sets"] == generated_sets["sets"]
    assert written["diameter"] == generated_sets["diameter"]
    assert main([str(graph_file), "--out", str(out), "--seed", "5", "--per-set", "2",
                 "--reference"]) == 0
    with_answers = json.loads(out.read_text())
    L, C = generated.metrics["distance"], generated.metrics["travel_time"]
    for name in SETS:
        for e, (s, t, b) in zip(with_answers["sets"][name],
                                internal_queries(generated, with_answers, name)):
            found = reference_csp(generated.first_out, generated.head, L, C, s, t, b)
            assert e["reference"] == {"length": found[0], "cost": found[1]}


def test_synthetic_cost_is_deterministic_travel_time(generated):
    cost = synthetic_cost(generated)
    length = generated.metrics["distance"].astype(np.int64)
    assert np.array_equal(cost, synthetic_cost(generated))
    speeds = {30, 50, 70, 100}
    per_arc = [{s for s in speeds if -(-int(l) * 36 // s) == int(c)}
               for l, c in zip(length[:500], cost[:500])]
    assert all(per_arc) and len(set().union(*per_arc)) == 4   # every speed class is used
    q = build_query_sets(generated, "distance", "synthetic", seed=1, per_set=3)
    assert q["cost_metric"] == "synthetic" and "synthetic" in q["cost_description"]
    assert "synthetic" in with_cost_metric(generated, "synthetic").metrics
    assert "synthetic" not in generated.metrics


# -------------------------------------------------------------------- cspy on Rome99
def test_reference_agrees_with_cspy_on_rome99():
    cspy = pytest.importorskip("cspy")
    from engine.io import load
    graph = with_cost_metric(load([need(ROME)]), "synthetic")
    length, cost = graph.metrics["weight"], graph.metrics["synthetic"]
    q = build_query_sets(graph, "weight", "synthetic", seed=0, per_set=10)
    for s, t, budget in internal_queries(graph, q, "Q1"):
        ref = reference_csp(graph.first_out, graph.head, length, cost, s, t, budget)
        started = time.perf_counter()
        alg = cspy.BiDirectional(cspy_graph(graph, length, cost, s, t),
                                 [graph.num_arcs + 2.0, float(budget)], [0.0, 0.0],
                                 direction="both", elementary=False)
        alg.run()
        print(f"cspy {s}->{t}: {time.perf_counter() - started:.3f} s")
        assert ref is not None and alg.total_cost == ref[0]
        assert alg.consumed_resources[1] <= budget
