"""The lowest CRP level's microinstructions on the GPU (engine/kernels/crp_microcode.cu).

Consecutive cells are packed into thread blocks by memory size; a block runs its
cells' layers in lockstep (layer k of every cell, then __syncthreads) on M in shared
memory, mapping and collection included: one kernel for the whole level. Slot ids are
block-local uint16 (the top bit of c marks an assignment), so a block holds at most
32767 slots. ``pack_blocks`` is host-side and pure NumPy/Numba, so its layout is tested
without a GPU; ``DeviceMicrocode`` uploads it once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.microcode import Microcode

NO_SLOT = 0xFFFF
ASSIGN = 0x8000
MAX_BLOCK_SLOTS = 0x7FFF
SLOTS_PER_BLOCK = 4096       # 16 KiB of shared memory: fastest on NY (H100)
THREADS = 256


@dataclass(frozen=True, eq=False)
class PackedMicrocode:
    """Host arrays of the per-block layout (block-local uint16 slot ids)."""
    block_cell_first: np.ndarray   # int32 [G+1]
    block_slots: np.ndarray        # int32 [G]
    block_layer_first: np.ndarray  # int64 [G+1] into layer_first
    layer_first: np.ndarray        # int64 [K+1] into the instructions
    instr_a: np.ndarray            # uint16 [I]
    instr_b: np.ndarray            # uint16 [I]
    instr_c: np.ndarray            # uint16 [I] slot | ASSIGN
    block_edge_first: np.ndarray   # int64 [G+1] local edges of the block
    edge_weight: np.ndarray        # int32 [E] index of the edge's cost in the level below
    edge_slot: np.ndarray          # uint16 [E] block-local slot, NO_SLOT: none
    block_out_first: np.ndarray    # int64 [G+1] the block's part of S
    collect_slot: np.ndarray       # uint16 [S] block-local slot, NO_SLOT: FORBIDDEN

    @property
    def num_blocks(self) -> int:
        return self.block_slots.size

    @property
    def shared_bytes(self) -> int:
        return 4 * int(self.block_slots.max(initial=1))


def pack_blocks(mc: Microcode, slots_per_block: int = SLOTS_PER_BLOCK) -> PackedMicrocode:
    """Greedy packing of consecutive cells into blocks of at most ``slots_per_block``
    slots (a bigger cell gets a block of its own), then each block's instructions
    ordered by (layer, cell). Written straight into the uint16 arrays (6 bytes per
    instruction), blocks in parallel, with no per-edge or per-instruction temporaries."""
    if int(mc.num_slots.max(initial=0)) > MAX_BLOCK_SLOTS:
        raise ValueError(f"a cell needs {int(mc.num_slots.max())} slots; a block holds "
                         f"at most {MAX_BLOCK_SLOTS}")
    if int(mc.edge_weight.max(initial=0)) > np.iinfo(np.int32).max:
        raise ValueError("weight indices beyond int32")
    cell_first = _pack_cells(mc.num_slots, min(slots_per_block, MAX_BLOCK_SLOTS))
    base = _slot_base(cell_first, mc.num_slots)
    block_slots = np.add.reduceat(mc.num_slots, cell_first[:-1]).astype(np.int32) \
        if mc.num_cells else np.zeros(0, np.int32)
    block_layers = np.maximum.reduceat(mc.num_layers, cell_first[:-1]) \
        if mc.num_cells else np.zeros(0, np.int32)
    block_layer_first = np.zeros(cell_first.size, dtype=np.int64)
    np.cumsum(block_layers, out=block_layer_first[1:])
    ia, ib, ic, layer_first = _pack_instructions(
        cell_first, base, block_layer_first, mc.instr_first, mc.instr_a, mc.instr_b,
        mc.instr_c, mc.instr_assign, mc.instr_layer)
    return PackedMicrocode(cell_first, block_slots, block_layer_first, layer_first, ia, ib, ic,
                           mc.edge_first[cell_first], mc.edge_weight.astype(np.int32, copy=False),
                           _block_slots(mc.edge_first, mc.edge_slot, base),
                           mc.clique_first[cell_first],
                           _block_slots(mc.clique_first, mc.collect_slot, base))


@nb.njit(cache=True, parallel=True)
def _block_slots(first, cell_slot, base):
    """Cell-local slots (-1: none) of the items first[c]..first[c+1] of every cell c as
    block-local uint16 ones (NO_SLOT: none)."""
    out = np.empty(cell_slot.size, dtype=np.uint16)
    for c in nb.prange(first.size - 1):
        for i in range(first[c], first[c + 1]):
            out[i] = NO_SLOT if cell_slot[i] < 0 else cell_slot[i] + base[c]
    return out


@nb.njit(cache=True)
def _pack_cells(num_slots, budget):
    first = [0]
    used = 0
    for c in range(num_slots.size):
        if used > 0 and used + num_slots[c] > budget:
            first.append(c)
            used = 0
        used += num_slots[c]
    if num_slots.size > 0:
        first.append(num_slots.size)
    return np.array(first, dtype=np.int32)


@nb.njit(cache=True)
def _slot_base(cell_first, num_slots):
    """Each cell's first slot within its block."""
    base = np.zeros(num_slots.size, dtype=np.int64)
    for g in range(cell_first.size - 1):
        s = 0
        for c in range(cell_first[g], cell_first[g + 1]):
            base[c] = s
            s += num_slots[c]
    return base


@nb.njit(cache=True, parallel=True)
def _pack_instructions(cell_first, base, block_layer_first, first, a, b, c, assign, layer):
    """Per block (blocks in parallel: each writes its own ranges), a counting sort of
    its cells' instructions by layer (cells in order within a layer), with block-local
    uint16 slots."""
    n = first[-1]
    ia = np.empty(n, dtype=np.uint16)
    ib = np.empty(n, dtype=np.uint16)
    ic = np.empty(n, dtype=np.uint16)
    layer_first = np.zeros(block_layer_first[-1] + 1, dtype=np.int64)
    for g in nb.prange(cell_first.size - 1):
        k0, nl = block_layer_first[g], block_layer_first[g + 1] - block_layer_first[g]
        pos = np.zeros(nl, dtype=np.int64)
        for i in range(first[cell_first[g]], first[cell_first[g + 1]]):
            pos[layer[i] - 1] += 1                       # layers count from 1
        start = first[cell_first[g]]
        for j in range(nl):
            layer_first[k0 + j] = start
            start += pos[j]
            pos[j] = start - pos[j]
        for cell in range(cell_first[g], cell_first[g + 1]):
            for i in range(first[cell], first[cell + 1]):
                p = pos[layer[i] - 1]
                pos[layer[i] - 1] += 1
                ia[p] = a[i] + base[cell]
                ib[p] = b[i] + base[cell]
                ic[p] = (c[i] + base[cell]) | (ASSIGN if assign[i] else 0)
    layer_first[-1] = n
    return ia, ib, ic, layer_first


class DeviceMicrocode:
    """A packed Microcode uploaded once to ``backend`` (arrays of backend.xp). On a GPU
    the packed host arrays are dropped after the upload (nothing on the host reads
    them); it keeps no reference to the Microcode either."""

    def __init__(self, mc: Microcode, backend, slots_per_block: int = SLOTS_PER_BLOCK):
        packed = pack_blocks(mc, slots_per_block)
        self.level, self.num_shortcuts = mc.level, mc.num_shortcuts
        self.num_blocks, self.shared_bytes = packed.num_blocks, packed.shared_bytes
        self.backend = backend
        xp = backend.xp
        self.arrays = {name: xp.asarray(getattr(packed, name)) for name in (
            "block_slots", "block_layer_first", "layer_first", "instr_a", "instr_b",
            "instr_c", "block_edge_first", "edge_weight", "edge_slot", "block_out_first",
            "collect_slot")}

    @property
    def nbytes(self) -> int:
        """Bytes of the uploaded arrays."""
        return sum(int(a.nbytes) for a in self.arrays.values())


def run_microcode_gpu(dm: DeviceMicrocode, weights, backend, out=None, overflow=None,
                      threads: int = THREADS):
    """S of the level on the device from the level below's device ``weights`` (int32):
    one kernel launch. Overflow is OR-ed into ``overflow`` (device int32 [1]) when
    given, for the caller to read later; else it is read here (a sync) and raises
    CostOverflow."""
    xp = backend.xp
    if out is None:
        out = xp.empty(dm.num_shortcuts, dtype=np.int32)
    check = overflow is None
    if check:
        overflow = xp.zeros(1, dtype=np.int32)
    d = dm.arrays
    if dm.num_blocks:
        kernel = backend.kernel("crp_microcode", "microcode_run")
        if dm.shared_bytes > 48 * 1024:       # dynamic shared memory beyond 48 KiB: opt in
            kernel.max_dynamic_shared_size_bytes = dm.shared_bytes
        kernel((dm.num_blocks,), (threads,), (
            d["block_slots"], d["block_layer_first"], d["layer_first"], d["instr_a"],
            d["instr_b"], d["instr_c"], d["block_edge_first"], d["edge_weight"],
            d["edge_slot"], d["block_out_first"], d["collect_slot"], weights, out, overflow),
            shared_mem=dm.shared_bytes)
    if check and int(overflow.get()[0]):
        raise CostOverflow.at_level(dm.level)
    return out

