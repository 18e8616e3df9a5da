"""RoadGraph construction: validation, CSR layout, backward graph, id lookup."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.graph import GraphError, RoadGraph, path_cost_bound, project_lonlat


def test_csr_is_sorted_by_tail_and_keeps_arc_data_aligned():
    g = RoadGraph.from_arcs(3, [2, 0, 1, 0], [0, 1, 2, 2], {"w": [1, 2, 3, 4]},
                            arc_attrs={"tag": np.array([10, 20, 30, 40])})
    assert g.first_out.tolist() == [0, 2, 3, 4]
    assert g.head.tolist() == [1, 2, 2, 0]
    assert g.metric("w").tolist() == [2, 4, 3, 1]
    assert g.arc_attrs["tag"].tolist() == [20, 40, 30, 10]
    assert g.tail.tolist() == [0, 0, 1, 2]


def test_backward_graph_lists_entering_arcs():
    g = RoadGraph.from_arcs(3, [0, 0, 1], [1, 2, 2], {"w": [1, 1, 1]})
    b = g.backward
    assert b.first_in.tolist() == [0, 0, 1, 3]
    assert sorted(b.in_arc[b.first_in[2]:b.first_in[3]].tolist()) == [1, 2]
    assert np.array_equal(g.head[b.in_arc], np.repeat(np.arange(3), np.diff(b.first_in)))
    assert np.array_equal(g.tail[b.in_arc], b.tail)


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_nodes=2, tail=[0], head=[2], metrics={"w": [1]}), "out of range"),
    (dict(num_nodes=2, tail=[-1], head=[1], metrics={"w": [1]}), "out of range"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={"w": [-1]}), "negative"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={"w": [1.5]}), "not integral"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={"w": [1, 2]}), "values for 1 arcs"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={}), "at least one metric"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={"w": [1]}, node_id=[5, 5]), "not unique"),
    (dict(num_nodes=2, tail=[0], head=[1], metrics={"w": [2**31]}), r"above 2\^31-1"),
])
def test_invalid_graphs_are_rejected(kwargs, message):
    with pytest.raises(GraphError, match=message):
        RoadGraph.from_arcs(**kwargs)


def test_path_sum_overflow_is_checked():
    with pytest.raises(GraphError, match="overflow"):
        path_cost_bound(2**33, np.array([2**31 - 1]))
    assert path_cost_bound(3, np.array([5, 7])) == 14


def test_distance_dtype_follows_the_bound():
    small = RoadGraph.from_arcs(3, [0, 1], [1, 2], {"w": [5, 7]})
    assert small.distance_dtype() == np.int32
    big = RoadGraph.from_arcs(3, [0, 1], [1, 2], {"w": [2**31 - 1, 1]})
    assert big.distance_dtype() == np.int64


def test_turn_restrictions_follow_the_arc_order_and_must_meet():
    g = RoadGraph.from_arcs(3, [1, 0], [2, 1], {"w": [1, 1]}, banned_turns=([1], [0]))
    assert g.tail[g.turn_restrictions.from_arc[0]] == 0
    assert g.head[g.turn_restrictions.to_arc[0]] == 2
    with pytest.raises(GraphError, match="do not meet"):
        RoadGraph.from_arcs(3, [1, 0], [2, 1], {"w": [1, 1]}, banned_turns=([0], [1]))


def test_index_of_speaks_file_ids():
    g = RoadGraph.from_arcs(3, [0], [1], {"w": [1]}, node_id=[30, 10, 20])
    assert g.index_of([10, 20, 30]).tolist() == [1, 2, 0]
    with pytest.raises(KeyError, match="unknown node id 99"):
        g.index_of(99)


def test_projection_keeps_distances():
    xy = project_lonlat(np.array([8.0, 8.01]), np.array([47.0, 47.0]))
    assert np.hypot(*(xy[1] - xy[0])) == pytest.approx(758.5, rel=2e-3)
