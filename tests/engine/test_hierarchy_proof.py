"""The witness check of hierarchy files (issue #35, part 2): a ``.rlh`` or ``.rlb`` that
is consistent in every other way but misses shortcuts is refused on load, naming the
file; every hierarchy contraction builds passes. On random graphs the CH check refuses
exactly when some PHAST distance is wrong (a dropped shortcut may have had a detour as
short: then nothing is wrong, and the file passes)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.sparse.csgraph import dijkstra

from engine.ch import Hierarchy, contract, phast
from engine.ch.proof import prove
from engine.core.backend import cpu_backend
from engine.csp.hierarchy.build import build_pareto_hierarchy, pareto_hierarchy_for
from engine.csp.hierarchy.file import load_pareto_hierarchy, save_pareto_hierarchy
from engine.csp.hierarchy.layered import LayeredGraph
from engine.csp.hierarchy.proof import prove_pareto
from engine.csp.reference import reference_pareto
from engine.generate.network import generate_road_network
from engine.io import LoadError
from engine.routing.reference import scipy_matrix
from tests.hierarchy_damage import droppable, edited, pareto_droppable, pareto_edited
from tests.strategies import random_graphs, random_two_metric_graph

CPU = cpu_backend()


def wrong_distances(h) -> int:
    """How many (source, target) pairs PHAST gets wrong on ``h`` (its graph attached)."""
    graph = h.graph
    truth = dijkstra(scipy_matrix(graph, h.metric))
    truth = np.where(np.isinf(truth), -1, truth).astype(np.int64)
    got = phast.PhastQuery(h, CPU).distances(range(graph.num_nodes))
    return int(np.count_nonzero(got != truth))


# ------------------------------------------------------------ contraction hierarchies
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(2, 45), max_arcs=160, weights=st.integers(0, 30)), st.integers(2, 60),
       st.sampled_from([0.2, 0.5, 1.0]))
def test_every_contracted_hierarchy_is_proved(g, K, C):
    h = contract(g, K=K, C=C, backend=CPU)
    p = prove(h)
    assert p.pairs == p.direct + p.two_arcs + p.searched


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(nodes=(4, 40), max_arcs=160, weights=st.integers(0, 20)), st.integers(2, 10),
       st.data())
def test_refused_exactly_when_a_distance_is_wrong(g, K, data):
    h = contract(g, K=K, C=0.5, backend=CPU)
    candidates = droppable(h)
    if candidates.size == 0:
        return
    count = data.draw(st.integers(1, min(candidates.size, 12)))
    drop = data.draw(st.lists(st.sampled_from(list(candidates)), min_size=count,
                              max_size=count, unique=True))
    damaged = edited(h, drop)
    assert refused(prove, damaged, "a shortcut is missing") == (wrong_distances(damaged) > 0)


def refused(check, h, says: str) -> bool:
    """Whether ``check(h)`` refuses ``h``, with a message that ``says`` so."""
    try:
        check(h)
    except LoadError as e:
        assert says in str(e)
        return True
    return False


def refusal(h) -> str:
    with pytest.raises(LoadError) as e:
        prove(h, "x.rlh")
    return str(e.value)


@pytest.fixture(scope="module")
def generated():
    g = generate_road_network(3_000, seed=8)
    return g, contract(g, "distance", K=64, backend=CPU)


@pytest.mark.parametrize("count", [1, 50, 600])
def test_dropped_shortcuts_are_refused_on_load_naming_the_file(tmp_path, generated, count):
    g, h = generated
    rng = np.random.default_rng(count)
    damaged = edited(h, rng.choice(droppable(h), count, replace=False))
    if count == 1 and wrong_distances(damaged) == 0:     # the one shortcut had a detour
        pytest.skip("the dropped shortcut was not needed")
    path = damaged.save(tmp_path / "damaged.rlh")
    with pytest.raises(LoadError) as e:
        Hierarchy.load(path, g)
    assert e.value.path == str(path) and "a shortcut is missing" in e.value.reason
    assert str(path) in str(e.value) and "too long or unreachable" in str(e.value)


def test_a_valid_file_loads_with_its_proof(tmp_path, generated):
    g, h = generated
    loaded = Hierarchy.load(h.save(tmp_path / "g.rlh"), g)
    assert loaded.proof.pairs > 1000 and loaded.proof.direct > loaded.proof.searched
    assert loaded.proof.pairs == prove(h).pairs and "pairs" in loaded.proof.text()


@pytest.mark.parametrize("K", [2, 64, 10_000])
def test_with_a_core_and_without(generated, K):
    """K=2: contraction runs until (almost) nothing is left; 10,000: no levels at all,
    the whole graph is the core and there is nothing to prove."""
    g = generated[0]
    h = contract(g, "travel_time", K=K, backend=CPU)
    p = prove(h)
    assert (p.pairs == 0) == (h.num_levels == 0)
    if K == 2:
        assert refusal(edited(h, droppable(h)))


def test_threads_give_the_same_answer(generated):
    h = generated[1]
    one, many = prove(h, threads=1), prove(h, threads=4)
    assert (one.pairs, one.direct, one.two_arcs, one.searched) == \
        (many.pairs, many.direct, many.two_arcs, many.searched)
    damaged = edited(h, droppable(h)[::7])
    assert "a shortcut is missing" in refusal(damaged)


def test_turn_aware_hierarchies():
    from engine.model.hierarchy import contract_turn_aware
    from engine.workspace import Workspace
    g = generate_road_network(800, seed=3)
    model = Workspace(g, CPU).turn_model(("distance",))
    h = contract_turn_aware(model, "distance", backend=CPU)
    assert h.turn_aware and prove(h).pairs > 0
    rng = np.random.default_rng(1)
    for count in (1, 30):
        damaged = edited(h, rng.choice(droppable(h), count, replace=False))
        wrong = wrong_distances(damaged) > 0
        try:
            prove(damaged)
            assert not wrong
        except LoadError:
            assert wrong


@pytest.mark.parametrize("weight, refused", [(0, True), (10**9, False)])
def test_an_arc_inside_one_level_needs_a_way_around(generated, weight, refused):
    """An original arc between two nodes of one contracted level is in no up/down list
    (the validator lets it be): the query never takes it, so it needs an up-down path
    as short. Contraction never makes one; a crafted file can."""
    h = generated[1]
    level = h.node_level
    a, b = (int(v) for v in np.flatnonzero(level == 0)[:2])
    crafted = edited(h, extra=(a, b, weight))
    if refused:
        assert f"({a} -> {b}) lies inside one contracted level" in refusal(crafted)
    else:
        assert prove(crafted).searched >= 1


# ------------------------------------------------------------ bi-criteria hierarchies
def missed_pareto_points(g, h) -> int:
    """How many Pareto-optimal (length, cost) points of the graph's node pairs no path of
    the layered graph (what the labeling searches) matches or dominates."""
    lg = LayeredGraph.of(h)
    length, cost = g.metrics["distance"], g.metrics["travel_time"]
    missed = 0
    for s in range(g.num_nodes):
        for t in range(g.num_nodes):
            truth = reference_pareto(g.first_out, g.head, length, cost, s, t)
            got = reference_pareto(lg.first_out, lg.head, lg.length, lg.cost, s, lg.target(t))
            missed += sum(not any(a <= x and b <= y for a, b in got) for x, y in truth)
    return missed


@pytest.mark.parametrize("seed", range(30))
def test_bi_criteria_refused_exactly_when_a_pareto_point_is_missed(seed):
    g = random_two_metric_graph(seed, n=10, m=30)
    h = build_pareto_hierarchy(g, g.metrics["distance"], g.metrics["travel_time"],
                               core_fraction=0.0)
    assert prove_pareto(h).pairs >= 0
    candidates = pareto_droppable(h)
    rng = np.random.default_rng(seed)
    for count in sorted({1, 3, candidates.size}):
        if count == 0 or count > candidates.size:
            continue
        damaged = pareto_edited(h, rng.choice(candidates, count, replace=False))
        assert refused(prove_pareto, damaged, "as short and as cheap") == \
            (missed_pareto_points(g, damaged) > 0)


@pytest.fixture(scope="module")
def pareto_generated():
    g = generate_road_network(3_000, seed=6)
    return g, pareto_hierarchy_for(g, "distance", "travel_time")


def test_a_valid_rlb_loads_with_its_proof(tmp_path, pareto_generated):
    g, h = pareto_generated
    loaded = load_pareto_hierarchy(save_pareto_hierarchy(h, tmp_path / "g.rlb"), g)
    p = loaded.proof
    assert p.pairs > 1000 and p.pairs == p.direct + p.two_arcs + p.searched
    one, many = prove_pareto(h, threads=1), prove_pareto(h, threads=4)
    assert (one.direct, one.two_arcs, one.searched) == (many.direct, many.two_arcs, many.searched)


@pytest.mark.parametrize("count", [1, 40, 800])
def test_an_rlb_with_shortcuts_dropped_is_refused_naming_the_file(tmp_path, pareto_generated,
                                                                  count):
    g, h = pareto_generated
    rng = np.random.default_rng(count)
    damaged = pareto_edited(h, rng.choice(pareto_droppable(h), count, replace=False))
    path = save_pareto_hierarchy(damaged, tmp_path / "damaged.rlb")
    try:
        load_pareto_hierarchy(path, g)
    except LoadError as e:
        assert e.path == str(path) and "a shortcut is missing" in e.reason
        return
    assert count == 1, "dozens of shortcuts dropped and nothing missed?"


# ------------------------------------------------------------ bounded work
def test_a_file_with_far_more_pairs_than_contraction_makes_is_refused():
    from engine.ch.proof import effort
    assert effort("x.rlh", 10**6, 1000, 10**5) > 0
    with pytest.raises(LoadError, match="far more than contraction makes"):
        effort("x.rlh", 10**10, 1000, 10**5)


def test_searches_that_pass_their_budget_give_up(monkeypatch, generated, pareto_generated):
    """A crafted file could make each search wander over the whole graph: the searches
    have a budget of labels, and a check that passes it refuses the file."""
    import engine.ch.proof as ch_proof
    import engine.csp.hierarchy.proof as csp_proof
    for module in (ch_proof, csp_proof):
        monkeypatch.setattr(module, "effort", lambda path, pairs, n, arcs: 0)
    with pytest.raises(LoadError, match="gave up near node"):
        prove(generated[1], "x.rlh")
    with pytest.raises(LoadError, match="gave up near node"):
        prove_pareto(pareto_generated[1], "x.rlb")
