"""Cost-budgeted paths on the CPU (engine.csp): exact against brute force on small
graphs, the bounds never change an answer (with and without them, and the Pareto set),
the edge cases (the command line: tests/app/test_cli_csp.py)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.csp import CspQuery, NoPathWithinBudget
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.core.paths import Unreachable
from tests.strategies import random_two_metric_graph


def brute_force(g: RoadGraph, s: int, t: int):
    """Every simple s->t path as (length, cost)."""
    L, C = g.metrics["distance"], g.metrics["travel_time"]
    out, stack = [], [(s, 0, 0, {s})]
    while stack:
        v, l, c, seen = stack.pop()
        if v == t:
            out.append((l, c))
            continue
        for a in range(g.first_out[v], g.first_out[v + 1]):
            w = int(g.head[a])
            if w not in seen:
                stack.append((w, l + int(L[a]), c + int(C[a]), seen | {w}))
    return out


def pareto_of(points):
    best, front = None, []
    for l, c in sorted(set(points)):
        if best is None or c < best:
            front.append((l, c))
            best = c
    return front


def brute_force_cases(g: RoadGraph, q, seed: int):
    """(s, t, budget, the (length, cost) of every s->t path within it) for 6 random pairs
    and 4 budgets each; on the way, ``q`` must say so where there is no path at all, or
    none within the budget (with the least cost)."""
    rng = np.random.default_rng(seed)
    for s, t in rng.integers(0, g.num_nodes, (6, 2)):
        s, t = int(s), int(t)
        paths = brute_force(g, s, t) if s != t else [(0, 0)]
        if not paths:
            with pytest.raises(Unreachable):
                q.solve(s, t, 10**6)
            continue
        least = min(c for _, c in paths)
        for budget in {least - 1, least, least + 3, max(c for _, c in paths)}:
            within = [(l, c) for l, c in paths if c <= budget]
            if not within:
                with pytest.raises(NoPathWithinBudget) as e:
                    q.solve(s, t, budget)
                assert e.value.least_cost == least
                continue
            yield s, t, budget, within


@pytest.mark.parametrize("seed", range(40))
def test_small_graphs_equal_brute_force(seed):
    g = random_two_metric_graph(seed)
    q, plain = CspQuery(g), CspQuery(g, bounds=False)
    for s, t, budget, within in brute_force_cases(g, q, seed):
        for query in (q, plain):
            r = query.solve(s, t, budget)
            assert r.length == min(l for l, _ in within) and r.cost <= budget
            assert r.length == int(g.metrics["distance"][r.path.arcs].sum())
            assert r.path.nodes[0] == s and r.path.nodes[-1] == t
            assert np.array_equal(g.head[r.path.arcs[:-1]], g.tail[r.path.arcs[1:]])
        front = pareto_of(within)
        p = q.solve(s, t, budget, pareto=True)
        assert [(x.length, x.cost) for x in p.pareto] == front
        for x in p.pareto:
            assert x.length == int(g.metrics["distance"][x.arcs].sum())
            assert x.cost == int(g.metrics["travel_time"][x.arcs].sum())


def halfway_budgets(g, q, seed: int, pairs: int):
    """(s, t, budget, top) for the reachable ones of ``pairs`` random pairs: the budget
    halfway between the least cost and the shortest path's cost (``top``: the answer
    without a budget)."""
    for s, t in np.random.default_rng(seed).integers(0, g.num_nodes, (pairs, 2)):
        try:
            top = q.solve(int(s), int(t), 10**12)
        except Unreachable:
            continue
        yield int(s), int(t), (top.least_cost + top.shortest_cost) // 2, top


@pytest.fixture(scope="module")
def gen():
    g = generate_road_network(6_000, seed=4)
    return g, CspQuery(g), CspQuery(g, bounds=False)


def test_bounds_never_change_the_answer(gen):
    g, q, plain = gen
    labelled = 0
    for s, t, budget, top in halfway_budgets(g, q, 2, 30):
        a, b = q.solve(s, t, budget), plain.solve(s, t, budget)
        assert a.length == b.length and a.cost <= budget and b.cost <= budget
        assert a.least_cost <= budget <= top.shortest_cost
        labelled += a.answered_by.startswith("labeling")
        assert a.stats["created"] <= b.stats["created"]
        pa, pb = q.solve(s, t, budget, pareto=True), plain.solve(s, t, budget, pareto=True)
        assert [(x.length, x.cost) for x in pa.pareto] == [(x.length, x.cost) for x in pb.pareto]
        assert pa.pareto[0].length == a.length
    assert labelled >= 5


def test_the_history_ends_with_the_final_counts(gen):
    """However short the search, its last history row holds its final counts."""
    g, q, plain = gen
    for query in (q, plain):
        for s, t, budget, _ in halfway_budgets(g, q, 5, 6):
            r = query.solve(s, t, budget)
            if not r.answered_by.startswith("labeling"):
                continue
            last = dict(zip(r.history_columns, r.history[-1].tolist()))
            assert (last["settled"], last["created"]) == (r.stats["settled"], r.stats["created"])
            assert len(r.history) >= 2 or r.stats["settled"] == 1


def test_edge_cases(gen):
    g, q, _ = gen
    check_edge_cases(g, q)
    with pytest.raises(ValueError, match="no metric"):
        CspQuery(g, budget_metric="fuel")


def check_edge_cases(g, q):
    """src = dst, a budget at or above the shortest path's cost, below and at the least
    cost, an unknown node (also run by tests/gpu/test_csp_gpu.py)."""
    r = q.solve(10, 10, 0)
    assert (r.length, r.cost, r.path.num_arcs) == (0, 0, 0)
    top = q.solve(10, 5000, 10**12)
    assert top.answered_by == "bounds" and top.length == top.shortest_length
    assert q.solve(10, 5000, top.shortest_cost).length == top.shortest_length
    with pytest.raises(NoPathWithinBudget, match=f"least cost is {top.least_cost:,}"):
        q.solve(10, 5000, top.least_cost - 1)
    cheapest = q.solve(10, 5000, top.least_cost)
    assert cheapest.cost == top.least_cost
    with pytest.raises(IndexError):
        q.solve(10, g.num_nodes, 100)


def test_label_memory_limit_is_an_error_not_an_answer(gen):
    from engine.csp import LabelMemoryExceeded
    g, _, _ = gen
    tiny = CspQuery(g, bounds=False, max_labels=50)
    rng = np.random.default_rng(5)
    for s, t in rng.integers(0, g.num_nodes, (20, 2)):
        try:
            top = CspQuery(g).solve(int(s), int(t), 10**12)
        except Unreachable:
            continue
        if top.shortest_cost > top.least_cost and top.shortest_length > 0:
            budget = (top.least_cost + top.shortest_cost) // 2
            with pytest.raises(LabelMemoryExceeded, match="more than 50 labels, no answer"):
                tiny.solve(int(s), int(t), budget)
            with pytest.raises(LabelMemoryExceeded, match="more than 50 labels, no Pareto set"):
                tiny.solve(int(s), int(t), budget, pareto=True)
            return
    pytest.skip("no query needed labeling")


# ------------------------------------------------------- Vine's query sets, exact
def _check_sets(g, minimize, budget_metric, sets, per_set=None, reference=None,
                names=("Q1", "Q2", "Q3"), **options):
    """Every query of the sets against the reference, by the default query and with the
    Lagrangian bound from the start (``options`` to both); the number of queries checked."""
    from engine.csp.query_sets import internal_queries
    from engine.csp.reference import path_totals, reference_csp
    queries = [CspQuery(g, minimize, budget_metric, lagrangian=x, **options)
               for x in ("auto", "always")]
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (minimize, budget_metric))
    checked = 0
    for name in names:
        for s, t, budget in internal_queries(g, sets, name)[:per_set]:
            expected = (reference or reference_csp)(g.first_out, g.head, L, C, s, t, budget)
            for q in queries:
                r = q.solve(s, t, budget)
                assert expected is not None and r.length == expected[0], (name, s, t, budget)
                assert r.cost <= budget
                assert path_totals(g.first_out, g.head, L, C, s, t, r.path.arcs) == \
                    (r.length, r.cost)
            checked += 1
    return checked


def test_rome99_query_sets_equal_the_reference(rome_csp):
    """Every query of Q1-Q3 on Rome99 (its one metric as length, a synthetic travel
    time as cost: engine.csp.query_sets.synthetic_cost)."""
    g, length, sets = rome_csp
    assert _check_sets(g, length, "synthetic", sets) == 60


def test_generated_50k_query_sets_equal_the_reference():
    """Every query of Q1-Q3 (20 each) on a generated graph of 50,000 nodes, against the
    reference's compiled twin (pure Python would take minutes here)."""
    from engine.csp.query_sets import build_query_sets
    from engine.csp.reference import reference_csp_compiled
    g = generate_road_network(50_000, seed=3)
    sets = build_query_sets(g, "distance", "travel_time", seed=2)
    assert _check_sets(g, "distance", "travel_time", sets, reference=reference_csp_compiled) == 60


def test_new_york_q1_equals_the_stored_reference(ny, ny_queries):
    """NY Q1 (Vine's sets, seed 0): the answers the reference's compiled twin gave when
    tests/data/csp_ny_queries.json was written (scripts/csp_queries.py --reference
    --compiled; Q1-Q3 are stored, CI checks Q1), by the default query and with the
    Lagrangian bound from the start."""
    from engine.csp.query_sets import internal_queries
    from engine.csp.reference import path_totals
    stored = ny_queries
    queries = [CspQuery(ny, "distance", "travel_time", lagrangian=x) for x in ("auto", "always")]
    L, C = (np.asarray(ny.metrics[m], np.int64) for m in ("distance", "travel_time"))
    for item, (s, t, budget) in zip(stored["sets"]["Q1"], internal_queries(ny, stored, "Q1")):
        for q in queries:
            r = q.solve(s, t, budget)
            assert r.length == item["reference"]["length"] and r.cost <= budget, item
            assert path_totals(ny.first_out, ny.head, L, C, s, t, r.path.arcs) == \
                (r.length, r.cost)
    assert len(stored["sets"]["Q1"]) == 20


@pytest.mark.parametrize("radius", [2**62, 3_000])
def test_reverse_search_dial_and_heap_agree(radius):
    """The bounds' reverse search with Dial's buckets and with a binary heap (weights of
    MAX_BUCKETS or more): the same nodes settled and the same distances (the tree sums
    may differ where shortest paths tie)."""
    from engine.csp.bounds.cpu import INF, ReverseGraph, reverse_search
    g = generate_road_network(3_000, seed=8)
    length, cost = (np.asarray(g.metrics[m], np.int64) for m in ("distance", "travel_time"))
    rev = ReverseGraph.of(g, length, cost)
    out = []
    for dial in (True, False):
        dist, nxt = np.full(g.num_nodes, INF, np.int64), np.full(g.num_nodes, -1, np.int32)
        along = np.full(g.num_nodes, -1, np.int64)
        reverse_search(rev.first_in, rev.tail, rev.arc, rev.length, 7, 7,
                       np.array([radius], np.int64), dist, nxt, g.head, cost, along, dial)
        out.append((dist, along))
    (d1, a1), (d2, a2) = out
    settled = a1 >= 0
    assert np.array_equal(settled, a2 >= 0) and settled.sum() > 100
    assert np.array_equal(d1[settled], d2[settled])
    assert (radius < 2**62) == (not settled.all())
