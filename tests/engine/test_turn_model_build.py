"""The turn model's expanded graph is built from counts (engine.model.expanded:
_expanded_edges, O(E), no sort): it must equal, array for array, the graph built the
straightforward way (every edge's tail, then a stable argsort by tail), on networks
with banned turns, with free crossings (hubs), and under decoders that forbid arcs
and turns."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.core.graph import csr_offsets
from engine.crp.metric.costs import FORBIDDEN, decode
from engine.crp.metric.decoder import Decoder
from engine.generate.network import generate_road_network
from engine.model.defaults import default_decoder
from engine.model.expanded import Layout, turn_model


def sorted_by_tail(model, decoders):
    """The expanded edges as the first implementation built them: (first_out, head,
    weights) from concatenated edge lists and a stable argsort by tail."""
    g, turns, lay = model.graph, model.turns, model.layout
    costs = {k: decode(g, turns, d) for k, d in decoders.items()}
    arc_ok = np.ones(g.num_arcs, dtype=bool)
    turn_ok = np.ones(turns.num_turns, dtype=bool)
    for c in costs.values():
        arc_ok &= np.asarray(c.arc_cost) != FORBIDDEN
        turn_ok &= np.asarray(c.turn_weight) != FORBIDDEN
    turn_ok &= arc_ok[turns.from_arc] & arc_ok[turns.to_arc]
    turn_ok &= ~model.free_node[g.head[turns.from_arc]]
    arcs, hubs = np.flatnonzero(arc_ok), np.flatnonzero(model.free_node)
    an = lay.arc_node
    tail = np.concatenate([an[turns.from_arc[turn_ok]], an[arcs], lay.start_node[g.tail[arcs]],
                           lay.end_node[hubs]])
    head = np.concatenate([an[turns.to_arc[turn_ok]], lay.end_node[g.head[arcs]], an[arcs],
                           lay.start_node[hubs]])
    order = np.argsort(tail, kind="stable")
    weights = {k: np.concatenate([np.asarray(c.turn_weight)[turn_ok], np.zeros(arcs.size, np.int32),
                                  np.asarray(c.arc_cost)[arcs], np.zeros(hubs.size, np.int32)])[order]
               for k, c in costs.items()}
    return csr_offsets(tail[order], lay.size), head[order], weights, arc_ok


def check_same(g, decoders, expect_forbidden_arcs=False):
    model = turn_model(g, decoders)
    first_out, head, weights, arc_ok = sorted_by_tail(model, decoders)
    assert (not arc_ok.all()) == expect_forbidden_arcs
    x = model.expanded
    np.testing.assert_array_equal(x.first_out, first_out)
    np.testing.assert_array_equal(x.head, head)
    assert x.first_out.dtype == np.int32 and x.head.dtype == np.int32
    assert set(x.metrics) == set(weights)
    for k, w in weights.items():
        np.testing.assert_array_equal(x.metrics[k], w)
        assert x.metrics[k].dtype == np.int32
    assert x.num_nodes == Layout.of(g).size
    return model


@pytest.mark.parametrize("seed", [1, 5, 9])
def test_default_decoders_with_banned_turns(seed):
    g = generate_road_network(3000, seed=seed)
    assert g.turn_restrictions is not None and len(g.turn_restrictions)
    check_same(g, {m: default_decoder(g, m) for m in g.metric_names})


@pytest.mark.parametrize("banned", [True, False])
def test_free_crossings_are_hubs(banned):
    g = generate_road_network(2500, seed=3)
    if not banned:
        g = dataclasses.replace(g, turn_restrictions=None)
    model = check_same(g, {"travel_time": Decoder(name="free", kind="metric", metric="travel_time")})
    assert model.free_node.any() and model.free_node.all() != banned


def test_forbidden_arcs_and_turns():
    g = generate_road_network(2500, seed=4)
    from engine.core.graph import ROAD_CLASSES
    forbid = ROAD_CLASSES[int(g.arc_attrs["road_class"][0])]       # some arcs, not all
    d = Decoder(name="no", kind="metric", metric="distance", forbid=(forbid,),
                turns=(("u_turn", "forbidden"), ("left", 30.0)))
    check_same(g, {"distance": d}, expect_forbidden_arcs=True)


def test_the_smallest_network():
    g = generate_road_network(50, seed=2)
    check_same(g, {m: default_decoder(g, m) for m in g.metric_names})
