"""Work-efficient frontier SSSP: near-far piles (Davidson et al., IPDPS'14).

Beyond both source documents: only improved vertices are expanded, and on the GPU
the whole run is one persistent cooperative kernel, so the thousands of small
frontier iterations of a road network cost grid barriers, not host round trips.
delta (the bucket width) defaults to a multiple of the mean arc cost. The CPU twin
runs the same near/far schedule sequentially.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.sssp.rounds import (device_distances, dist_defines, push, relax_pile,
                                start_distances)

DELTA_FACTOR = 64.0      # delta = DELTA_FACTOR * mean arc cost (scripts/bench.py near_far_grid)
BLOCK = 256
BLOCKS_PER_SM = 1        # a small grid keeps the grid barrier cheap


def delta_for(prep, delta_factor: float | None = None) -> int:
    factor = delta_factor or prep.tuning.get("near_far_delta_factor", DELTA_FACTOR)
    return max(1, int(factor * prep.mean_weight))


def run_gpu(prep, source: int, dist64: bool, delta_factor: float | None = None,
            blocks: int | None = None, threads: int | None = None):
    backend, xp, n = prep.backend, prep.xp, prep.n
    defines = dist_defines(dist64)
    d = device_distances(prep, source, dist64)
    queues = [xp.empty(max(n, 1), dtype=np.int32) for _ in range(5)]
    count = xp.zeros(5, dtype=np.int32)
    stamps = xp.zeros((2, n), dtype=np.int32)
    iterations = xp.zeros(1, dtype=np.int32)
    dist_type = np.uint64 if dist64 else np.uint32
    delta = min(delta_for(prep, delta_factor), int(np.iinfo(dist_type).max) - 1)
    threads = threads or prep.tuning.get("near_far_threads", BLOCK)
    blocks = blocks or prep.tuning.get("near_far_blocks") or backend.cooperative_blocks(
        "near_far", "near_far", threads, BLOCKS_PER_SM, defines)
    backend.launch("near_far", "near_far",
                   (prep.first_out, prep.head, prep.weight, np.int32(n), d, *queues, count,
                    stamps[0], stamps[1], dist_type(delta), np.int32(source), iterations),
                   grid=blocks, block=threads, defines=defines, cooperative=True)
    return d, {"iterations": "device", "delta": delta, "_iterations": iterations}


def run_cpu(prep, source: int, delta_factor: float | None = None, blocks=None, threads=None):
    delta = delta_for(prep, delta_factor)
    d, iterations = _near_far(prep.first_out, prep.head, prep.weight, prep.n, source, delta)
    return d, {"iterations": int(iterations), "delta": delta}


@numba.njit(cache=True)
def _near_far(first_out, head, w, n, source, delta):
    d = start_distances(n, source)
    near, near_next = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    far, far_next = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    # stamps[0] / stamps[1]: the generation in which a node went onto the near / far pile
    stamps = np.zeros((2, n), dtype=np.int64)
    generations = np.ones(2, dtype=np.int64)
    near[0] = source
    near_size, far_size = 1, 0
    stamps[0, source] = 1
    threshold = delta
    iterations = 0
    while near_size > 0 or far_size > 0:
        if near_size == 0:
            threshold += delta
            generations += 1
            near_size, far_size = _split_far(d, far, far_size, far_next, near, stamps,
                                             generations, threshold - delta, threshold)
            far, far_next = far_next, far
            continue
        generations[0] += 1
        iterations += 1
        near_size, far_size = relax_pile(first_out, head, w, d, near, near_size, near_next,
                                         far, far_size, stamps, generations, threshold)
        near, near_next = near_next, near
    return d, iterations


@numba.njit(cache=True)
def _split_far(d, far, far_size, far_next, near, stamps, generations, old_threshold, threshold):
    """A new bucket: far nodes now below ``threshold`` go near, the rest to ``far_next``
    (nodes settled below ``old_threshold`` are dropped); (near size, far size)."""
    near_size, new_far = 0, 0
    for i in range(far_size):
        v = far[i]
        if d[v] < old_threshold:
            continue
        if d[v] < threshold:
            near_size = push(v, stamps[0], generations[0], near, near_size)
        else:
            new_far = push(v, stamps[1], generations[1], far_next, new_far)
    return near_size, new_far
