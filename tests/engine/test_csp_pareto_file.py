"""Bi-criteria hierarchy files (.rlb, engine.csp.hierarchy.file): a saved hierarchy loads
with the same arrays and answers; a damaged, tampered or foreign file is refused with
its name and the reason (engine.io.pareto_hierarchy_file); fuzzed files are
refused or answer exactly (the command line builds, writes and reuses one:
tests/app/test_cli_csp.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from engine.csp import CspQuery
from engine.csp.hierarchy.file import load_pareto_hierarchy, save_pareto_hierarchy
from engine.csp.hierarchy.build import pareto_hierarchy_for
from engine.generate.network import generate_road_network
from engine.io import LoadError
from engine.workspace import Workspace
from tests.engine.test_csp import halfway_budgets
from tests.engine.test_fuzz_formats import mutate_file, read, write

ARRAYS = ("level", "arc_tail", "arc_head", "arc_length", "arc_cost", "arc_child", "arcs")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    g = generate_road_network(3_000, seed=5)
    h = pareto_hierarchy_for(g, "distance", "travel_time")
    path = save_pareto_hierarchy(h, tmp_path_factory.mktemp("rlb") / "g.rlb")
    plain = CspQuery(g)
    cases = [(s, t, b, plain.solve(s, t, b).length) for s, t, b, _ in halfway_budgets(g, plain, 3, 8)]
    return g, h, path, cases


def test_a_saved_hierarchy_loads_with_its_arrays_and_answers(saved):
    g, h, path, cases = saved
    loaded = load_pareto_hierarchy(path, g, "distance", "travel_time")
    for name in ARRAYS:
        assert np.array_equal(getattr(h, name), getattr(loaded, name)), name
    assert (loaded.num_levels, loaded.metrics, loaded.metric_hashes, loaded.params) == \
        (h.num_levels, h.metrics, h.metric_hashes, h.params)
    q = CspQuery(g, hierarchy=loaded)
    for s, t, b, length in cases:
        assert q.solve(s, t, b).length == length


def _drop_a_search_arc(a, m):
    """An arc the search needs, left out: nothing with its ends dominates it."""
    listed = a["arcs"]
    key = a["arc_tail"][listed].astype(np.int64) * 10**7 + a["arc_head"][listed]
    keys, counts = np.unique(key, return_counts=True)
    alone = listed[counts[np.searchsorted(keys, key)] == 1]
    a["arcs"] = listed[listed != alone[len(alone) // 2]]


def _same_level_arc(a, m):
    t, h = a["arc_tail"][0], a["arc_head"][0]
    a["level"] = a["level"].copy()
    a["level"][h] = a["level"][t] = 0


def _set(name, index, value):
    def change(a, m):
        a[name] = a[name].copy()
        a[name][index] = value
    return change


CASES = {
    "dtype": (lambda a, m: a.__setitem__("arc_tail", a["arc_tail"].astype(np.int64)), "dtype"),
    "shape": (lambda a, m: a.__setitem__("arc_head", a["arc_head"][:-1]), "shape"),
    "missing": (lambda a, m: a.pop("arcs"), "arcs is missing"),
    "head out of range": (_set("arc_head", 5, 10**6), "out of range"),
    "negative cost": (_set("arc_cost", 7, -1), "out of range"),
    "child later": (_set("arc_child", (-1, 0), 10**6), "earlier arc"),
    "child ends": (lambda a, m: _set("arc_child", (-1, 1), a["arc_child"][-1, 0])(a, m),
                   "outer ends|earlier arc"),
    "shortcut length": (lambda a, m: _set("arc_length", -1, a["arc_length"][-1] + 1)(a, m),
                        "length is not the sum"),
    "shortcut cost": (lambda a, m: _set("arc_cost", -1, a["arc_cost"][-1] - 1)(a, m),
                      "cost is not the sum|out of range"),
    "original with children": (_set("arc_child", (0, 0), 0), "has children"),
    "same level": (_same_level_arc, "same contracted level"),
    "level range": (_set("level", 3, 10**4), "out of range"),
    "arcs unsorted": (lambda a, m: a.__setitem__("arcs", a["arcs"][::-1].copy()), "sorted"),
    "search arc dropped": (_drop_a_search_arc, "left out of the search arcs"),
    "version": (lambda a, m: m.__setitem__("version", 7), "version"),
    "three metrics": (lambda a, m: m.__setitem__("metrics", ["a", "b", "c"]), "two names"),
    "other weights": (lambda a, m: m.__setitem__("metric_hashes", ["0" * 16, "0" * 16]),
                      "other arcs"),
    "other metrics": (lambda a, m: m.__setitem__("metrics", ["travel_time", "distance"]),
                      "not 'distance' within"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_file_is_refused(tmp_path, saved, case):
    g, _, path, _ = saved
    mutate, words = CASES[case]
    arrays, meta = read(path)
    mutate(arrays, meta)
    target = tmp_path / "bad.rlb"
    write(target, arrays, meta)
    with pytest.raises(LoadError, match=words) as e:
        load_pareto_hierarchy(target, g, "distance", "travel_time")
    assert str(target) in str(e.value)


def test_another_graph_truncation_and_other_metrics_are_refused(tmp_path, saved):
    g, _, path, _ = saved
    with pytest.raises(LoadError, match="belongs to a graph of"):
        load_pareto_hierarchy(path, generate_road_network(2_000, seed=5))
    with pytest.raises(LoadError, match="not 'travel_time' within 'distance'"):
        load_pareto_hierarchy(path, g, "travel_time", "distance")
    other = generate_road_network(3_000, seed=5)
    other.metrics["travel_time"] = other.metrics["travel_time"] + 1
    with pytest.raises(LoadError, match="other arcs, lengths or costs"):
        load_pareto_hierarchy(path, other)
    cut = tmp_path / "cut.rlb"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(LoadError, match="not a readable"):
        load_pareto_hierarchy(cut, g)
    with pytest.raises(ValueError, match="two named metrics"):
        from engine.csp.hierarchy.build import build_pareto_hierarchy
        save_pareto_hierarchy(build_pareto_hierarchy(g, g.metrics["distance"],
                                                     g.metrics["travel_time"]), tmp_path / "x.rlb")


def test_the_workspace_uses_a_loaded_hierarchy_and_drops_queries_on_a_replaced_one(saved):
    g, h, path, cases = saved
    import dataclasses               # without turn information the road graph is searched
    ws = Workspace(dataclasses.replace(g, turn_restrictions=None, arc_attrs={}))
    assert ws.csp_hierarchy("distance", "travel_time", build=False) is None
    loaded = ws.load_csp_hierarchy(path)
    assert ws.csp_hierarchy("distance", "travel_time") is loaded          # not built again
    first = ws.csp_query("distance", "travel_time", hierarchy=True)
    assert first.layered.hierarchy is loaded
    s, t, b, length = cases[0]
    assert first.solve(s, t, b).length == length
    ws.set_csp_hierarchy(h)
    assert ws.csp_query("distance", "travel_time", hierarchy=True) is not first
    with pytest.raises(ValueError, match="other metrics"):
        CspQuery(g, "travel_time", "distance", hierarchy=h)


FUZZ = settings(max_examples=int(os.environ.get("ROUTELAB_FUZZ_EXAMPLES", 300)) // 3,
                deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.data())
def test_fuzzed_files_are_refused_or_exact(tmp_path, saved, data):
    g, _, path, cases = saved
    target = tmp_path / "fuzzed.rlb"
    mutate_file(path, target, data, list(ARRAYS), ["num_nodes", "num_levels", "num_original_arcs"])
    try:
        h = load_pareto_hierarchy(target, g)
    except LoadError as e:
        event(f"refused: {e.reason.split(' holds ')[0][:40]}")
        return
    event("loaded")
    q = CspQuery(g, hierarchy=h)
    for s, t, b, length in cases:
        r = q.solve(s, t, b)
        assert r.length == length and r.cost <= b


def test_a_hierarchy_file_in_a_missing_folder_fails_before_the_build(tmp_path):
    from engine.capabilities.csp import run
    g = generate_road_network(1_000, seed=3)
    ws = Workspace(g)
    params = {"source": 3, "target": 500, "budget": 10**9,
              "hierarchy_file": str(tmp_path / "no such folder" / "g.rlb")}
    with pytest.raises(FileNotFoundError, match="no such folder"):
        run(ws, params, None)
    assert ws.csp_hierarchy("distance", "travel_time", build=False) is None   # nothing built
    params["hierarchy_file"] = str(tmp_path)
    with pytest.raises(LoadError, match="is a directory"):
        run(ws, params, None)
