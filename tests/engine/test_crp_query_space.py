"""The query's arc numbering (engine.crp.query.query_space) built in linear time on a
nested partition equals the lexicographic order it stands for (level crossed, then
the cells around the head from the top level down, then id), and a partition whose
cells are not numbered in their parents' order still gets that order (the general
sort); the turn CSRs group each arc's turns in the original order."""
from types import SimpleNamespace

import numpy as np
import pytest

from engine.crp.partition.overlay import Overlay
from engine.crp.query import query_space as qs
from engine.crp.query.flat import flatten


@pytest.fixture(scope="module")
def overlay():
    from engine.generate.network import generate_road_network
    from tests.gpu.crp_partitions import partition_for
    g = generate_road_network(20_000, seed=5)
    return Overlay(g, partition_for(g, "gen20k-s5"))


def _lexicographic(overlay):
    g, cells = overlay.graph, overlay.cell_of
    keys = [np.arange(g.num_arcs)] + [cells[l, g.head] for l in range(cells.shape[0])] + \
           [-overlay.arc_level.astype(np.int64)]
    return np.lexsort(keys)


def test_linear_arc_order_equals_the_lexicographic_one(overlay):
    assert qs._nested(overlay.cell_of)
    assert np.array_equal(qs._arc_order(overlay), _lexicographic(overlay))


def test_cells_out_of_their_parents_order_take_the_general_sort(overlay):
    cells = overlay.cell_of.copy()
    top = cells.shape[0] - 1
    cells[top] = cells[top].max() - cells[top]          # parents numbered backwards
    fake = SimpleNamespace(graph=overlay.graph, cell_of=cells, arc_level=overlay.arc_level,
                           num_levels=overlay.num_levels)
    assert not qs._nested(cells)
    assert np.array_equal(qs._arc_order(fake), _lexicographic(fake))


def test_turn_lists_group_each_arc_s_turns_in_their_own_order(overlay):
    space = qs.query_space(overlay, flatten(overlay))
    turns = overlay.turns
    from_q = space.q_of_arc[turns.from_arc]
    assert np.array_equal(space.turn_order, np.argsort(from_q, kind="stable"))
    assert np.array_equal(space.from_q, from_q[space.turn_order])
    assert np.all(np.diff(space.from_q) >= 0) and np.all(np.diff(space.to_q[space.turn_in]) >= 0)
    assert np.array_equal(space.turn_in, np.argsort(space.to_q, kind="stable"))
    assert space.first_turn[-1] == space.first_turn_in[-1] == turns.num_turns
    assert np.array_equal(np.diff(space.first_turn), np.bincount(space.from_q, minlength=overlay.graph.num_arcs))
