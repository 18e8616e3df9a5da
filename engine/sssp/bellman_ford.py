"""Edge-parallel Bellman-Ford (the "GPU SSSP with Bellman-Ford" write-up).

One thread per arc, arcs ordered by the cache segment of their head then their
tail, distances read through the read-only cache, and a convergence check only
every CHECK_EVERY rounds. An arc is relaxed only when its tail improved in the
previous round. The CPU twin runs the same rounds, visiting just those tails.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.backend import load_module

CHECK_EVERY = 16
INF64 = np.iinfo(np.int64).max


def run_gpu(prep, source: int, dist64: bool):
    import cupy
    module = load_module("sssp", ("DIST64",) if dist64 else ())
    dtype = cupy.uint64 if dist64 else cupy.uint32
    n = prep.n
    tail, head, w = prep.bf_arcs()
    d = cupy.empty(n, dtype=dtype)
    module.get_function("init_dist")(((n + 255) // 256,), (256,), (d, np.int32(n), np.int32(source)))
    improved = cupy.full(n, -2, dtype=cupy.int32)
    improved[source] = 0
    last_change = cupy.zeros(1, dtype=cupy.int32)
    relax = module.get_function("bf_round")
    grid = ((max(prep.m, 1) + 255) // 256,)
    rounds = 0
    while True:
        for _ in range(CHECK_EVERY):
            rounds += 1
            relax(grid, (256,), (tail, head, w, np.int32(prep.m), d, d, improved,
                                 np.int32(rounds), last_change))
        if int(last_change.get()[0]) < rounds:
            break
    return d, {"rounds": rounds}


def run_cpu(prep, source: int):
    d, rounds = _rounds(prep.first_out, prep.head, prep.weight, prep.n, source)
    return d, {"rounds": int(rounds)}


@numba.njit(cache=True)
def _rounds(first_out, head, w, n, source):
    d = np.full(n, INF64, dtype=np.int64)
    d[source] = 0
    improved_round = np.full(n, -2, dtype=np.int64)
    improved_round[source] = 0
    current = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    current[0] = source
    size = 1
    rounds = 0
    while size > 0:
        rounds += 1
        new_size = 0
        for i in range(size):
            u = current[i]
            du = d[u]
            for a in range(first_out[u], first_out[u + 1]):
                v = head[a]
                cand = du + w[a]
                if cand < d[v]:
                    d[v] = cand
                    if improved_round[v] != rounds:
                        improved_round[v] = rounds
                        nxt[new_size] = v
                        new_size += 1
        current, nxt = nxt, current
        size = new_size
    return d, rounds
