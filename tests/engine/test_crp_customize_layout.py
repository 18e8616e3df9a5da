"""The device layout of GPU customization (engine/crp/customization/layout.py): reverse
CSR, entry batches, pair offsets; and a NumPy pull Bellman-Ford on that layout (the
GPU kernels' semantics, overflow included) equals the CPU Dijkstra S_l."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.customization import layout
from engine.crp.customization.customize import CostOverflow, customize_costs
from engine.crp.metric import FORBIDDEN
from engine.crp.partition.overlay import Overlay
from engine.generate.network import generate_road_network

pytest.importorskip("pymetis")


@pytest.fixture(scope="module")
def overlay():
    from engine.crp.partition.nested import partition_graph
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
    from engine.crp.customization.cpu import customize_cells
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


def _minplus_rounds(o, level, lay, below):
    """S_l by synchronous min-plus rounds on the min-plus layout (the NumPy twin of the
    bf_minplus kernel) and the overflow flag judged on the final rows."""
    top, sub = o.levels[level], o.levels[level - 1]
    out, overflow = np.empty(top.num_shortcuts, dtype=np.int32), False
    for c in range(top.num_cells):
        ne, nx, nv = top.counts(c)
        if ne == 0 or nx == 0:
            continue
        rows = np.full((nv, ne), FORBIDDEN, dtype=np.int64)
        rows[lay.entry_row[top.entry_first[c]:top.entry_first[c + 1]], np.arange(ne)] = 0
        slots = []
        for s in range(lay.slot_first[c], lay.slot_first[c + 1]):
            a = lay.slot_cell[s]
            nin, nout, _ = sub.counts(a)
            w = below[sub.clique_first[a]:sub.clique_first[a + 1]].astype(np.int64)
            dst = lay.exit_row[sub.exit_first[a]:sub.exit_first[a + 1]]
            slots.append((lay.slot_row[s], w.reshape(nin, nout), dst))
        while True:
            new, overflow_now = rows.copy(), False
            for row0, w, dst in slots:
                d = rows[row0:row0 + w.shape[0]]                  # [nin][ne]
                ok = (d[:, :, None] < FORBIDDEN) & (w[:, None, :] < FORBIDDEN)
                total = d[:, :, None] + w[:, None, :]
                overflow_now |= bool(np.any(ok & (total >= FORBIDDEN)))
                best = np.where(ok & (total < FORBIDDEN), total, FORBIDDEN).min(axis=0)
                new[dst] = np.minimum(new[dst], best.T)
            if np.array_equal(new, rows):
                break
            rows = new
        overflow |= overflow_now
        out[top.clique_first[c]:top.clique_first[c + 1]] = rows[nv - nx:].T.ravel()
    return out, overflow


def test_minplus_layout_rows_are_the_cells_vertices(overlay):
    for t in overlay.levels[1:]:
        lay = layout.minplus_layout(overlay, t.level)
        sub = overlay.levels[t.level - 1]
        assert lay.slot_first[-1] == lay.slot_cell.size and lay.max_slots > 0
        for c in range(t.num_cells):
            ne, nx, nv = t.counts(c)
            slots = range(lay.slot_first[c], lay.slot_first[c + 1])
            sizes = [sub.counts(lay.slot_cell[s])[0] for s in slots]
            assert [lay.slot_row[s] for s in slots] == list(np.cumsum([0] + sizes[:-1]))
            assert sum(sizes) == nv - nx
            # every row but the cell's entries has exactly one writer (one column)
            xs = np.concatenate([np.arange(sub.exit_first[lay.slot_cell[s]],
                                           sub.exit_first[lay.slot_cell[s] + 1]) for s in slots]
                                or [np.zeros(0, int)])
            entries = lay.entry_row[t.entry_first[c]:t.entry_first[c + 1]]
            written = lay.exit_row[xs]
            assert np.unique(written).size == written.size
            assert np.array_equal(np.sort(np.concatenate([written, entries])), np.arange(nv))
            assert np.all(lay.exit_slot[xs][written >= nv - nx] == -1)


@pytest.mark.parametrize("forbidden", [0.0, 0.05])
def test_minplus_rounds_on_the_layout_equal_dijkstra(overlay, forbidden):
    tw = _weights(overlay, seed=1, forbidden=forbidden)
    ref = customize_costs(overlay, overlay.graph.metric(None), tw)
    for t in overlay.levels[1:]:
        lay = layout.minplus_layout(overlay, t.level)
        s, overflow = _minplus_rounds(overlay, t.level, lay, ref.shortcuts[t.level - 1])
        assert not overflow
        assert np.array_equal(s, ref.shortcuts[t.level])


def test_minplus_overflow_is_judged_like_dijkstra(overlay):
    from engine.crp.customization.cpu import customize_cells
    ref = customize_costs(overlay, overlay.graph.metric(None), _weights(overlay, scale=100))
    t = overlay.levels[1]
    below = ref.shortcuts[0].astype(np.int64) * 6000          # finite entries near 2^31
    below = np.where(ref.shortcuts[0] == FORBIDDEN, FORBIDDEN,
                     np.minimum(below, FORBIDDEN - 1)).astype(np.int32)
    expected = np.empty(t.num_shortcuts, dtype=np.int32)
    flag = customize_cells(t.vertex_first, t.entry_first, t.exit_first, t.edge_first,
                           t.edge_to, t.edge_weight, below, t.clique_first, expected)
    assert flag
    _, overflow = _minplus_rounds(overlay, 1, layout.minplus_layout(overlay, 1), below)
    assert overflow


def test_minplus_batch_fits_and_pads(overlay):
    for t in overlay.levels[1:]:
        for shared, min_blocks in ((12288, 1), (56000, 264), (600, 1)):
            batch, stride = layout.minplus_batch(t.vertex_first, t.entry_first, t.exit_first,
                                                 shared, min_blocks, per_slot_ints=50)
            if batch == 0:
                continue
            nv = int(np.diff(t.vertex_first).max())
            assert stride >= batch and stride % 4 == 0 and nv * stride + 50 <= shared
            assert stride == 4 or stride % 8 == 0


class _HostBackend:
    """Enough of a GPU backend to build the min-plus variant's launch on the host."""
    xp = np

    def kernel(self, module, name):
        from types import SimpleNamespace
        return SimpleNamespace(max_threads_per_block=1024)

    def shared_memory_per_block(self):
        return 227 * 1024

    def multiprocessors(self):
        return 1, 228 * 1024           # one SM: every level has blocks for small ones


@pytest.mark.parametrize("options", [{}, {"min_blocks": 100_000}, {"minplus_shared_ints": 3000}])
def test_minplus_level_launch_fits(overlay, options):
    """The min-plus variant's block shape on every level: its rows, slot tables and the
    rows' changed bits fit the shared memory it asks for, and its arrays have the
    kernel's parameter types."""
    from engine.crp.customization.gpu import DoesNotFit, MinplusLevel
    with pytest.raises(DoesNotFit):
        MinplusLevel(_HostBackend(), overlay.levels[0], None, options, overlay)
    for t in overlay.levels[1:]:
        lv = MinplusLevel(_HostBackend(), t, None, options, overlay)
        nv = np.diff(t.vertex_first)[lv.args[0]]             # each block's cell
        assert lv.shared_bytes <= 227 * 1024 and lv.stride >= lv.batch >= 1
        words = (int(np.diff(t.vertex_first).max()) + 31) // 32     # the rows' bits, twice
        assert lv.shared_bytes == 4 * (int(nv.max()) * lv.stride + 7 * lv.max_slots + 1
                                       + 2 * words)
        assert lv.threads in (64, 128, 256) and lv.num_blocks > 0
        kt = "k4" if lv.stride % 8 else "k8"
        assert lv.kernel_name in (f"bf_minplus_{kt}_u4", f"bf_minplus_{kt}_u8",
                                  f"bf_minplus_{kt}")
        types = [a.dtype for a in lv.args]
        assert types[5] == types[11] == np.int64 and types[13] == types[15] == np.int8
        assert all(d == np.int32 for i, d in enumerate(types) if i not in (5, 11, 13, 15))


def test_minplus_shape_small_and_big_cells(overlay):
    """Cells whose rows fit a small block at 8 entries run small blocks (at most
    SMALL_BLOCK_INTS, 64-256 threads, rows 4 at a time) where there are blocks for
    several waves of the GPU, else the widest block; a bigger cell gets the widest
    block, 256 threads, rows 8 at a time; options override the shape level by level."""
    from engine.crp.customization.gpu import MinplusLevel
    t, below = overlay.levels[1], overlay.levels[0]
    lay = layout.minplus_layout(overlay, 1)
    small = layout.minplus_shape(t.vertex_first, t.entry_first, t.exit_first, lay,
                                 below.exit_first, 100, 24000, 1, gpu=(1, 1))
    assert small.shared_ints <= layout.SMALL_BLOCK_INTS and small.unroll == 4
    assert small.threads in (64, 128, 256)
    rows = int(np.diff(t.vertex_first).max())
    big = layout.minplus_shape(t.vertex_first, t.entry_first, t.exit_first, lay,
                               below.exit_first, layout.SMALL_BLOCK_INTS - 8 * rows + 1, 24000, 1,
                               gpu=(1, 1))
    assert big == layout.MinplusShape(24000, 256, 8)
    few = layout.minplus_shape(t.vertex_first, t.entry_first, t.exit_first, lay,
                               below.exit_first, 100, 24000, 1,
                               gpu=(10_000, 228 * 1024))
    assert few == layout.MinplusShape(24000, 256, 1)       # too few blocks for small ones
    lv = MinplusLevel(_HostBackend(), t, None, {"minplus_threads": {1: 96, 2: 32},
                                                "minplus_unroll": {1: 4, 2: 8}}, overlay)
    assert lv.threads == 96 and lv.kernel_name.endswith("_u4")


def test_microcode_level_takes_its_packing_options(overlay):
    """Level 0's slots per block and block size come from the options (crp_shapes.py
    tunes them): fewer slots a block pack the same cells into more blocks."""
    from engine.core.backend import cpu_backend
    from engine.crp.customization import microcode_gpu
    from engine.crp.customization.gpu import MicrocodeLevel
    t = overlay.levels[0]
    default = MicrocodeLevel(cpu_backend(), t, None, {}, overlay)
    small = MicrocodeLevel(cpu_backend(), t, None,
                           {"microcode_slots": 256, "microcode_threads": 64}, overlay)
    assert default.threads == microcode_gpu.THREADS and small.threads == 64
    assert small.device.num_blocks > default.device.num_blocks
    assert small.device.shared_bytes < default.device.shared_bytes   # a cell a block at least
