"""EXTRACT: the level graph G_{l+1} in fresh compact arrays: the arcs between surviving nodes plus
the new shortcuts, one cheapest arc per node pair (rebuilding beats carrying dead
arcs, as the paper found).

Both inputs are already sorted by (tail, head) with one arc per pair, so G_{l+1}
is their merge, not a sort. A shortcut u->v exists only when the arc u->v of G_l
(if any) is longer, so where both have a pair the shortcut replaces the arc.
"""
from __future__ import annotations

from engine.ch.level_graph import LevelGraph
from engine.ch.shortcut import Shortcuts


def next_level_graph(g: LevelGraph, contracted, sc: Shortcuts, shortcut_ids,
                     out_first) -> LevelGraph:
    """The array formulation below is the specification; the GPU runs kernels."""
    if g.backend.is_gpu:
        return _merged_kernels(g, contracted, sc, shortcut_ids, out_first)
    xp, n = g.xp, g.n
    kept = xp.flatnonzero(~(contracted[g.tail] | contracted[g.head]))
    old_key = g.key[kept]
    new_key = sc.key
    # ranks in the union; a kept arc with the key of a shortcut ("hit") is dropped
    pos_old = xp.searchsorted(new_key, old_key)              # shortcuts before each kept arc
    if new_key.size:
        hit = new_key[xp.minimum(pos_old, new_key.size - 1)] == old_key
    else:
        hit = xp.zeros(old_key.size, dtype=bool)
    hits_before = xp.zeros(old_key.size + 1, dtype=xp.int64)
    xp.cumsum(hit, out=hits_before[1:])
    old_rank = xp.arange(old_key.size) + pos_old - hits_before[:-1]
    pos_new = xp.searchsorted(old_key, new_key)              # kept arcs before each shortcut
    new_rank = xp.arange(new_key.size) + pos_new - hits_before[pos_new]
    size = int(old_key.size + new_key.size - hits_before[-1])
    old_rank = xp.where(hit, size, old_rank)                 # dropped arcs land in a spare slot
    merged = []
    for old, new in ((g.tail, sc.tail), (g.head, sc.head), (g.weight, sc.weight),
                     (g.harc, shortcut_ids)):
        out = xp.empty(size + 1, dtype=xp.int64)
        out[old_rank] = old[kept]
        out[new_rank] = new
        merged.append(out[:size])
    return LevelGraph(g.backend, n, *merged)


def _merged_kernels(g: LevelGraph, contracted, sc: Shortcuts, shortcut_ids,
                    out_first) -> LevelGraph:
    """The same merge in three launches and one cumsum (engine/kernels/ch.cu)."""
    backend, xp, n, m, k = g.backend, g.xp, g.n, g.num_arcs, int(sc.tail.size)
    # rows: surviving, replaced (the kernel writes every entry when there are arcs)
    flags = (xp.empty if m else xp.zeros)(2 * (m + 1), dtype=xp.int64)
    shortcuts_before = xp.empty(m, dtype=xp.int64)
    backend.launch("ch", "ch_extract_mark", (g.tail, g.head, contracted, sc.key, k, n, m, flags,
                                             shortcuts_before), threads=m)
    before = xp.cumsum(flags.reshape(2, m + 1), axis=1)
    kept, replaced = (int(x) for x in backend.to_host(before[:, m]))
    before = before.ravel()
    size = kept + k - replaced
    out = list(xp.empty((4, size), dtype=xp.int64))
    backend.launch("ch", "ch_extract_old", (g.tail, g.head, g.weight, g.harc, flags, before,
                                            shortcuts_before, m, *out), threads=m)
    backend.launch("ch", "ch_extract_new", (sc.tail, sc.head, sc.weight, shortcut_ids, k, g.head,
                                            out_first, before, m, *out), threads=k)
    return LevelGraph(backend, n, *out)
