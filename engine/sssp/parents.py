"""The shortest-path tree from final distances, the same on both backends.

With positive costs every tight arc (d[u] + w == d[v]) goes from a smaller to a
larger distance, so picking one per node gives a tree; we pick the smallest arc id,
which makes GPU and CPU trees identical. Zero-cost arcs can close tight cycles:
then the tree is grown breadth-first over tight arcs from the source instead.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.sssp.rounds import dist_defines

NO_ARC = np.iinfo(np.int32).max


def parent_arcs(prep, d, unreached, source: int, on_device: bool = False):
    """parent_arc per node (int32, -1 for the source and unreached nodes), on the host,
    or left on the GPU with ``on_device`` (so a timed query excludes the copy).

    ``d`` holds distances on the backend (unreached nodes hold ``unreached``).
    """
    backend = prep.backend
    if prep.min_weight > 0 and backend.is_gpu:
        out = _parents_gpu(prep, d)
        return out if on_device else backend.to_host(out)
    if prep.min_weight > 0:
        out = _parents_cpu(prep, d, unreached)
    else:
        # the GPU's uint64 distances mark unreached nodes with 2^64-1, beyond int64: -1 here
        host = prep.backend.to_host(d)
        d64 = host.astype(np.int64)
        d64[host == unreached] = -1
        out = _tight_bfs(prep.graph.first_out, prep.graph.head, prep.graph.metric(prep.metric),
                         d64, np.int64(-1), source)
    out = np.where(out == NO_ARC, -1, out).astype(np.int32)
    return out


def _parents_cpu(prep, d, unreached):
    t, h, w = prep.tail, prep.head, prep.weight
    du = d[t]
    tight = (du != unreached) & (du + w == d[h])
    arcs = np.flatnonzero(tight)
    out = np.full(prep.n, NO_ARC, dtype=np.int64)
    # arcs ascend, so a reversed assignment leaves the smallest arc id per head
    out[h[arcs][::-1]] = arcs[::-1]
    return out


def _parents_gpu(prep, d):
    """The same choice in one kernel: the least tight arc id per head (atomicMin),
    -1 where none is tight."""
    out = prep.xp.full(prep.n, -1, dtype=np.int32)
    prep.backend.launch("sssp", "tight_parent_arcs",
                        (prep.tail, prep.head, prep.weight, np.int32(prep.m), d, out),
                        threads=prep.m, defines=dist_defines(d.dtype == np.uint64))
    return out


@numba.njit(cache=True)
def _tight_bfs(first_out, head, w, d, unreached, source):
    n = first_out.size - 1
    out = np.full(n, NO_ARC, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    queue[0] = source
    seen[source] = True
    lo, hi = 0, 1
    while lo < hi:
        u = queue[lo]
        lo += 1
        for a in range(first_out[u], first_out[u + 1]):
            v = head[a]
            if not seen[v] and d[v] != unreached and d[u] + w[a] == d[v]:
                seen[v] = True
                out[v] = a
                queue[hi] = v
                hi += 1
    return out
