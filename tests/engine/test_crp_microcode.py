"""Microinstructions of the lowest CRP level (engine.crp.customization.microcode): the CPU runner
equals the Dijkstra reference (customize_cells) bit for bit; the instruction stream is
well formed (slots in bounds, layers independent, every slot read means the edge the
instruction expects: reuse never clobbers a live slot); the packed block layout of the
GPU kernel, emulated here, gives the same costs."""
from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.cpu import customize_cells
from engine.crp.metric import FORBIDDEN
from engine.crp.customization.microcode import compile_microcode, run_microcode_cpu
from engine.crp.customization.microcode_gpu import ASSIGN, NO_SLOT, pack_blocks
from engine.crp.partition.overlay import Overlay
from engine.crp.partition.nested import Partition
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from tests.strategies import random_turn_weights


def _reference(o, weights, level=0):
    t = o.levels[level]
    s = np.empty(t.num_shortcuts, dtype=np.int32)
    overflow = customize_cells(t.vertex_first, t.entry_first, t.exit_first, t.edge_first,
                               t.edge_to, t.edge_weight, weights, t.clique_first, s)
    return s, overflow


@pytest.fixture(scope="module")
def gen():
    from engine.crp.partition.nested import partition_graph
    g = generate_road_network(5000, seed=3)
    o = Overlay(g, partition_graph(g, seed=0))
    assert o.turns.banned > 0
    return o, compile_microcode(o)


@pytest.fixture(scope="module")
def islands():
    """A 24 x 24 grid (some streets one-way) in 4 x 4 blocks of cells, two of them
    split in pieces, and a ring road alone in its cell: no entries, no exits."""
    rng = np.random.default_rng(7)
    side, ring = 24, 12
    ids = np.arange(side * side).reshape(side, side)
    pairs = [(ids[:, :-1], ids[:, 1:]), (ids[:-1, :], ids[1:, :])]
    tail = np.concatenate([np.concatenate([a.ravel(), b.ravel()]) for a, b in pairs])
    head = np.concatenate([np.concatenate([b.ravel(), a.ravel()]) for a, b in pairs])
    keep = rng.random(tail.size) > 0.15
    r = side * side + np.arange(ring)
    tail = np.concatenate([tail[keep], r, np.roll(r, 1)])
    head = np.concatenate([head[keep], np.roll(r, 1), r])
    n = side * side + ring
    lon = np.concatenate([(ids % side).ravel() * 1e-3, 0.1 + np.cos(np.arange(ring)) * 1e-3])
    lat = np.concatenate([(ids // side).ravel() * 1e-3, np.sin(np.arange(ring)) * 1e-3])
    w = rng.integers(1, 500, tail.size)
    g = RoadGraph.from_arcs(n, tail, head, {"distance": w, "travel_time": w}, lon=lon, lat=lat)
    cell = ((ids // side // 4) * (side // 4) + ids % side // 4).ravel()
    cell[cell == 5] = np.where(np.arange(side * side)[cell == 5] % 2, 5, 7)   # cells in pieces
    cell = np.concatenate([cell, np.full(ring, cell.max() + 1)])
    p = Partition((2,), np.array([True]), cell[None, :].astype(np.int32))
    return Overlay(g, p)


@pytest.mark.parametrize("forbidden", [0.0, 0.05, 0.3])
def test_equals_customize_cells(gen, forbidden):
    o, mc = gen
    for seed in range(2):
        tw = random_turn_weights(o, seed, forbidden)
        expected, overflow = _reference(o, tw)
        assert not overflow
        assert np.array_equal(run_microcode_cpu(mc, tw), expected)


def test_level_one_on_level_zero_costs(gen):
    """The compiler is level-agnostic: level 1 from S_0 equals its Dijkstra too."""
    o, mc = gen
    s0 = run_microcode_cpu(mc, random_turn_weights(o, 5, 0.05))
    assert np.array_equal(run_microcode_cpu(compile_microcode(o, 1), s0), _reference(o, s0, 1)[0])


def test_cells_without_entries_or_exits(islands):
    o = islands
    t = o.levels[0]
    ne, nx = np.diff(t.entry_first), np.diff(t.exit_first)
    assert (ne == 0).any() and (nx == 0).any() == (ne == 0).any()
    mc = compile_microcode(o)
    assert (mc.num_slots[ne * nx == 0] == 0).all()
    for forbidden in (0.0, 0.2):
        tw = random_turn_weights(o, 1, forbidden)
        assert np.array_equal(run_microcode_cpu(mc, tw), _reference(o, tw)[0])
    _check_meanings(o, mc)


def test_overflow_detected(gen):
    o, mc = gen
    tw = random_turn_weights(o, scale=2_000_000)
    assert _reference(o, tw)[1]
    with pytest.raises(CostOverflow, match="level-0"):
        run_microcode_cpu(mc, tw)


def test_deterministic(gen):
    o, mc = gen
    again = compile_microcode(o)
    for name in ("instr_first", "instr_a", "instr_b", "instr_c", "instr_assign",
                 "instr_layer", "num_slots", "edge_slot", "collect_slot"):
        assert np.array_equal(getattr(mc, name), getattr(again, name)), name


def test_slots_in_bounds_and_layers_independent(gen):
    o, mc = gen
    cell = np.repeat(np.arange(mc.num_cells), np.diff(mc.instr_first))
    bound = mc.num_slots[cell]
    for x in (mc.instr_a, mc.instr_b, mc.instr_c):
        assert ((x >= 0) & (x < bound)).all()
    assert (np.diff(mc.instr_layer)[np.diff(cell) == 0] >= 0).all()      # sorted by layer
    assert (mc.instr_layer >= 1).all() and (mc.instr_layer <= mc.num_layers[cell]).all()
    top = int(mc.num_slots.max()) + 1
    key = (cell.astype(np.int64) * 1000 + mc.instr_layer) * top
    reads = np.union1d(key + mc.instr_a, key + mc.instr_b)
    writes, count = np.unique(key + mc.instr_c, return_counts=True)
    assert np.intersect1d(reads, writes).size == 0        # nothing read is written alongside
    assigned = np.unique((key + mc.instr_c)[mc.instr_assign])
    assert (count[np.searchsorted(writes, assigned)] == 1).all()   # an assignment writes alone
    reused = mc.instr_assign & (mc.instr_c < _initial_slot_count(mc)[cell])
    assert reused.any()                                   # dead edge slots do get reused
    _check_meanings(o, mc)


def _initial_slot_count(mc):
    count = np.zeros(mc.num_cells, dtype=np.int64)
    cell = np.repeat(np.arange(mc.num_cells), np.diff(mc.edge_first))
    has = mc.edge_slot >= 0
    np.maximum.at(count, cell[has], mc.edge_slot[has] + 1)
    return count


def _check_meanings(o, mc):
    """Give every slot the local edge (u, w) it stands for and follow the stream."""
    t = o.levels[mc.level]
    src = np.repeat(np.arange(t.vertex_first[-1]), np.diff(t.edge_first))
    bad = _meanings(mc.instr_first, mc.instr_a, mc.instr_b, mc.instr_c, mc.instr_assign,
                    mc.num_slots, mc.edge_first, mc.edge_slot, src, t.edge_to, t.vertex_first,
                    t.entry_first, t.exit_first, mc.clique_first, mc.collect_slot)
    assert bad == -1, f"instruction or matrix entry {bad} reads a slot meaning another edge"


@nb.njit(cache=True)
def _meanings(first, ia, ib, ic, assign, num_slots, edge_first, edge_slot, src, dst,
              vertex_first, entry_first, exit_first, clique_first, collect):
    for cell in range(first.size - 1):
        v0 = vertex_first[cell]
        mu = np.full(num_slots[cell], -1, dtype=np.int64)
        mw = np.full(num_slots[cell], -1, dtype=np.int64)
        for e in range(edge_first[cell], edge_first[cell + 1]):
            s = edge_slot[e]
            if s >= 0:
                if mu[s] >= 0 and (mu[s] != src[e] - v0 or mw[s] != dst[e] - v0):
                    return e
                mu[s], mw[s] = src[e] - v0, dst[e] - v0
        for i in range(first[cell], first[cell + 1]):
            a, b, c = ia[i], ib[i], ic[i]
            if mu[a] < 0 or mu[b] < 0 or mw[a] != mu[b] or mu[a] == mw[b]:
                return i
            if assign[i]:
                mu[c], mw[c] = mu[a], mw[b]
            elif mu[c] != mu[a] or mw[c] != mw[b]:
                return i
        nv = vertex_first[cell + 1] - v0
        nx = exit_first[cell + 1] - exit_first[cell]
        ne = entry_first[cell + 1] - entry_first[cell]
        for k in range(clique_first[cell], clique_first[cell + 1]):
            s = collect[k]
            r, j = (k - clique_first[cell]) // nx, (k - clique_first[cell]) % nx
            if s >= 0 and (mu[s] != r or mw[s] != nv - nx + j or r >= ne):
                return first[-1] + k
    return -1


@pytest.mark.parametrize("slots_per_block", [1, 700, 6144])
def test_packed_blocks_emulated(gen, slots_per_block):
    """The kernel's program, layer by layer with every read before any write (as the
    barrier makes it), on the packed layout."""
    o, mc = gen
    p = pack_blocks(mc, slots_per_block)
    assert p.block_cell_first[-1] == mc.num_cells and p.layer_first[-1] == mc.num_instructions
    tw = random_turn_weights(o, 3, 0.05)
    out = np.empty(mc.num_shortcuts, dtype=np.int32)
    for g in range(p.num_blocks):
        m = np.full(p.block_slots[g] + 1, FORBIDDEN, dtype=np.int64)     # + a sink for NO_SLOT
        e = slice(p.block_edge_first[g], p.block_edge_first[g + 1])
        s = np.where(p.edge_slot[e] == NO_SLOT, p.block_slots[g], p.edge_slot[e])
        np.minimum.at(m, s, tw[p.edge_weight[e]])
        for k in range(p.block_layer_first[g], p.block_layer_first[g + 1]):
            i = slice(p.layer_first[k], p.layer_first[k + 1])
            va, vb, c = m[p.instr_a[i]], m[p.instr_b[i]], p.instr_c[i].astype(np.int64)
            total = np.where((va == FORBIDDEN) | (vb == FORBIDDEN), FORBIDDEN, va + vb)
            assert (total <= FORBIDDEN).all()
            assign = (c & ASSIGN) > 0
            m[c[assign] & ~ASSIGN] = total[assign]
            np.minimum.at(m, c[~assign], total[~assign])
        o_ = slice(p.block_out_first[g], p.block_out_first[g + 1])
        out[o_] = np.where(p.collect_slot[o_] == NO_SLOT, FORBIDDEN,
                           m[np.minimum(p.collect_slot[o_], p.block_slots[g])])
    assert np.array_equal(out, _reference(o, tw)[0])


def test_smallest_dtypes(gen):
    """Cell-local ids take 8 bytes per instruction where every cell has at most
    SMALL_SLOTS slots and 255 layers; beyond, the wider dtypes."""
    from engine.crp.customization.microcode import SMALL_SLOTS, slot_dtypes
    o, mc = gen
    assert (mc.instr_a.dtype, mc.instr_assign.dtype, mc.instr_layer.dtype) == \
        (np.uint16, np.bool_, np.uint8)
    assert mc.edge_slot.dtype == mc.collect_slot.dtype == np.int16
    assert mc.edge_weight is o.levels[0].edge_weight          # the overlay's, not a copy
    per_instr = sum(getattr(mc, k).itemsize for k in
                    ("instr_a", "instr_b", "instr_c", "instr_assign", "instr_layer"))
    assert per_instr == 8
    assert mc.nbytes == per_instr * mc.num_instructions + 2 * (mc.edge_slot.size +
                                                               mc.collect_slot.size) + \
        8 * 2 * (mc.num_cells + 1) + 4 * 2 * mc.num_cells
    assert slot_dtypes(SMALL_SLOTS, 255) == (np.uint16, np.int16, np.uint8)
    assert slot_dtypes(SMALL_SLOTS + 1, 256) == (np.int32, np.int32, np.uint16)
    assert slot_dtypes(1, 0x10000)[2] == np.int32


@pytest.mark.parametrize("threads", [1, 3])
def test_threads_do_not_change_the_stream(gen, threads):
    o, mc = gen
    again = compile_microcode(o, threads=threads)
    for name in ("instr_first", "instr_a", "instr_b", "instr_c", "instr_assign",
                 "instr_layer", "num_layers", "num_slots", "edge_slot", "collect_slot"):
        assert np.array_equal(getattr(mc, name), getattr(again, name)), name


def test_an_edge_into_an_entry_is_refused(gen):
    """A local graph that breaks contraction's assumptions is refused with the cell named
    (checked before any vertex is looked at, so a bad index never reaches the scratch)."""
    from dataclasses import replace
    from types import SimpleNamespace
    from engine.crp.customization.microcode import MicrocodeError
    o, _ = gen
    t = o.levels[0]
    ne, nx = np.diff(t.entry_first), np.diff(t.exit_first)
    cell = int(np.flatnonzero((ne > 0) & (nx > 0) & (np.diff(t.vertex_first) > ne + nx))[3])
    v0 = int(t.vertex_first[cell])
    edge_to = t.edge_to.copy()
    inner = v0 + int(ne[cell])                       # the cell's first inner vertex ...
    assert t.edge_first[inner + 1] > t.edge_first[inner]
    edge_to[t.edge_first[inner]] = v0                # ... now has an edge into entry 0
    broken = SimpleNamespace(levels=[replace(t, edge_to=edge_to)])
    with pytest.raises(MicrocodeError, match=f"level 0, cell {cell}: a local edge enters"):
        compile_microcode(broken)
    edge_to[t.edge_first[inner]] = t.vertex_first[-1] + 5     # and one leaving the level
    with pytest.raises(MicrocodeError, match=f"cell {cell}"):
        compile_microcode(SimpleNamespace(levels=[replace(t, edge_to=edge_to)]))


@pytest.mark.parametrize("slots_per_block", [1, 700, 4096])
def test_upload_in_runs_equals_the_packing(gen, monkeypatch, slots_per_block):
    """The GPU upload packs runs of whole blocks through one host buffer: with NumPy as
    the device and runs from one instruction to all of them, the same columns as the
    packing of everything at once."""
    from engine.core.backend import cpu_backend
    from engine.crp.customization import microcode_gpu as mg
    o, mc = gen
    p = pack_blocks(mc, slots_per_block)
    for run in (1, 997, 50_000, 10**9):
        monkeypatch.setattr(mg, "UPLOAD_INSTRUCTIONS", run)
        got = mg._upload_instructions(mc, mg._blocks(mc, slots_per_block), np)
        for name, column in zip(("instr_a", "instr_b", "instr_c"), got):
            assert np.array_equal(column, getattr(p, name)), (run, name)
    dm = mg.DeviceMicrocode(mc, cpu_backend(), slots_per_block)
    assert dm.num_blocks == p.num_blocks and dm.shared_bytes == p.shared_bytes
    for name, a in dm.arrays.items():
        assert np.array_equal(a, getattr(p, name)) and a.dtype == getattr(p, name).dtype, name
    assert dm.nbytes == 6 * mc.num_instructions + sum(
        a.nbytes for k, a in dm.arrays.items() if not k.startswith("instr_"))
