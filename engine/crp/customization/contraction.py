"""Simulated contraction of one cell's local graph (Numba): the instruction stream of one
cell for engine.crp.customization.microcode (Delling, Kobitzsch, Werneck, "Customizing
Driving Directions with GPUs": microinstructions for the lowest level).

A cell's memory M has one slot per useful local edge (parallel edges share one) plus
shortcuts; ``slot[u, w]`` is the slot of the edge u -> w (-1: none). Contracting the
inner vertex v with in-edge u -> v and out-edge v -> w, u != w, emits (a, b, c):
M[c] = min(M[c], M[a] + M[b]), c the slot of u -> w (a fresh or dead slot, *assigned*,
if there was no such edge). The next vertex is the one with the fewest new shortcuts,
then the fewest instructions, then the lowest index; its score is recomputed when a
neighbour goes.

The adjacency is also kept as bit rows (``bits[0, u]``: out-neighbours of u,
``bits[1, u]``: in-neighbours) so that scoring v costs (in-degree x words) popcounts
instead of (in-degree x vertices) matrix reads: the stream is the same, the compile
several times faster. All scratch is made once per chunk of cells (``Scratch``) and
reset per cell, so a cell allocates nothing.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from numba.core import types
from numba.extending import intrinsic

from engine.core.arrays import grow

FREE_SCAN = 16       # free slots looked at before a fresh one is taken
ONE = np.uint64(1)


@intrinsic
def _popcount(typingctx, x):
    """Set bits of a uint64 (LLVM ctpop), as int64 so sums stay integers."""
    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])
    return types.int64(types.uint64), codegen


@intrinsic
def _lowest_bit(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz)."""
    def codegen(context, builder, sig, args):
        from llvmlite import ir
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.uint64), codegen


@nb.njit(cache=True, nogil=True)
def scratch(nv_max):
    """(slot matrix, bit rows [2, nv, words], alive bits, a word row, flags [2, nv],
    scores, neighbour lists [2, nv]) for cells of at most ``nv_max`` local vertices."""
    words = (nv_max + 63) // 64
    return (np.full((nv_max, nv_max), -1, dtype=np.int32),
            np.zeros((2, nv_max, words), dtype=np.uint64), np.zeros(words, dtype=np.uint64),
            np.zeros(words, dtype=np.uint64), np.zeros((2, nv_max), dtype=np.bool_),
            np.zeros(nv_max, dtype=np.int64), np.zeros((2, nv_max), dtype=np.int32))


@nb.njit(cache=True, nogil=True, inline="always")
def _link(bits, u, w):
    bits[0, u, w >> 6] |= ONE << np.uint64(w & 63)
    bits[1, w, u >> 6] |= ONE << np.uint64(u & 63)


@nb.njit(cache=True, nogil=True, inline="always")
def _unlink(bits, u, w):
    bits[0, u, w >> 6] &= ~(ONE << np.uint64(w & 63))
    bits[1, w, u >> 6] &= ~(ONE << np.uint64(u & 63))


@nb.njit(cache=True, nogil=True, inline="always")
def _neighbours(bits, side, v, alive, words, out):
    """Alive out- (side 0) or in-neighbours (side 1) of v into ``out``, ascending; count."""
    n = 0
    for k in range(words):
        word = bits[side, v, k] & alive[k]
        while word != 0:
            out[n] = k * 64 + _lowest_bit(word)
            n += 1
            word &= word - ONE
    return n


@nb.njit(cache=True, nogil=True, inline="always")
def _score(bits, alive, words, v, outs):
    """(new shortcuts, instructions) of contracting v, packed into one key: for each
    in-neighbour u, the out-neighbours w != u that u has no edge to yet."""
    ins = 0
    fill = 0
    for k in range(words):
        outs[k] = bits[0, v, k] & alive[k]
    nout = 0
    for k in range(words):
        nout += _popcount(outs[k])
    for k in range(words):
        word = bits[1, v, k] & alive[k]
        while word != 0:
            u = k * 64 + _lowest_bit(word)
            word &= word - ONE
            ins += 1
            for j in range(words):
                fill += _popcount(outs[j] & ~bits[0, u, j])
            if outs[u >> 6] & (ONE << np.uint64(u & 63)):
                fill -= 1            # w == u: no shortcut to itself
    return fill * 4 + ins * nout


@nb.njit(cache=True, nogil=True)
def broken(v0, nv, ne, nx, edge_first, edge_to):
    """True if a local edge enters an entry, leaves an exit or leaves the cell."""
    for u in range(nv):
        for e in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
            w = edge_to[e] - v0
            if w < ne or u >= nv - nx or w >= nv:
                return True
    return False


@nb.njit(cache=True, nogil=True)
def _useful(v0, nv, ne, nx, edge_first, edge_to, flags):
    """flags[0][:nv]: vertices reached from an entry that reach an exit (entries and
    exits: one way). Cells are small and nearly acyclic in order: few sweeps."""
    fwd, bwd = flags[0], flags[1]
    fwd[:nv] = False
    bwd[:nv] = False
    fwd[:ne] = True
    bwd[nv - nx:nv] = True
    changed = True
    while changed:
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
    for u in range(nv):
        fwd[u] = fwd[u] and bwd[u]


@nb.njit(cache=True, nogil=True)
def _initial_slots(v0, nv, ne, nx, edge_first, edge_to, edge_slot, fill, sc):
    """Resets the scratch for this cell and gives one slot per useful local edge
    (parallel edges share one; ``edge_slot`` written when ``fill``); the slot count."""
    slot, bits, alive, _, flags, _, _ = sc
    words = (nv + 63) // 64
    slot[:nv, :nv] = -1
    bits[:, :nv, :words] = 0
    _useful(v0, nv, ne, nx, edge_first, edge_to, flags)
    useful = flags[0]
    alive[:words] = 0
    for u in range(nv):
        if useful[u]:
            alive[u >> 6] |= ONE << np.uint64(u & 63)
    n = 0
    for u in range(nv):
        for e in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
            w = edge_to[e] - v0
            if fill:
                edge_slot[e] = -1
            if w == u or not useful[u] or not useful[w]:
                continue
            if slot[u, w] < 0:
                slot[u, w] = n
                _link(bits, u, w)
                n += 1
            if fill:
                edge_slot[e] = slot[u, w]
    return n


@nb.njit(cache=True, nogil=True)
def contract_cell(v0, nv, ne, nx, edge_first, edge_to, edge_slot, fill, sc, hz, free, buf):
    """Contract the cell's inner vertices; instructions go to ``buf`` rows (a, b, c,
    assign, layer) in emission order. The cell's local graph must not be ``broken``.
    Returns (count, slots, layers, hz, free, buf): the scratch arrays, maybe grown."""
    slot, bits, alive, outs_row, flags, score, lists = sc
    words = (nv + 63) // 64
    nslots = _initial_slots(v0, nv, ne, nx, edge_first, edge_to, edge_slot, fill, sc)
    hz = grow(hz, nslots + 64)      # last layer writing / reading / assigning; all 0 here
    free = grow(free, nslots + 64)             # dead slots: queue free[head:tail]
    st = np.zeros(4, dtype=np.int64)           # head, tail, slots, layers
    st[2] = nslots
    useful = flags[0]
    for v in range(ne, nv - nx):
        score[v] = _score(bits, alive, words, v, outs_row) if useful[v] else -1
    ins, outs = lists[0], lists[1]
    count = 0
    while True:
        v = -1
        for x in range(ne, nv - nx):
            if useful[x] and (v < 0 or score[x] < score[v]):
                v = x
        if v < 0:
            break
        useful[v] = False
        alive[v >> 6] &= ~(ONE << np.uint64(v & 63))
        ni = _neighbours(bits, 1, v, alive, words, ins)
        no = _neighbours(bits, 0, v, alive, words, outs)
        buf = grow(buf, count + ni * no)
        count, hz = _emit(v, ins[:ni], outs[:no], slot, bits, hz, free, st, buf, count)
        free = grow(free, st[1] + ni + no)
        for i in range(ni + no):
            x = ins[i] if i < ni else outs[i - ni]
            u, w = (x, v) if i < ni else (v, x)
            free[st[1]] = slot[u, w]
            st[1] += 1
            slot[u, w] = -1
            _unlink(bits, u, w)
        for i in range(ni + no):
            x = ins[i] if i < ni else outs[i - ni]
            if ne <= x < nv - nx:
                score[x] = _score(bits, alive, words, x, outs_row)
    hz[:st[2]] = 0                  # every slot used is below st[2]: all 0 for the next cell
    return count, st[2], st[3], hz, free, buf


@nb.njit(cache=True, nogil=True, inline="always")
def _take_slot(free, head, tail, hz, ready, fresh):
    """A dead slot (queue free[head:tail]) whose readers and writers end before layer
    ``ready``, among the oldest few, else a fresh one. Returns (slot, head, fresh)."""
    for i in range(head, min(tail, head + FREE_SCAN)):
        s = free[i]
        if hz[s, 0] < ready and hz[s, 1] < ready:
            free[i] = free[head]
            return s, head + 1, fresh
    return fresh, head, fresh + 1


@nb.njit(cache=True, nogil=True, inline="always")
def _emit(v, ins, outs, slot, bits, hz, free, st, buf, count):
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
                if c + 1 > hz.shape[0]:
                    hz = grow(hz, c + 1)
                slot[u, w] = c
                _link(bits, u, w)
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
