"""What the window's live metric editing needs from the engine: a decoder given as
TOML text (read as data), the search path before unpacking (CrpQuery.steps), and CRP
routes through the route capability with turns and steps."""
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


def test_decoder_text_is_parsed_as_data():
    ws = Workspace(generate_road_network(500, seed=1))
    text = load_decoder("delivery").to_toml()
    assert decoder_for(ws, {"decoder_text": text, "decoder": "car-fastest"}) == load_decoder("delivery")
    with pytest.raises(DecoderError, match="expression"):
        decoder_for(ws, {"decoder_text": 'name = "x"\nkind = "distance"\n'
                                         'expression = "__import__(\'os\').system(\'true\')"\n'})


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


def test_route_capability_with_decoder_text():
    g = generate_road_network(2_000, seed=3)
    ws = Workspace(g)
    from engine.crp.partition.nested import partition_graph
    ws.set_partition(partition_graph(g, seed=0))
    text = load_decoder("car-fastest").to_toml()
    ctx = JobContext()
    metric = capability("customize").run(ws, {"decoder_text": text}, ctx)
    assert metric.name == "car-fastest" and metric.device_bytes is None
    answer = capability("route").run(ws, {"source": 5, "target": 1900, "decoder_text": text}, ctx)
    assert answer.method == "crp" and answer.turns is not None and answer.steps is not None
    assert ws.cell_metric is metric                      # no second customization


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
