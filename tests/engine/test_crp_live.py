"""What the window's live metric editing needs from the engine: a decoder given as a
Decoder (used as is, never parsed again), the search path before unpacking
(CrpQuery.steps), CRP routes through the route capability with turns and steps on the
current customization, and a customization that answers the route with it."""
from __future__ import annotations

import numpy as np
import pytest

from engine.capabilities import get as capability
from engine.capabilities.common import decoder_for
from engine.crp import load_decoder
from engine.crp.metric.decoder import DecoderError
from engine.generate.network import generate_road_network
from engine.core.jobs import JobContext
from engine.core.paths import Unreachable
from engine.workspace import Workspace
from tests.engine.test_crp import crp_setup

pytest.importorskip("pymetis")


@pytest.fixture(scope="module")
def crp():
    g = generate_road_network(3_000, seed=2)
    return g, *crp_setup(g, "car-fastest")


def test_a_decoder_object_is_used_as_is(monkeypatch):
    ws = Workspace(generate_road_network(500, seed=1))
    delivery = load_decoder("delivery")
    import engine.crp.metric.decoder as decoder_module
    monkeypatch.setattr(decoder_module, "parse_decoder", _refuse)
    assert decoder_for(ws, {"decoder": delivery}) is delivery


def _refuse(*args, **kwargs):
    raise AssertionError("a Decoder given to a job is parsed again")


def test_decoder_files_are_read_as_data(tmp_path):
    ws = Workspace(generate_road_network(500, seed=1))
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nkind = "distance"\n'
                   'expression = "__import__(\'os\').system(\'true\')"\n')
    with pytest.raises(DecoderError, match="expression"):
        decoder_for(ws, {"decoder": str(bad)})


def test_steps_follow_the_path(crp):
    g, overlay, metric, query = crp
    assert query.steps() is None
    rng = np.random.default_rng(4)
    shortcut_steps = 0
    for s, t in rng.integers(0, g.num_nodes, (40, 2)):
        try:
            path = query.route(int(s), int(t))
        except Unreachable:
            assert query.steps() is None
            continue
        steps = query.steps()
        if path.num_arcs == 0:
            assert steps is None
            continue
        arcs, levels = steps
        position = {int(a): i for i, a in enumerate(path.arcs)}
        where = [position[int(a)] for a in arcs]          # every step ends on a path arc
        assert where == sorted(where) and where[0] == 0 and where[-1] == path.num_arcs - 1
        assert levels[0] == -1 and levels.max() < overlay.num_levels
        # a turn step moves one arc on; a shortcut step may move several
        gaps = np.diff(where)
        assert np.all(gaps[levels[1:] < 0] == 1)
        shortcut_steps += int((levels >= 0).sum())
    assert shortcut_steps > 0
    query.reset()
    assert query.steps() is None


def test_route_capability_on_the_current_metric():
    g = generate_road_network(2_000, seed=3)
    ws = Workspace(g)
    from engine.crp.partition.nested import partition_graph
    ws.set_partition(partition_graph(g, seed=0))
    ctx = JobContext()
    with pytest.raises(ValueError, match="no CRP customization"):
        capability("route").run(ws, {"source": 5, "target": 1900, "decoder": "current"}, ctx)
    decoder = load_decoder("car-fastest")
    answer = capability("customize").run(ws, {"decoder": decoder}, ctx)
    metric = answer.metric
    assert metric.name == "car-fastest" and metric.device_bytes is None and answer.route is None
    route = capability("route").run(ws, {"source": 5, "target": 1900, "decoder": "current"}, ctx)
    assert route.method == "crp" and route.turns is not None and route.steps is not None
    assert ws.cell_metric is metric                      # no second customization
    by_name = capability("route").run(ws, {"source": 5, "target": 1900,
                                           "decoder": "car-fastest"}, ctx)
    assert ws.cell_metric is metric and by_name.path.distance == route.path.distance


def test_a_customization_answers_the_route_asked_with_it():
    g = generate_road_network(2_000, seed=3)
    ws = Workspace(g)
    from engine.crp.partition.nested import partition_graph
    ws.set_partition(partition_graph(g, seed=0))
    ctx = JobContext()
    decoder = load_decoder("car-fastest")
    answer = capability("customize").run(ws, {"decoder": decoder, "source": 5, "target": 1900},
                                         ctx)
    assert ws.cell_metric is answer.metric and answer.route is not None
    alone = capability("route").run(ws, {"source": 5, "target": 1900, "decoder": "current"}, ctx)
    assert answer.route.path.distance == alone.path.distance
    assert np.array_equal(answer.route.path.arcs, alone.path.arcs)
    assert answer.route_error == ""


def test_a_query_switched_to_another_metric_equals_a_new_one(crp):
    g, overlay, metric, query = crp
    from dataclasses import replace
    from engine.crp import CrpQuery
    from engine.crp.customization.customize import customize
    d = load_decoder("car-fastest")
    other = customize(overlay, replace(d, forbid=("motorway", "trunk"), turns=(("left", 60),)))
    query.set_metric(other)
    fresh = CrpQuery(overlay, other)
    rng = np.random.default_rng(8)
    for s, t in rng.integers(0, g.num_nodes, (60, 2)):
        try:
            a = query.route(int(s), int(t))
        except Unreachable:
            with pytest.raises(Unreachable):
                fresh.route(int(s), int(t))
            continue
        b = fresh.route(int(s), int(t))
        assert a.distance == b.distance and np.array_equal(a.arcs, b.arcs)
    query.set_metric(metric)
    with pytest.raises(ValueError, match="another overlay"):
        query.set_metric(crp_setup(g, "car-fastest")[1])


def test_one_customizer_per_overlay_and_a_host_only_metric(crp):
    """The Overlay holds topology only (nothing is cached on it); a Customizer keeps the
    metric-independent state for every metric; a CellMetric is host arrays, each field
    declared, and gives a cell's entry x exit matrix."""
    import dataclasses
    from engine.crp import Customizer
    g, overlay, metric, _ = crp
    before = set(vars(overlay))
    customizer = Customizer(overlay)
    first = customizer.customize(load_decoder("car-fastest"))
    microcode = customizer.microcode
    second = customizer.customize(load_decoder("delivery"))
    assert customizer.microcode is microcode and set(vars(overlay)) == before
    assert all(np.array_equal(a, b) for a, b in zip(first.shortcuts, metric.shortcuts))
    assert set(vars(second)) == {f.name for f in dataclasses.fields(second)}
    for level, topo in enumerate(overlay.levels):
        cell = int(np.argmax(np.diff(topo.clique_first)))
        ne, nx, _ = topo.counts(cell)
        m = second.cell_matrix(level, cell)
        assert m.shape == (ne, nx) and isinstance(m, np.ndarray)
        s = second.shortcuts[level][topo.clique_first[cell]:topo.clique_first[cell + 1]]
        assert np.array_equal(m.ravel(), s)
