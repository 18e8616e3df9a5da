"""The level graph G_l of one contraction iteration, as flat arrays on the backend.

Arcs are kept sorted by (tail, head) with at most one arc per pair (the cheapest;
ties go to the lower hierarchy-arc id), so an arc is found by binary search on
``key = tail * n + head``. ``harc`` names each arc in the hierarchy's arc table,
which records how shortcuts unpack.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Slots of LevelGraph.counters (COUNT_* in engine/kernels/ch.cu)
(COUNT_CONTRACTED, COUNT_MAX_OUT_DEGREE, COUNT_BROKEN_BOUND, COUNT_FOUND, COUNT_SEEN, COUNT_WORK,
 COUNT_GROUPS) = range(7)


@dataclass
class LevelGraph:
    backend: object     # engine.core.backend.Backend: its kernels and arrays
    n: int              # node ids are global (0..n-1); contracted nodes simply have no arcs
    tail: object        # int64 [a]
    head: object        # int64 [a]
    weight: object      # int64 [a]
    harc: object        # int64 [a] hierarchy-arc id
    _counters: object = field(default=None, repr=False)

    @property
    def xp(self):
        return self.backend.xp

    def on(self, backend) -> "LevelGraph":
        """The same graph with its arrays on ``backend`` (for parity tests)."""
        return LevelGraph(backend, self.n, *(backend.to_device(backend.to_host(a))
                                             for a in (self.tail, self.head, self.weight, self.harc)))

    @property
    def counters(self):
        """uint64 [8] on the GPU: what the kernels of this level count (COUNT_*),
        so the host reads sizes and statistics in a few copies, not one per value."""
        if self._counters is None:
            self._counters = self.xp.zeros(8, dtype=self.xp.uint64)
        return self._counters

    @property
    def key(self):
        return self.tail * self.n + self.head

    @property
    def num_arcs(self) -> int:
        return int(self.tail.size)

    def out_first(self):
        """CSR index of the out-arcs of every node (arcs are sorted by tail)."""
        xp = self.xp
        return xp.searchsorted(self.tail, xp.arange(self.n + 1, dtype=self.tail.dtype))

    def level_counts(self, chosen, out_first) -> tuple[int, int]:
        """(|U_l|, largest out-degree of G_l): on the GPU the kernels of SCORE and
        SELECT counted them in ``counters``, read here in one copy."""
        if self.backend.is_gpu:
            counts = self.backend.to_host(self.counters)
            return int(counts[COUNT_CONTRACTED]), int(counts[COUNT_MAX_OUT_DEGREE])
        degree = out_first[1:] - out_first[:-1]
        return int(chosen.sum()), int(degree.max()) if degree.size else 0

    def lookup(self, tail, head):
        """(found, weight) of the arc tail->head for arrays of pairs."""
        xp = self.xp
        key = self.key
        want = tail * self.n + head
        if key.size == 0:
            return xp.zeros(want.shape, dtype=bool), xp.zeros(want.shape, dtype=xp.int64)
        pos = xp.minimum(xp.searchsorted(key, want), key.size - 1)
        found = key[pos] == want
        return found, xp.where(found, self.weight[pos], 0)


def normalized(backend, n, tail, head, weight, harc) -> LevelGraph:
    """Sort by (tail, head, weight, harc) and keep the first arc of each pair."""
    xp = backend.xp
    order = xp.lexsort(xp.stack([harc, weight, head, tail]))
    tail, head, weight, harc = tail[order], head[order], weight[order], harc[order]
    key = tail * n + head
    first = xp.ones(key.size, dtype=bool)
    if key.size > 1:
        first[1:] = key[1:] != key[:-1]
    return LevelGraph(backend, n, tail[first], head[first], weight[first], harc[first])


def pair_expansion(xp, counts, starts):
    """For rows with ``counts[i]`` partners starting at ``starts[i]``: (row, partner) pairs.

    The array form of two nested loops, used for broken paths and witness hops.
    """
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if counts.size else 0
    # row of every output slot: how many rows end at or before it (CuPy's repeat
    # takes no array of counts, this works on both backends)
    row = xp.searchsorted(ends, xp.arange(total), side="right")
    offset = xp.arange(total) - (ends - counts)[row]
    return row, starts[row] + offset


def broken_paths(g: LevelGraph, middle_mask, out_first):
    """All paths (u, w, v) of two arcs through a node w with ``middle_mask[w]``, u != v.

    Returns (u, w, v, length, in_arc, out_arc) with arc positions into ``g``.
    """
    xp = g.xp
    in_arc = xp.flatnonzero(middle_mask[g.head])
    w = g.head[in_arc]
    counts = out_first[w + 1] - out_first[w]
    row, out_arc = pair_expansion(xp, counts, out_first[w])
    in_arc = in_arc[row]
    u, v = g.tail[in_arc], g.head[out_arc]
    keep = u != v
    in_arc, out_arc = in_arc[keep], out_arc[keep]
    return (g.tail[in_arc], g.head[in_arc], g.head[out_arc],
            g.weight[in_arc] + g.weight[out_arc], in_arc, out_arc)


def lex_order(xp, *keys):
    """Like ``xp.lexsort(xp.stack(keys[::-1]))`` (``keys[0]`` most significant):
    successive stable argsorts, least significant key first. On the GPU each is
    a radix sort of a few launches where lexsort is a merge sort of dozens."""
    order = xp.argsort(keys[-1], kind="stable")
    for key in keys[-2::-1]:
        order = order[xp.argsort(key[order], kind="stable")]
    return order
