"""The overlay's local graphs (engine.crp.partition.overlay_build, linear time) equal the
sort-based construction they replace (a lexsort of the local vertices by cell, group and
arc, a stable argsort of the edges by source), array for array, on a generated network,
random nested partitions (poor cells: many entries, exits and subcell shortcuts) and a
graph with cells in pieces and a cell with no entries; indices are int32."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.partition.nested import Partition, partition_graph
from engine.crp.partition.overlay import Overlay, matrix_bytes
from engine.generate.network import generate_road_network
from tests.engine.test_crp_microcode import islands  # noqa: F401  (a fixture)


def _reference_level(o, level):
    """The local graph of ``level`` built by sorting, as Overlay built it before."""
    g, t, cells = o.graph, o.levels[level], o.cell_of[level]
    if level == 0:
        inner = np.arange(g.num_arcs, dtype=np.int64)
    else:
        inner = o.boundary_arc[o.arc_level[o.boundary_arc] > level - 1].astype(np.int64)
    exits = t.exit_arc.astype(np.int64)
    arcs = np.concatenate([inner, exits])
    cell = np.concatenate([cells[g.head[inner]], cells[g.tail[exits]]])
    group = np.concatenate([np.where(o.arc_level[inner] > level, 0, 1), np.full(exits.size, 2)])
    order = np.lexsort((arcs, group, cell))
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    inner_vertex = np.full(g.num_arcs, -1, dtype=np.int64)
    inner_vertex[inner] = position[:inner.size]
    exit_vertex = np.full(g.num_arcs, -1, dtype=np.int64)
    exit_vertex[exits] = position[inner.size:]
    if level == 0:
        src, dst = o.turns.from_arc, o.turns.to_arc
        weight = np.arange(o.turns.num_turns)
    else:
        src, dst, weight = _subcell_shortcuts(o.levels[level - 1])
    same = cells[g.head[dst]] == cells[g.head[src]]
    source = inner_vertex[src]
    head = np.where(same, inner_vertex[dst], exit_vertex[dst])
    by_source = np.argsort(source, kind="stable")
    first = np.zeros(order.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=order.size), out=first[1:])
    return arcs[order], first, head[by_source], weight[by_source]


def _subcell_shortcuts(t):
    """(entry arc, exit arc, index in S) of every shortcut of topology ``t``."""
    ne, nx = np.diff(t.entry_first).astype(np.int64), np.diff(t.exit_first).astype(np.int64)
    cell = np.repeat(np.arange(t.num_cells), ne * nx)
    k = np.arange(int((ne * nx).sum())) - np.repeat(t.clique_first[:-1], ne * nx)
    r, j = k // nx[cell], k % nx[cell]
    return (t.entry_arc[t.entry_first[cell] + r], t.exit_arc[t.exit_first[cell] + j],
            np.arange(k.size))


def _check(o):
    for t in o.levels:
        vertex_arc, edge_first, edge_to, edge_weight = _reference_level(o, t.level)
        assert np.array_equal(t.vertex_arc, vertex_arc), t.level
        assert np.array_equal(t.edge_first, edge_first), t.level
        assert np.array_equal(t.edge_to, edge_to), t.level
        assert np.array_equal(t.edge_weight, edge_weight), t.level
        assert t.vertex_first[-1] == vertex_arc.size
        for name in ("vertex_first", "vertex_arc", "edge_first", "edge_to", "edge_weight"):
            assert getattr(t, name).dtype == np.int32, (t.level, name)


def _random_partition(graph, sizes, seed):
    rank = np.random.default_rng(seed).permutation(graph.num_nodes)
    return Partition(tuple(sizes), np.ones(len(sizes), dtype=bool),
                     np.stack([rank >> k for k in sizes]).astype(np.int32))


@pytest.fixture(scope="module")
def network():
    return generate_road_network(4000, seed=11)


def test_generated_network_equals_the_sorted_construction(network):
    _check(Overlay(network, partition_graph(network, seed=0)))


@pytest.mark.parametrize("sizes,seed", [((3, 6), 0), ((2, 5, 8), 1), ((4, 7, 9), 2)])
def test_random_partitions_equal_the_sorted_construction(network, sizes, seed):
    o = Overlay(network, _random_partition(network, sizes, seed))
    _check(o)
    assert matrix_bytes(network, o.partition)[1] == sum(t.num_shortcuts for t in o.levels)


def test_cells_in_pieces_and_without_entries(islands):  # noqa: F811
    _check(islands)
