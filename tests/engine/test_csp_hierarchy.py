"""The bi-criteria hierarchy (engine.csp.hierarchy.build) and the labeling on it
(engine.csp.hierarchy.layered): every Pareto-optimal path survives with its length and cost,
shortcuts unpack to paths of the graph, and cost-budgeted answers and Pareto sets
equal those on the graph itself and the references."""
from __future__ import annotations

import numpy as np
import pytest

from engine.csp import CspQuery
from engine.csp.hierarchy.layered import LayeredGraph
from engine.csp.hierarchy.build import build_pareto_hierarchy
from engine.generate.network import generate_road_network
from tests.engine.test_csp import _check_sets, brute_force_cases, check_edge_cases, pareto_of
from tests.strategies import random_two_metric_graph


def hierarchy_of(g, length="distance", cost="travel_time", **options):
    return build_pareto_hierarchy(g, g.metrics[length], g.metrics[cost], **options)


@pytest.mark.parametrize("seed", range(40))
def test_small_graphs_equal_brute_force(seed):
    """Zero weights, parallel arcs and loops; a core of one node, so nearly every path
    runs over shortcuts."""
    g = random_two_metric_graph(seed)
    h = hierarchy_of(g, core_fraction=0.0)
    assert h.core.sum() >= 1 and h.num_levels >= 1
    q = CspQuery(g, hierarchy=h)
    for s, t, budget, within in brute_force_cases(g, q, seed):
        r = q.solve(s, t, budget)
        assert r.length == min(l for l, _ in within) and r.cost <= budget
        assert r.cost == int(g.metrics["travel_time"][r.path.arcs].sum())
        assert r.path.nodes[0] == s and r.path.nodes[-1] == t
        assert np.array_equal(g.head[r.path.arcs[:-1]], g.tail[r.path.arcs[1:]])
        p = q.solve(s, t, budget, pareto=True)
        assert [(x.length, x.cost) for x in p.pareto] == pareto_of(within)
        for x in p.pareto:
            assert x.length == int(g.metrics["distance"][x.arcs].sum())
            assert x.cost == int(g.metrics["travel_time"][x.arcs].sum())


@pytest.fixture(scope="module")
def gen():
    g = generate_road_network(6_000, seed=4)
    return g, hierarchy_of(g)


def test_shortcuts_unpack_to_paths_with_their_weights(gen):
    g, h = gen
    L, C = g.metrics["distance"], g.metrics["travel_time"]
    assert h.num_shortcuts > 0 and 0 < h.core.sum() <= 0.05 * g.num_nodes
    rng = np.random.default_rng(0)
    for a in rng.choice(np.flatnonzero(np.arange(h.arc_tail.size) >= h.num_original_arcs), 200):
        arcs = h.unpack([a])
        assert g.tail[arcs[0]] == h.arc_tail[a] and g.head[arcs[-1]] == h.arc_head[a]
        assert np.array_equal(g.head[arcs[:-1]], g.tail[arcs[1:]])
        assert (L[arcs].sum(), C[arcs].sum()) == (h.arc_length[a], h.arc_cost[a])
    # the search's arcs go up from a contracted node, or run between core nodes
    lower, upper = h.level[h.arc_tail[h.arcs]], h.level[h.arc_head[h.arcs]]
    assert np.all((lower != upper) | ((lower == h.num_levels) & (upper == h.num_levels)))


def test_answers_and_pareto_sets_equal_those_on_the_graph(gen):
    from tests.engine.test_csp import halfway_budgets
    g, h = gen
    plain, q = CspQuery(g), CspQuery(g, hierarchy=h)
    labelled = 0
    for s, t, budget, _ in halfway_budgets(g, plain, 7, 30):
        a, b = plain.solve(s, t, budget), q.solve(s, t, budget)
        assert a.length == b.length and b.cost <= budget
        labelled += b.answered_by.startswith("labeling")
        pa, pb = plain.solve(s, t, budget, pareto=True), q.solve(s, t, budget, pareto=True)
        assert [(x.length, x.cost) for x in pa.pareto] == [(x.length, x.cost) for x in pb.pareto]
        for x in pb.pareto:
            assert x.cost == int(g.metrics["travel_time"][x.arcs].sum())
    assert labelled >= 5


def test_edge_cases_on_the_hierarchy(gen):
    g, h = gen
    check_edge_cases(g, CspQuery(g, hierarchy=h))


def test_a_hierarchy_of_another_graph_is_refused(gen):
    _, h = gen
    other = generate_road_network(2_000, seed=1)
    with pytest.raises(ValueError, match="another graph"):
        CspQuery(other, hierarchy=h)


def test_vine_style_runs_on_the_graph_itself(gen):
    g, h = gen
    assert CspQuery(g, bounds=False, hierarchy=h).layered is None


def test_down_sets_reach_only_the_target(gen):
    """A down copy outside the target's down set has no way to it over down arcs."""
    g, h = gen
    lg = LayeredGraph.of(h)
    t = int(np.flatnonzero(~h.core)[10])
    down = set(lg.down_set(t).tolist())
    assert t in down and not any(h.core[list(down)])
    for x in down - {t}:          # each reaches t descending
        assert h.level[x] > h.level[t]


def test_rome99_query_sets_equal_the_reference(rome_csp):
    g, length, sets = rome_csp
    h = hierarchy_of(g, length, "synthetic")
    assert _check_sets(g, length, "synthetic", sets, hierarchy=h) == 60
