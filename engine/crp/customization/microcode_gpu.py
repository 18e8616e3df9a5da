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


UPLOAD_INSTRUCTIONS = 1 << 23   # instructions packed per host buffer on the way to the GPU


@dataclass(frozen=True, eq=False)
class _Blocks:
    """The per-block offsets of a packing (small: per block, per block layer)."""
    cell_first: np.ndarray         # int32 [G+1]
    base: np.ndarray               # int64 [C] each cell's first slot in its block
    slots: np.ndarray              # int32 [G]
    layer_first_of_block: np.ndarray   # int64 [G+1]
    layer_first: np.ndarray        # int64 [K+1]


def _blocks(mc: Microcode, slots_per_block: int) -> _Blocks:
    if int(mc.num_slots.max(initial=0)) > MAX_BLOCK_SLOTS:
        raise ValueError(f"a cell needs {int(mc.num_slots.max())} slots; a block holds "
                         f"at most {MAX_BLOCK_SLOTS}")
    if int(mc.edge_weight.max(initial=0)) > np.iinfo(np.int32).max:
        raise ValueError("weight indices beyond int32")
    cell_first = _pack_cells(mc.num_slots, min(slots_per_block, MAX_BLOCK_SLOTS))
    block_slots = np.add.reduceat(mc.num_slots, cell_first[:-1]).astype(np.int32) \
        if mc.num_cells else np.zeros(0, np.int32)
    block_layers = np.maximum.reduceat(mc.num_layers, cell_first[:-1]) \
        if mc.num_cells else np.zeros(0, np.int32)
    block_layer_first = np.zeros(cell_first.size, dtype=np.int64)
    np.cumsum(block_layers, out=block_layer_first[1:])
    return _Blocks(cell_first, _slot_base(cell_first, mc.num_slots), block_slots,
                   block_layer_first,
                   _layer_first(cell_first, block_layer_first, mc.instr_first, mc.instr_layer))


def pack_blocks(mc: Microcode, slots_per_block: int = SLOTS_PER_BLOCK) -> PackedMicrocode:
    """Greedy packing of consecutive cells into blocks of at most ``slots_per_block``
    slots (a bigger cell gets a block of its own), then each block's instructions
    ordered by (layer, cell). Written straight into the uint16 arrays (6 bytes per
    instruction), blocks in parallel, with no per-edge or per-instruction temporaries."""
    k = _blocks(mc, slots_per_block)
    return PackedMicrocode(k.cell_first, k.slots, k.layer_first_of_block, k.layer_first,
                           *_pack_all(mc, k), *_edges_and_collection(mc, k))


def _pack_all(mc: Microcode, k: _Blocks) -> tuple:
    """The packed instruction columns (a, b, c | ASSIGN) of every block, on the host."""
    instr = tuple(np.empty(mc.num_instructions, dtype=np.uint16) for _ in range(3))
    _pack_instructions(k.cell_first, k.base, k.layer_first_of_block, k.layer_first,
                       mc.instr_first, mc.instr_a, mc.instr_b, mc.instr_c, mc.instr_assign,
                       mc.instr_layer, 0, k.slots.size, 0, *instr)
    return instr


def _edges_and_collection(mc: Microcode, k: _Blocks) -> tuple:
    """(block_edge_first, edge_weight int32, edge_slot, block_out_first, collect_slot)."""
    return (mc.edge_first[k.cell_first], mc.edge_weight.astype(np.int32, copy=False),
            _block_slots(mc.edge_first, mc.edge_slot, k.base), mc.clique_first[k.cell_first],
            _block_slots(mc.clique_first, mc.collect_slot, k.base))


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
def _layer_first(cell_first, block_layer_first, first, layer):
    """int64 [K+1]: where each block's layer starts among the packed instructions
    (blocks in the order of their cells, a block's layers in order; layers from 1)."""
    out = np.zeros(block_layer_first[-1] + 1, dtype=np.int64)
    for g in nb.prange(cell_first.size - 1):
        k0, nl = block_layer_first[g], block_layer_first[g + 1] - block_layer_first[g]
        count = np.zeros(nl, dtype=np.int64)
        for i in range(first[cell_first[g]], first[cell_first[g + 1]]):
            count[layer[i] - 1] += 1
        start = first[cell_first[g]]
        for j in range(nl):
            out[k0 + j] = start
            start += count[j]
    out[-1] = first[-1]
    return out


@nb.njit(cache=True, parallel=True)
def _pack_instructions(cell_first, base, block_layer_first, layer_first, first, a, b, c,
                       assign, layer, g0, g1, offset, ia, ib, ic):
    """Blocks g0..g1-1 (in parallel: each writes its own range): a counting sort of
    their cells' instructions by layer (cells in order within a layer), with
    block-local uint16 slots, written at (packed position - ``offset``)."""
    for g in nb.prange(g0, g1):
        k0, nl = block_layer_first[g], block_layer_first[g + 1] - block_layer_first[g]
        pos = layer_first[k0:k0 + nl] - offset
        for cell in range(cell_first[g], cell_first[g + 1]):
            for i in range(first[cell], first[cell + 1]):
                p = pos[layer[i] - 1]
                pos[layer[i] - 1] += 1
                ia[p] = a[i] + base[cell]
                ib[p] = b[i] + base[cell]
                ic[p] = (c[i] + base[cell]) | (ASSIGN if assign[i] else 0)


class DeviceMicrocode:
    """A packed Microcode uploaded once to ``backend`` (arrays of backend.xp). On a GPU
    the instructions are packed UPLOAD_INSTRUCTIONS at a time into one reused host
    buffer and copied into their place on the device, so the host never holds the
    packed stream (6 bytes per instruction: 9 GB at 24 M nodes); it keeps no
    reference to the Microcode either. On the CPU the arrays are the packed ones."""

    def __init__(self, mc: Microcode, backend, slots_per_block: int = SLOTS_PER_BLOCK):
        self.level, self.num_shortcuts = mc.level, mc.num_shortcuts
        self.backend = backend
        xp = backend.xp
        k = _blocks(mc, slots_per_block)
        instr = _upload_instructions(mc, k, xp) if backend.is_gpu else _pack_all(mc, k)
        self.num_blocks = k.slots.size
        self.shared_bytes = 4 * int(k.slots.max(initial=1))
        names = ("block_slots", "block_layer_first", "layer_first", "instr_a", "instr_b",
                 "instr_c", "block_edge_first", "edge_weight", "edge_slot", "block_out_first",
                 "collect_slot")
        values = (k.slots, k.layer_first_of_block, k.layer_first, *instr,
                  *_edges_and_collection(mc, k))
        self.arrays = {name: xp.asarray(v) for name, v in zip(names, values)}

    @property
    def nbytes(self) -> int:
        """Bytes of the uploaded arrays."""
        return sum(int(a.nbytes) for a in self.arrays.values())


def _upload_instructions(mc: Microcode, k: _Blocks, xp) -> tuple:
    """The packed instruction columns on the device, packed in runs of whole blocks of
    about UPLOAD_INSTRUCTIONS instructions through one host buffer."""
    n = mc.num_instructions
    device = tuple(xp.empty(n, dtype=np.uint16) for _ in range(3))
    at = mc.instr_first[k.cell_first]                 # each block's first instruction
    g0, size = 0, 0
    host = tuple(np.empty(0, dtype=np.uint16) for _ in range(3))
    while g0 < k.slots.size:
        g1 = int(np.searchsorted(at, at[g0] + UPLOAD_INSTRUCTIONS, side="right")) - 1
        g1 = min(max(g1, g0 + 1), k.slots.size)
        i0, i1 = int(at[g0]), int(at[g1])
        if i1 - i0 > size:
            size = max(i1 - i0, min(n, UPLOAD_INSTRUCTIONS))
            host = tuple(np.empty(size, dtype=np.uint16) for _ in range(3))
        _pack_instructions(k.cell_first, k.base, k.layer_first_of_block, k.layer_first,
                           mc.instr_first, mc.instr_a, mc.instr_b, mc.instr_c,
                           mc.instr_assign, mc.instr_layer, g0, g1, i0, *host)
        for d, h in zip(device, host):
            d[i0:i1] = xp.asarray(h[:i1 - i0])
        g0 = g1
    return device


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

