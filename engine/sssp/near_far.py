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

from engine.backend import load_module

DELTA_FACTOR = 64.0      # delta = DELTA_FACTOR * mean arc cost (scripts/bench.py near_far_grid)
BLOCK = 256
BLOCKS_PER_SM = 1        # a small grid keeps the grid barrier cheap
INF64 = np.iinfo(np.int64).max


def delta_for(prep, delta_factor: float | None = None) -> int:
    factor = delta_factor or prep.tuning.get("near_far_delta_factor", DELTA_FACTOR)
    return max(1, int(factor * prep.mean_weight))


def run_gpu(prep, source: int, dist64: bool, delta_factor: float | None = None,
            blocks: int | None = None, threads: int | None = None):
    import cupy
    defines = ("DIST64",) if dist64 else ()
    dtype = cupy.uint64 if dist64 else cupy.uint32
    n = prep.n
    d = cupy.empty(n, dtype=dtype)
    load_module("sssp", defines).get_function("init_dist")(
        ((n + 255) // 256,), (256,), (d, np.int32(n), np.int32(source)))
    queues = [cupy.empty(max(n, 1), dtype=cupy.int32) for _ in range(5)]
    count = cupy.zeros(5, dtype=cupy.int32)
    stamps = cupy.zeros((2, n), dtype=cupy.int32)
    iterations = cupy.zeros(1, dtype=cupy.int32)
    kernel = load_module("near_far", defines, cooperative=True).get_function("near_far")
    dist_type = np.uint64 if dist64 else np.uint32
    delta = min(delta_for(prep, delta_factor), int(np.iinfo(dist_type).max) - 1)
    threads = threads or prep.tuning.get("near_far_threads", BLOCK)
    blocks = blocks or prep.tuning.get("near_far_blocks") or _cooperative_blocks(kernel, threads)
    kernel((blocks,), (threads,),
           (prep.first_out, prep.head, prep.weight, np.int32(n), d, *queues, count,
            stamps[0], stamps[1], dist_type(delta),
            np.int32(source), iterations))
    return d, {"iterations": "device", "delta": delta, "_iterations": iterations}


def _cooperative_blocks(kernel, threads: int) -> int:
    """BLOCKS_PER_SM blocks per SM, fewer if they could not all be resident at once
    (a cooperative launch requires it)."""
    import cupy
    device = cupy.cuda.Device()
    sms = device.attributes["MultiProcessorCount"]
    regs = max(kernel.num_regs, 1)
    per_sm_by_regs = device.attributes["MaxRegistersPerMultiprocessor"] // (regs * threads)
    per_sm_by_threads = device.attributes["MaxThreadsPerMultiProcessor"] // threads
    return sms * max(1, min(per_sm_by_regs, per_sm_by_threads, BLOCKS_PER_SM))


def run_cpu(prep, source: int, delta_factor: float | None = None, blocks=None, threads=None):
    delta = delta_for(prep, delta_factor)
    d, iterations = _near_far(prep.first_out, prep.head, prep.weight, prep.n, source, delta)
    return d, {"iterations": int(iterations), "delta": delta}


@numba.njit(cache=True)
def _near_far(first_out, head, w, n, source, delta):
    d = np.full(n, INF64, dtype=np.int64)
    d[source] = 0
    near = np.empty(n, dtype=np.int64)
    near_next = np.empty(n, dtype=np.int64)
    far = np.empty(n, dtype=np.int64)
    far_next = np.empty(n, dtype=np.int64)
    near_stamp = np.zeros(n, dtype=np.int64)
    far_stamp = np.zeros(n, dtype=np.int64)
    near[0] = source
    near_size, far_size = 1, 0
    generation, far_generation = 1, 1
    near_stamp[source] = 1
    threshold = delta
    iterations = 0
    while True:
        if near_size == 0:
            if far_size == 0:
                break
            old_threshold = threshold
            threshold += delta
            generation += 1
            far_generation += 1
            new_far = 0
            for i in range(far_size):
                v = far[i]
                if d[v] < old_threshold:
                    continue
                if d[v] < threshold:
                    if near_stamp[v] != generation:
                        near_stamp[v] = generation
                        near[near_size] = v
                        near_size += 1
                elif far_stamp[v] != far_generation:
                    far_stamp[v] = far_generation
                    far_next[new_far] = v
                    new_far += 1
            far, far_next = far_next, far
            far_size = new_far
            continue
        generation += 1
        iterations += 1
        out = 0
        for i in range(near_size):
            u = near[i]
            du = d[u]
            for a in range(first_out[u], first_out[u + 1]):
                v = head[a]
                cand = du + w[a]
                if cand < d[v]:
                    d[v] = cand
                    if cand < threshold:
                        if near_stamp[v] != generation:
                            near_stamp[v] = generation
                            near_next[out] = v
                            out += 1
                    elif far_stamp[v] != far_generation:
                        far_stamp[v] = far_generation
                        far[far_size] = v
                        far_size += 1
        near, near_next = near_next, near
        near_size = out
    return d, iterations
