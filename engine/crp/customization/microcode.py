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

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba as nb
import numpy as np

from engine.core.arrays import grow
from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.cpu import cell_span
from engine.crp.metric import FORBIDDEN

_FREE_SCAN = 16      # free slots looked at before a fresh one is taken
_CHUNK = 256         # cells compiled by one task


class MicrocodeError(ValueError):
    """A local graph breaks the assumptions of contraction (an edge into an entry)."""


@dataclass(frozen=True, eq=False)
class Microcode:
    """The instruction streams of one level's cells (cell-local slot ids, int32).

    Within cell c the instructions ``instr_first[c]:instr_first[c+1]`` are sorted by
    layer (``instr_layer``, from 1): run in that order they give the result of the
    layered schedule."""
    level: int
    num_cells: int
    instr_first: np.ndarray     # int64 [C+1]
    instr_a: np.ndarray         # int32 [I] slot read (u->v)
    instr_b: np.ndarray         # int32 [I] slot read (v->w)
    instr_c: np.ndarray         # int32 [I] slot written (u->w)
    instr_assign: np.ndarray    # bool [I] the first write of a (maybe reused) slot
    instr_layer: np.ndarray     # int32 [I] layer within the cell, from 1
    num_layers: np.ndarray      # int32 [C]
    num_slots: np.ndarray       # int32 [C] slots of the cell's memory M
    edge_first: np.ndarray      # int64 [C+1] the cell's local edges (level-global ids)
    edge_slot: np.ndarray       # int32 [E] slot each local edge is gathered into, -1 none
    edge_weight: np.ndarray     # int64 [E] index of the edge's cost in the level below
    clique_first: np.ndarray    # int64 [C+1] offsets of the cells' matrices in S
    collect_slot: np.ndarray    # int32 [S] slot holding S[c][r][j], -1: FORBIDDEN
    compile_ms: float = 0.0

    @property
    def num_instructions(self) -> int:
        return int(self.instr_first[-1])

    @property
    def num_shortcuts(self) -> int:
        return int(self.clique_first[-1])

    def summary(self) -> dict:
        return {"level": self.level, "cells": self.num_cells,
                "instructions": self.num_instructions,
                "layers_max": int(self.num_layers.max(initial=0)),
                "layers_mean": round(float(self.num_layers.mean()) if self.num_cells else 0, 1),
                "slots_max": int(self.num_slots.max(initial=0)),
                "slots_total": int(self.num_slots.sum()),
                "compile_ms": round(self.compile_ms, 1)}


def compile_microcode(overlay, level: int = 0) -> Microcode:
    """Simulate the contraction of every cell of ``level`` (deterministic)."""
    t0 = time.perf_counter()
    t = overlay.levels[level]
    edge_slot = np.full(t.edge_to.size, -1, dtype=np.int32)
    collect = np.full(t.num_shortcuts, -1, dtype=np.int32)
    bounds = list(range(0, t.num_cells, _CHUNK)) + [t.num_cells]

    def chunk(k):
        return _compile_range(bounds[k], bounds[k + 1], t.vertex_first, t.entry_first,
                              t.exit_first, t.edge_first, t.edge_to, t.clique_first,
                              edge_slot, collect)
    with ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 16))) as pool:
        parts = list(pool.map(chunk, range(len(bounds) - 1)))   # in order: deterministic
    broken = [p[0] for p in parts if p[0] >= 0]
    if broken:
        raise MicrocodeError(f"level {level}, cell {broken[0]}: a local edge enters an "
                             f"entry or leaves an exit")
    first = np.zeros(t.num_cells + 1, dtype=np.int64)
    np.cumsum(np.concatenate([p[1] for p in parts] + [np.zeros(0, np.int64)]), out=first[1:])
    rows = np.concatenate([p[2] for p in parts] + [np.zeros((0, 5), np.int32)])
    layers = np.concatenate([p[3] for p in parts] + [np.zeros(0, np.int32)])
    slots = np.concatenate([p[4] for p in parts] + [np.zeros(0, np.int32)])
    cell_edge_first = np.ascontiguousarray(t.edge_first[t.vertex_first], dtype=np.int64)
    return Microcode(level, t.num_cells, first, rows[:, 0].copy(), rows[:, 1].copy(),
                     rows[:, 2].copy(), rows[:, 3] > 0, rows[:, 4].copy(), layers, slots,
                     cell_edge_first, edge_slot, t.edge_weight, t.clique_first, collect,
                     (time.perf_counter() - t0) * 1000)


# ------------------------------------------------------------------ compilation
@nb.njit(cache=True)
def _useful(v0, nv, ne, nx, edge_first, edge_to):
    """Vertices reached from an entry and reaching an exit (entries/exits: one way)."""
    fwd = np.zeros(nv, dtype=np.bool_)
    bwd = np.zeros(nv, dtype=np.bool_)
    fwd[:ne] = True
    bwd[nv - nx:] = True
    changed = True
    while changed:          # cells are small and nearly acyclic in order: few sweeps
        changed = False
        for u in range(nv):
            for e in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
                w = edge_to[e] - v0
                if fwd[u] and not fwd[w]:
                    fwd[w] = True
                    changed = True
                if bwd[w] and not bwd[u]:
                    bwd[u] = True
                    changed = True
    return fwd & bwd


@nb.njit(cache=True)
def _score(slot, alive, nv, v):
    """(new shortcuts, instructions) of contracting v, packed into one key."""
    ins = 0
    outs = 0
    fill = 0
    for u in range(nv):
        if alive[u] and slot[u, v] >= 0:
            ins += 1
            for w in range(nv):
                if w != u and alive[w] and slot[v, w] >= 0 and slot[u, w] < 0:
                    fill += 1
        if alive[u] and slot[v, u] >= 0:
            outs += 1
    return fill * 4 + ins * outs


@nb.njit(cache=True)
def _take_slot(free, head, tail, hz, ready, fresh):
    """A dead slot (queue free[head:tail]) whose readers and writers end before layer
    ``ready``, among the oldest few, else a fresh one. Returns (slot, head, fresh)."""
    for i in range(head, min(tail, head + _FREE_SCAN)):
        s = free[i]
        if hz[s, 0] < ready and hz[s, 1] < ready:
            free[i] = free[head]
            return s, head + 1, fresh
    return fresh, head, fresh + 1


@nb.njit(cache=True)
def _initial_slots(v0, nv, ne, nx, edge_first, edge_to, edge_slot):
    """One slot per useful local edge (parallel edges share one): the slot matrix and the
    slot count; -1 if an edge enters an entry or leaves an exit."""
    useful = _useful(v0, nv, ne, nx, edge_first, edge_to)
    slot = np.full((nv, nv), -1, dtype=np.int32)
    n = 0
    for u in range(nv):
        for e in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
            w = edge_to[e] - v0
            if w < ne or u >= nv - nx or w >= nv:
                return slot, useful, -1
            edge_slot[e] = -1
            if w == u or not useful[u] or not useful[w]:
                continue
            if slot[u, w] < 0:
                slot[u, w] = n
                n += 1
            edge_slot[e] = slot[u, w]
    return slot, useful, n


@nb.njit(cache=True)
def _contract_cell(v0, nv, ne, nx, edge_first, edge_to, edge_slot, buf):
    """Contract the cell's inner vertices (fewest new shortcuts first, then fewest
    instructions, then lowest index). Instructions go to ``buf`` rows (a, b, c, assign,
    layer), grown as needed. Returns (buf, count, slot matrix, slots, layers); slots
    is -1 for a broken local graph."""
    slot, alive, nslots = _initial_slots(v0, nv, ne, nx, edge_first, edge_to, edge_slot)
    if nslots < 0:
        return buf, 0, slot, -1, 0
    hz = np.zeros((nslots + 64, 3), dtype=np.int32)   # last layer writing/reading/assigning
    free = np.empty(nslots + 64, dtype=np.int32)       # dead slots: queue free[head:tail]
    st = np.zeros(4, dtype=np.int64)                   # head, tail, slots, layers
    st[2] = nslots
    score = np.full(nv, np.iinfo(np.int64).max, dtype=np.int64)
    for v in range(ne, nv - nx):
        if alive[v]:
            score[v] = _score(slot, alive, nv, v)
    ins = np.empty(nv, dtype=np.int32)
    outs = np.empty(nv, dtype=np.int32)
    count = 0
    while True:
        v = -1
        for x in range(ne, nv - nx):
            if alive[x] and (v < 0 or score[x] < score[v]):
                v = x
        if v < 0:
            break
        alive[v] = False
        ni, no = 0, 0
        for x in range(nv):
            if alive[x] and slot[x, v] >= 0:
                ins[ni] = x
                ni += 1
            if alive[x] and slot[v, x] >= 0:
                outs[no] = x
                no += 1
        buf = grow(buf, count + ni * no)
        count, hz = _emit(v, ins[:ni], outs[:no], slot, hz, free, st, buf, count)
        free = grow(free, st[1] + ni + no)
        for x in ins[:ni]:
            free[st[1]] = slot[x, v]
            slot[x, v] = -1
            st[1] += 1
        for x in outs[:no]:
            free[st[1]] = slot[v, x]
            slot[v, x] = -1
            st[1] += 1
        for x in np.concatenate((ins[:ni], outs[:no])):
            if x >= ne and x < nv - nx:
                score[x] = _score(slot, alive, nv, x)
    return buf, count, slot, st[2], st[3]


@nb.njit(cache=True)
def _emit(v, ins, outs, slot, hz, free, st, buf, count):
    """The instructions of contracting v, each at the first layer its hazards allow:
    after the writers of a and b, after the readers of c, after c's assignment (or,
    for an assignment, after every writer of c)."""
    for u in ins:
        for w in outs:
            if u == w:
                continue
            a, b, c = slot[u, v], slot[v, w], slot[u, w]
            ready = max(hz[a, 0], hz[b, 0]) + 1
            assign = c < 0
            if assign:
                c, st[0], st[2] = _take_slot(free, st[0], st[1], hz, ready, st[2])
                hz = grow(hz, c + 1)
                slot[u, w] = c
                layer = max(ready, hz[c, 0] + 1, hz[c, 1] + 1)
                hz[c, 2] = layer
            else:
                layer = max(ready, hz[c, 2] + 1, hz[c, 1] + 1)
            hz[a, 1] = max(hz[a, 1], layer)
            hz[b, 1] = max(hz[b, 1], layer)
            hz[c, 0] = max(hz[c, 0], layer)
            st[3] = max(st[3], layer)
            buf[count, 0], buf[count, 1], buf[count, 2] = a, b, c
            buf[count, 3], buf[count, 4] = assign, layer
            count += 1
    return count, hz


@nb.njit(cache=True, nogil=True)
def _compile_range(c0, c1, vertex_first, entry_first, exit_first, edge_first, edge_to,
                   clique_first, edge_slot, collect):
    """Cells c0..c1-1 in turn, each one's instructions sorted by layer (counting sort);
    ``edge_slot`` and ``collect`` are filled in place (cells own disjoint parts).
    Returns (broken cell or -1, instructions per cell, rows (a, b, c, assign, layer),
    layers, slots)."""
    counts = np.zeros(c1 - c0, dtype=np.int64)
    layers = np.zeros(c1 - c0, dtype=np.int32)
    slots = np.zeros(c1 - c0, dtype=np.int32)
    out = np.empty((1024, 5), dtype=np.int32)
    buf = np.empty((256, 5), dtype=np.int32)
    total = 0
    for cell in range(c0, c1):
        v0, nv, ne, nx = cell_span(cell, vertex_first, entry_first, exit_first)
        if ne == 0 or nx == 0:
            continue
        buf, n, slot, nslots, nl = _contract_cell(v0, nv, ne, nx, edge_first, edge_to,
                                                  edge_slot, buf)
        if nslots < 0:
            return cell, counts, out[:0], layers, slots
        base = clique_first[cell]
        for r in range(ne):
            for j in range(nx):
                collect[base + r * nx + j] = slot[r, nv - nx + j]
        out = grow(out, total + n)
        _sort_by_layer(buf[:n], nl, out[total:total + n])
        total += n
        counts[cell - c0], layers[cell - c0], slots[cell - c0] = n, nl, nslots
    return -1, counts, out[:total], layers, slots


@nb.njit(cache=True)
def _sort_by_layer(rows, num_layers, out):
    """Stable counting sort of instruction rows by their layer (column 4, from 1)."""
    start = np.zeros(num_layers + 2, dtype=np.int64)
    for i in range(rows.shape[0]):
        start[rows[i, 4] + 1] += 1
    for k in range(1, num_layers + 2):
        start[k] += start[k - 1]
    for i in range(rows.shape[0]):
        k = rows[i, 4]
        out[start[k]] = rows[i]
        start[k] += 1


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
