"""SCORE: how attractive each node of G_l is to contract now (lower contracts first).

After Geisberger's CH: the edge difference (shortcuts a contraction would add, by a
1-hop witness test, minus the arcs it removes) dominates; degree, the largest
neighbour degree and the node's normalised arc costs break ties toward nodes
whose contraction disturbs little.
"""
from __future__ import annotations

from engine.ch.level_graph import LevelGraph, broken_paths


def importance(g: LevelGraph, alive, out_first):
    """int64 [n] in 1/64 units; meaningless for nodes that are not alive. The array
    formulation below is the specification; the GPU runs fused kernels."""
    if g.backend.is_gpu:
        return _importance_kernels(g, out_first)
    xp = g.xp
    n = g.n
    u, w, v, length, _, _ = broken_paths(g, alive, out_first)
    found, direct = g.lookup(u, v)
    needed = ~(found & (direct <= length))            # no 1-hop witness
    shortcuts = xp.bincount(w, weights=needed.astype(xp.float64), minlength=n)
    outdeg = xp.bincount(g.tail, minlength=n).astype(xp.float64)
    indeg = xp.bincount(g.head, minlength=n).astype(xp.float64)
    degree = indeg + outdeg
    edge_difference = shortcuts - degree
    # largest degree among out- and in-neighbours
    nb_degree = xp.zeros(n, dtype=xp.float64)
    if g.num_arcs:
        _scatter_max(xp, nb_degree, g.tail, degree[g.head])
        _scatter_max(xp, nb_degree, g.head, degree[g.tail])
    # Integers throughout (float sums of small integers are exact), so numpy and
    # cupy compute the same importance bit for bit and select the same nodes.
    mean_w = max(1, int(g.weight.sum()) // max(g.num_arcs, 1))
    w_sum = xp.bincount(g.tail, weights=g.weight, minlength=n) + \
        xp.bincount(g.head, weights=g.weight, minlength=n)
    # 0.5 * (average arc cost / mean arc cost), in 1/64 units
    avg_w_64 = w_sum.astype(xp.int64) * 32 // (xp.maximum(degree, 1).astype(xp.int64) * mean_w)
    return ((4 * edge_difference + degree) * 64).astype(xp.int64) + \
        (nb_degree * 16).astype(xp.int64) + avg_w_64


def _importance_kernels(g: LevelGraph, out_first):
    """The same integers from three fused kernels (engine/kernels/ch.cu); the
    largest out-degree goes to ``g.counters``."""
    xp, n, m = g.xp, g.n, g.num_arcs
    indeg, wsum, needed, nb_degree = xp.zeros((4, n), dtype=xp.uint64)
    total = g.weight.sum(keepdims=True)
    out = xp.empty(n, dtype=xp.int64)
    launch = g.backend.launch
    launch("ch", "ch_arc_sums", (g.tail, g.head, g.weight, m, indeg, wsum), threads=m)
    launch("ch", "ch_score_arcs", (g.tail, g.head, g.weight, out_first, indeg, m, needed,
                                   nb_degree), threads=m)
    launch("ch", "ch_score_nodes", (out_first, indeg, needed, nb_degree, wsum, total, n, m, out,
                                    g.counters), threads=n)
    return out


def _scatter_max(xp, out, index, values):
    """out[index] = max(out[index], values), duplicates allowed (sort, keep the last)."""
    order = xp.lexsort(xp.stack([values, index]))
    index, values = index[order], values[order]
    last = xp.ones(index.size, dtype=bool)
    last[:-1] = index[1:] != index[:-1]
    out[index[last]] = xp.maximum(out[index[last]], values[last])
