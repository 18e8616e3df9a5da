"""The Lagrangian bound (engine.csp.bounds.lagrangian): exact with it on small graphs against
brute force, a valid bound (lower <= optimum <= upper), integral weights that fit, and
the policy that starts a hard query over with it."""
from __future__ import annotations

import pytest

from engine.csp import CspQuery
from engine.csp.bounds.lagrangian import WEIGHT_LIMIT, weights_for
from engine.generate.network import generate_road_network
from tests.engine.test_csp import brute_force_cases, halfway_budgets
from tests.strategies import random_two_metric_graph


@pytest.mark.parametrize("seed", range(40))
def test_small_graphs_with_the_bound_equal_brute_force(seed):
    """Random small graphs with zero-length and zero-cost arcs, every budget from below
    the least cost to the most costly path: the bound from the start and a restart
    after one label give the brute-force optimum."""
    g = random_two_metric_graph(seed)
    queries = [CspQuery(g, lagrangian="always"), CspQuery(g, lagrangian_after=1)]
    for s, t, budget, within in brute_force_cases(g, queries[0], seed):
        for q in queries:
            r = q.solve(s, t, budget)
            assert r.length == min(l for l, _ in within) and r.cost <= budget
            assert r.length == int(g.metrics["distance"][r.path.arcs].sum())
            assert r.cost == int(g.metrics["travel_time"][r.path.arcs].sum())


@pytest.mark.parametrize("lam", [0.0, 1e-7, 0.013, 0.4, 1.0, 2.5, 77.0, 1e6, 1e12])
@pytest.mark.parametrize("max_length,max_cost", [(36_946, 92_366), (1, 1), (2**31 - 2, 3),
                                                 (5, 2**31 - 2)])
def test_weights_fit_and_follow_lambda(lam, max_length, max_cost):
    p, q = weights_for(lam, max_length, max_cost)
    assert q >= 1 and p >= 0
    assert weights_for(lam, WEIGHT_LIMIT, max_cost) == (0, 1)   # no room: the length bound
    assert q * max_length + p * max_cost <= WEIGHT_LIMIT
    if lam == 0:
        assert p == 0
    if max_length < 2**20 and max_cost < 2**20 and 1e-3 < lam < 1e3:
        assert abs(p / q - lam) <= 2e-2 * lam      # p or q near 2^31 / the max weights


@pytest.fixture(scope="module")
def gen():
    g = generate_road_network(20_000, seed=5)
    return g, CspQuery(g, lagrangian="never"), CspQuery(g, lagrangian="always")


def _labelled(g, q, count):
    """(s, t, budget) of ``count`` random queries that need labeling (budget halfway
    between the least cost and the shortest path's cost)."""
    out = []
    for s, t, budget, _ in halfway_budgets(g, q, 11, 400):
        if q.solve(s, t, budget).answered_by.startswith("labeling"):
            out.append((s, t, budget))
        if len(out) == count:
            return out
    raise AssertionError("too few queries needed labeling")


def test_bound_is_valid_and_never_changes_the_answer(gen):
    g, never, always = gen
    fewer = 0
    for s, t, budget in _labelled(g, never, 12):
        a, b = never.solve(s, t, budget), always.solve(s, t, budget)
        assert a.length == b.length and b.cost <= budget
        lag = b.lagrangian
        assert lag is not None and a.lagrangian is None
        assert lag["lower"] <= b.length <= lag["upper"]
        assert lag["steps"] >= 1 and lag["labels_before_restart"] == 0
        assert b.stats["pruned_lagrangian"] <= b.stats["pruned_length_bound"]
        fewer += b.stats["created"] < a.stats["created"]
    assert fewer >= 6           # the bound prunes: most queries label less


def test_a_hard_query_starts_over_with_the_bound(gen):
    """``lagrangian_after`` labels into a labeling, the query starts again with the
    bound: the same answer; its counts include the abandoned run. Below the limit, and
    for Pareto sets, nothing changes."""
    g, never, _ = gen
    s, t, budget = max(_labelled(g, never, 12), key=lambda x: never.solve(*x).stats["created"])
    plain = never.solve(s, t, budget)
    limit = plain.stats["created"] // 4
    r = CspQuery(g, lagrangian_after=limit).solve(s, t, budget)
    assert r.length == plain.length and r.cost <= budget
    assert r.lagrangian is not None and r.lagrangian["labels_before_restart"] == limit
    assert r.stats["created"] > limit
    late = CspQuery(g, lagrangian_after=plain.stats["created"] + 1).solve(s, t, budget)
    assert late.lagrangian is None and late.stats == plain.stats
    p = CspQuery(g, lagrangian_after=1).solve(s, t, budget, pareto=True)
    assert p.lagrangian is None and p.pareto[0].length == plain.length


def test_policy_is_checked(gen):
    with pytest.raises(ValueError, match="lagrangian must be one of"):
        CspQuery(gen[0], lagrangian="sometimes")
