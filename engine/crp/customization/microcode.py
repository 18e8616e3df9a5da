"""Microinstructions for the lowest CRP level (Delling, Kobitzsch, Werneck, "Customizing
Driving Directions with GPUs"): on small cells, contraction beats search.

Metric-independent preprocessing *simulates* the contraction of every cell's local
graph. Slots hold edge costs: one per local edge ("mapping": gathered from the level
below's weights, the minimum where edges are parallel), plus shortcuts. Contracting the
inner vertex v with in-edge slot a (u->v) and out-edge slot b (v->w), u != w, emits the
instruction (a, b, c): M[c] = min(M[c], M[a] + M[b]), c the slot of u->w. Once every
inner vertex is gone only entry->exit edges are left (entries have no in-edges, exits
no out-edges), so S[c][r][j] = M[slot(entry r, exit j)] ("collection").

Instructions come in *layers*: one reads nothing an earlier layer still writes and
writes nothing an earlier layer reads or assigns, so a layer runs in parallel (writes
to one slot in one layer meet in a min: atomicMin on the GPU). Slots of contracted
edges are dead and are reused for new shortcuts; the first write of a shortcut
*assigns* (M[c] = M[a] + M[b]) instead of taking the minimum, since a reused slot
holds an old value. Vertices that no entry reaches or that reach no exit are dropped
first: they cannot lie on an entry-to-exit path.

Costs: FORBIDDEN (2^31-1) is "no way": an operand equal to it leaves M[c] unchanged (an
assign stores FORBIDDEN); a finite sum >= FORBIDDEN sets the overflow flag, never wraps.
(The flag is raised by any overflowing sum of two partial paths, so it may differ from
the Dijkstra's in the cell; the costs equal it whenever neither overflows.)
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba as nb
import numpy as np

from engine.core.arrays import grow
from engine.core.cores import usable_cores
from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.contraction import broken, contract_cell, scratch
from engine.crp.customization.cpu import cell_span
from engine.crp.metric import FORBIDDEN

_CHUNK = 256         # cells compiled by one task
SMALL_SLOTS = 0x7FFF  # cells of at most this many slots: uint16 instructions, int16 edge slots


class MicrocodeError(ValueError):
    """A local graph breaks the assumptions of contraction (an edge into an entry)."""


@dataclass(frozen=True, eq=False)
class Microcode:
    """The instruction streams of one level's cells, with cell-local slot ids.

    Within cell c the instructions ``instr_first[c]:instr_first[c+1]`` are sorted by
    layer (``instr_layer``, from 1): run in that order they give the result of the
    layered schedule. Ids take the smallest dtype that fits (``slot_dtypes``): where
    every cell has at most SMALL_SLOTS slots (all generated and real networks so far:
    level 0 of 1 M nodes has at most 1,147) instructions are 8 bytes (uint16 a, b, c,
    bool assign, uint8 layer), else int32 ids."""
    level: int
    num_cells: int
    instr_first: np.ndarray     # int64 [C+1]
    instr_a: np.ndarray         # uint16 (int32) [I] slot read (u->v)
    instr_b: np.ndarray         # uint16 (int32) [I] slot read (v->w)
    instr_c: np.ndarray         # uint16 (int32) [I] slot written (u->w)
    instr_assign: np.ndarray    # bool [I] the first write of a (maybe reused) slot
    instr_layer: np.ndarray     # uint8 (uint16, int32) [I] layer within the cell, from 1
    num_layers: np.ndarray      # int32 [C]
    num_slots: np.ndarray       # int32 [C] slots of the cell's memory M
    edge_first: np.ndarray      # int64 [C+1] the cell's local edges (level-global ids)
    edge_slot: np.ndarray       # int16 (int32) [E] slot each local edge is gathered into, -1 none
    edge_weight: np.ndarray     # [E] index of the edge's cost in the level below (the overlay's)
    clique_first: np.ndarray    # int64 [C+1] offsets of the cells' matrices in S
    collect_slot: np.ndarray    # int16 (int32) [S] slot holding S[c][r][j], -1: FORBIDDEN
    compile_ms: float = 0.0

    @property
    def num_instructions(self) -> int:
        return int(self.instr_first[-1])

    @property
    def num_shortcuts(self) -> int:
        return int(self.clique_first[-1])

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays it owns (edge_weight and clique_first are the overlay's)."""
        return sum(getattr(self, k).nbytes for k in (
            "instr_first", "instr_a", "instr_b", "instr_c", "instr_assign", "instr_layer",
            "num_layers", "num_slots", "edge_first", "edge_slot", "collect_slot"))

    def summary(self) -> dict:
        return {"level": self.level, "cells": self.num_cells,
                "instructions": self.num_instructions,
                "layers_max": int(self.num_layers.max(initial=0)),
                "layers_mean": round(float(self.num_layers.mean()) if self.num_cells else 0, 1),
                "slots_max": int(self.num_slots.max(initial=0)),
                "slots_total": int(self.num_slots.sum()),
                "compile_ms": round(self.compile_ms, 1)}


def slot_dtypes(max_slots: int, max_layers: int) -> tuple[type, type, type]:
    """(instruction slot, edge/collect slot with -1, layer) dtypes for these maxima."""
    small = max_slots <= SMALL_SLOTS
    layer = np.uint8 if max_layers <= 0xFF else np.uint16 if max_layers <= 0xFFFF else np.int32
    return (np.uint16 if small else np.int32), (np.int16 if small else np.int32), layer


def compile_microcode(overlay, level: int = 0, threads: int | None = None) -> Microcode:
    """Simulate the contraction of every cell of ``level`` (deterministic).

    Two passes over the cells, each parallel over chunks of _CHUNK cells: the first
    counts every cell's instructions, layers and slots (and keeps nothing else), the
    second runs the same contraction again and writes each cell's instructions,
    sorted by layer, straight into arrays of the exact size and smallest dtypes. So
    memory peaks at the result plus one cell's scratch per thread, instead of growing
    buffers, their concatenation and column copies (5.1 GB for a 1.2 GB result at 1 M
    nodes before); the contraction costs twice, which bit rows make cheap
    (engine.crp.customization.contraction)."""
    t0 = time.perf_counter()
    t = overlay.levels[level]
    num_cells = t.num_cells
    counts = np.zeros(num_cells, dtype=np.int64)
    layers = np.zeros(num_cells, dtype=np.int32)
    slots = np.zeros(num_cells, dtype=np.int32)
    cell_args = (t.vertex_first, t.entry_first, t.exit_first, t.edge_first, t.edge_to,
                 t.clique_first)
    none = (np.zeros(1, np.int64),) + tuple(np.zeros(0, d) for d in (
        np.uint16, np.uint16, np.uint16, np.bool_, np.uint8, np.int16, np.int16))
    broken = _in_chunks(num_cells, threads, cell_args, False, none, (counts, layers, slots))
    if broken >= 0:
        raise MicrocodeError(f"level {level}, cell {broken}: a local edge enters an "
                             f"entry or leaves an exit")
    first = np.zeros(num_cells + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    del counts
    slot_t, edge_t, layer_t = slot_dtypes(int(slots.max(initial=0)), int(layers.max(initial=0)))
    n = int(first[-1])
    out = (first, np.empty(n, slot_t), np.empty(n, slot_t), np.empty(n, slot_t),
           np.empty(n, np.bool_), np.empty(n, layer_t), np.full(t.edge_to.size, -1, edge_t),
           np.full(t.num_shortcuts, -1, edge_t))
    _in_chunks(num_cells, threads, cell_args, True, out, (np.empty(num_cells, np.int64),
                                                          layers, slots))
    cell_edge_first = np.ascontiguousarray(t.edge_first[t.vertex_first], dtype=np.int64)
    return Microcode(level, num_cells, first, *out[1:6], layers, slots, cell_edge_first,
                     out[6], t.edge_weight, t.clique_first, out[7],
                     (time.perf_counter() - t0) * 1000)


def _in_chunks(num_cells, threads, cell_args, fill, out, per_cell) -> int:
    """_compile_range over chunks of cells in a thread pool (Numba releases the GIL);
    the first broken cell, or -1."""
    bounds = list(range(0, num_cells, _CHUNK)) + [num_cells]
    if threads is None:
        threads = usable_cores()

    def chunk(k):
        return _compile_range(bounds[k], bounds[k + 1], *cell_args, fill, *out, *per_cell)
    with ThreadPoolExecutor(max(1, min(threads, len(bounds) - 1))) as pool:
        broken = [b for b in pool.map(chunk, range(len(bounds) - 1)) if b >= 0]
    return broken[0] if broken else -1


# ------------------------------------------------------------------ compilation
@nb.njit(cache=True, nogil=True)
def _compile_range(c0, c1, vertex_first, entry_first, exit_first, edge_first, edge_to,
                   clique_first, fill, instr_first, ia, ib, ic, assign, layer, edge_slot,
                   collect, counts, layers, slots):
    """Cells c0..c1-1 in turn: counts, layers and slots per cell, and when ``fill``
    their instructions sorted by layer at instr_first[cell], their edge slots and
    collection slots (cells own disjoint parts). Returns a broken cell or -1."""
    nv_max = 1
    for cell in range(c0, c1):
        nv_max = max(nv_max, vertex_first[cell + 1] - vertex_first[cell])
    sc = scratch(nv_max)
    hz = np.zeros((64, 3), dtype=np.int32)
    free = np.empty(64, dtype=np.int32)
    buf = np.empty((256, 5), dtype=np.int32)
    start = np.empty(64, dtype=np.int64)
    for cell in range(c0, c1):
        v0, nv, ne, nx = cell_span(cell, vertex_first, entry_first, exit_first)
        if ne == 0 or nx == 0:
            continue
        if broken(v0, nv, ne, nx, edge_first, edge_to):
            return cell
        n, nslots, nl, hz, free, buf = contract_cell(v0, nv, ne, nx, edge_first, edge_to,
                                                     edge_slot, fill, sc, hz, free, buf)
        counts[cell], layers[cell], slots[cell] = n, nl, nslots
        if fill:
            slot, base = sc[0], clique_first[cell]
            for r in range(ne):
                for j in range(nx):
                    collect[base + r * nx + j] = slot[r, nv - nx + j]
            start = grow(start, nl + 2)
            _sort_by_layer(buf[:n], nl, start, instr_first[cell], ia, ib, ic, assign, layer)
    return -1


@nb.njit(cache=True, nogil=True)
def _sort_by_layer(rows, num_layers, start, at, ia, ib, ic, assign, layer):
    """Stable counting sort of instruction rows (a, b, c, assign, layer) by layer
    (from 1), written to the columns from position ``at``."""
    start[:num_layers + 2] = 0
    for i in range(rows.shape[0]):
        start[rows[i, 4] + 1] += 1
    start[0] = at
    for k in range(1, num_layers + 2):
        start[k] += start[k - 1]
    for i in range(rows.shape[0]):
        k = rows[i, 4]
        p = start[k]
        start[k] += 1
        ia[p], ib[p], ic[p] = rows[i, 0], rows[i, 1], rows[i, 2]
        assign[p], layer[p] = rows[i, 3] != 0, k


# ------------------------------------------------------------------ the CPU runner
def run_microcode_cpu(mc: Microcode, weights: np.ndarray) -> np.ndarray:
    """S of ``mc``'s level from the level below's ``weights`` (turn weights for level
    0): mapping, the instructions in order, collection; cells in parallel. Equals
    engine.crp.customization.cpu.customize_cells; raises CostOverflow on overflow."""
    weights = np.ascontiguousarray(weights, dtype=np.int32)
    out = np.empty(mc.num_shortcuts, dtype=np.int32)
    if _run_cells(mc.instr_first, mc.instr_a, mc.instr_b, mc.instr_c, mc.instr_assign,
                  mc.num_slots, mc.edge_first, mc.edge_slot, mc.edge_weight, weights,
                  mc.clique_first, mc.collect_slot, out):
        raise CostOverflow.at_level(mc.level)
    return out


@nb.njit(cache=True, parallel=True)
def _run_cells(first, ia, ib, ic, assign, num_slots, edge_first, edge_slot, edge_weight,
               weights, clique_first, collect, out):
    num_cells = first.size - 1
    overflow = np.zeros(num_cells, dtype=np.bool_)
    for cell in nb.prange(num_cells):
        m = np.full(num_slots[cell], FORBIDDEN, dtype=np.int32)
        for e in range(edge_first[cell], edge_first[cell + 1]):
            s = edge_slot[e]
            if s >= 0:
                m[s] = min(m[s], weights[edge_weight[e]])
        for i in range(first[cell], first[cell + 1]):
            va, vb, c = m[ia[i]], m[ib[i]], ic[i]
            total = np.int64(va) + np.int64(vb)
            if va == FORBIDDEN or vb == FORBIDDEN or total >= FORBIDDEN:
                if va != FORBIDDEN and vb != FORBIDDEN:
                    overflow[cell] = True
                if assign[i]:
                    m[c] = FORBIDDEN
            elif assign[i] or total < m[c]:
                m[c] = total
        for k in range(clique_first[cell], clique_first[cell + 1]):
            out[k] = m[collect[k]] if collect[k] >= 0 else FORBIDDEN
    return overflow.any()
