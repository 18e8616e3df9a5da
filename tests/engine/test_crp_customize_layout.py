"""The device layout of GPU customization (engine/crp/customize_layout.py): reverse
CSR, entry batches, pair offsets; and a NumPy pull Bellman-Ford on that layout (the
GPU kernels' semantics, overflow included) equals the CPU Dijkstra S_l."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp import customize_layout as layout
from engine.crp.customize import CostOverflow, customize_costs
from engine.crp.local_search import FORBIDDEN
from engine.crp.overlay import Overlay
from engine.generate import generate_road_network

pytest.importorskip("pymetis")


@pytest.fixture(scope="module")
def overlay():
    from engine.crp.partition import partition_graph
    g = generate_road_network(6000, seed=3)
    return Overlay(g, partition_graph(g, seed=0))


def _weights(o, seed=0, forbidden=0.0, scale=1):
    rng = np.random.default_rng(seed)
    arc = o.graph.metric(None).astype(np.int64) * scale
    tw = arc[o.turns.to_arc] + rng.integers(0, 50, o.turns.num_turns) * scale
    tw[rng.random(tw.size) < forbidden] = FORBIDDEN
    return np.minimum(tw, FORBIDDEN).astype(np.int32)


def test_reverse_csr_is_the_forward_graph(overlay):
    for t in overlay.levels:
        rev = layout.reverse_csr(t.vertex_first, t.edge_first, t.edge_to, t.edge_weight)
        cell = layout.cells_of_vertices(t.vertex_first)
        head = np.repeat(np.arange(t.vertex_first[-1]), np.diff(rev.in_first))
        src = np.repeat(np.arange(t.vertex_first[-1]), np.diff(t.edge_first))[rev.in_edge]
        assert np.array_equal(np.sort(rev.in_edge), np.arange(t.edge_to.size))
        assert np.array_equal(t.edge_to[rev.in_edge], head)
        assert np.array_equal(rev.in_from, src - t.vertex_first[cell[head]])
        assert np.array_equal(rev.in_weight, t.edge_weight[rev.in_edge])
        key = head.astype(np.int64) * t.edge_to.size + src      # by head, then source
        assert np.all(np.diff(key) >= 0)


def test_reverse_csr_rejects_an_edge_leaving_its_cell():
    vertex_first = np.array([0, 2, 4])
    with pytest.raises(ValueError, match="leaves its cell"):
        layout.reverse_csr(vertex_first, np.array([0, 1, 1, 1, 1]), np.array([2]), np.array([0]))


def test_entry_batches_cover_every_entry_once(overlay):
    for t in overlay.levels:
        for shared, min_blocks in ((12288, 1), (12288, 10_000), (400, 1)):
            batch = layout.local_batch(t.vertex_first, t.entry_first, t.exit_first, shared,
                                       min_blocks)
            if batch == 0:
                continue
            cells, first = layout.entry_blocks(t.entry_first, t.exit_first, batch)
            ne, nv = np.diff(t.entry_first), np.diff(t.vertex_first)
            nb = np.minimum(ne[cells] - first, batch)
            assert np.all(nb > 0) and np.all(nv[cells] * nb <= shared)
            counts = np.bincount(cells, weights=nb, minlength=t.num_cells)
            active = layout.active_cells(t.entry_first, t.exit_first)
            assert np.array_equal(counts[active], ne[active])
            assert counts.sum() == ne[active].sum()
            ints = layout.shared_bucket(t.vertex_first, t.entry_first, t.exit_first, batch, shared)
            assert int((nv[cells] * nb).max(initial=0)) <= ints <= shared


def test_local_batch_zero_when_a_cell_cannot_fit(overlay):
    t = overlay.levels[-1]
    assert layout.local_batch(t.vertex_first, t.entry_first, t.exit_first, 1) == 0


def _pull_bellman_ford(t, weights):
    """S_l by synchronous pull rounds over the global-variant layout (NumPy twin of the
    kernels) and the overflow flag of the last, quiet round."""
    rev = layout.reverse_csr(t.vertex_first, t.edge_first, t.edge_to, t.edge_weight)
    first = layout.pair_first(t.vertex_first, t.entry_first, t.exit_first)
    ne = np.diff(first) // np.maximum(np.diff(t.vertex_first), 1)
    head = np.repeat(np.arange(t.vertex_first[-1]), np.diff(rev.in_first))
    cell = layout.cells_of_vertices(t.vertex_first)[head]
    reps = ne[cell]
    k = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    e = np.repeat(np.arange(head.size), reps)
    base = first[cell[e]]
    src = base + rev.in_from[e] * reps[e] + k
    dst = base + (head[e] - t.vertex_first[cell[e]]) * reps[e] + k
    cost = weights[rev.in_weight[e]].astype(np.int64)
    pcell = np.repeat(np.arange(t.num_cells), np.diff(first))
    local = np.arange(first[-1]) - first[pcell]
    dist = np.where(local // np.maximum(ne[pcell], 1) == local % np.maximum(ne[pcell], 1),
                    0, FORBIDDEN).astype(np.int64)
    while True:
        ok = (dist[src] != FORBIDDEN) & (cost != FORBIDDEN)
        cand = dist[src] + cost
        overflow = bool(np.any(ok & (cand >= FORBIDDEN)))
        ok &= cand < FORBIDDEN
        new = dist.copy()
        np.minimum.at(new, dst[ok], cand[ok])
        if np.array_equal(new, dist):
            break
        dist = new
    nx, nv = np.diff(t.exit_first), np.diff(t.vertex_first)
    q = np.arange(t.num_shortcuts) - np.repeat(t.clique_first[:-1], ne * nx)
    c = np.repeat(np.arange(t.num_cells), np.diff(t.clique_first))
    r, j = q // nx[c], q % nx[c]
    return dist[first[c] + (nv[c] - nx[c] + j) * ne[c] + r].astype(np.int32), overflow


@pytest.mark.parametrize("forbidden", [0.0, 0.05])
def test_pull_bellman_ford_on_the_layout_equals_dijkstra(overlay, forbidden):
    tw = _weights(overlay, forbidden=forbidden)
    ref = customize_costs(overlay, overlay.graph.metric(None), tw)
    for t in overlay.levels:
        s, overflow = _pull_bellman_ford(t, ref.level_weights(t.level))
        assert not overflow
        assert np.array_equal(s, ref.shortcuts[t.level])


@pytest.mark.parametrize("scale", [4_000_000, 550_000])      # level 0, level 1
def test_overflow_is_judged_like_dijkstra(overlay, scale):
    """Level by level on the layout's own results: the same flag as the Dijkstra's, the
    same costs until a level overflows."""
    from engine.crp.local_search import customize_cells
    weights = _weights(overlay, scale=scale)
    for t in overlay.levels:
        s, overflow = _pull_bellman_ford(t, weights)
        ref = np.empty(t.num_shortcuts, dtype=np.int32)
        assert overflow == customize_cells(t.vertex_first, t.entry_first, t.exit_first,
                                           t.edge_first, t.edge_to, t.edge_weight, weights,
                                           t.clique_first, ref)
        if overflow:
            return
        assert np.array_equal(s, ref)
        weights = s
    pytest.fail("no level overflowed")


def test_dirty_groups_cover_every_edge(overlay):
    """Every edge u -> v: u marks the bit v watches (or v always pulls); above level 0
    the groups are the subcells, so almost every vertex skips while settled."""
    for t in overlay.levels:
        rev = layout.reverse_csr(t.vertex_first, t.edge_first, t.edge_to, t.edge_weight)
        watch, mark = layout.dirty_groups(t.vertex_first, rev)
        head = np.repeat(np.arange(t.vertex_first[-1]), np.diff(rev.in_first))
        cell = layout.cells_of_vertices(t.vertex_first)
        src = t.vertex_first[cell[head]] + rev.in_from
        assert np.all((watch[head] == -1) | (mark[src] == watch[head]))
        assert watch.max(initial=-1) < layout.DIRTY_BITS
        if t.level > 0:
            with_in = np.diff(rev.in_first) > 0
            assert np.mean(watch[with_in] >= 0) > 0.9
            # one group per subcell: a cell's groups number its subcells (or fewer)
            subcells = overlay.partition.cell_of[t.level - 1]
            arcs = t.vertex_arc[with_in]
            groups = watch[with_in]
            cells = cell[np.flatnonzero(with_in)]
            sub_of = subcells[overlay.graph.tail[arcs]]
            for c in np.unique(cells)[:50]:
                sel = (cells == c) & (groups >= 0)
                pairs = set(zip(groups[sel].tolist(), sub_of[sel].tolist()))
                assert len(pairs) == len({g for g, _ in pairs}) == len({s for _, s in pairs})


def test_dirty_groups_fall_back_where_edges_do_not_group():
    """A cell whose edges do not form subcell cliques always pulls: 1 feeds vertices
    that watch different groups (2 watches 0's, 3 watches 1's)."""
    vertex_first = np.array([0, 4])
    edge_first, edge_to = np.array([0, 1, 3, 3, 3]), np.array([2, 2, 3])   # 0->2, 1->2, 1->3
    rev = layout.reverse_csr(vertex_first, edge_first, edge_to, np.zeros(3, np.int64))
    watch, mark = layout.dirty_groups(vertex_first, rev)
    assert np.all(watch == -1) and np.all(mark == -1)
