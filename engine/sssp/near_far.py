"""Work-efficient frontier SSSP: near-far piles (Davidson et al., IPDPS'14).

Beyond both source documents: only improved vertices are expanded, and on the GPU
the whole run is one persistent cooperative kernel, so the thousands of small
frontier iterations of a road network cost grid barriers, not host round trips. Its
queues hold (distance, node) entries without deduplication (engine/kernels/near_far.cu
says why). delta (the bucket width) defaults to a multiple of the mean arc cost. The
CPU twin runs the same near/far schedule sequentially, deduplicating with stamps.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.sssp.rounds import (device_distances, dist_defines, push, relax_pile,
                                start_distances)

DELTA_FACTOR = 256.0    # delta = DELTA_FACTOR * mean arc cost (section continental: best of 64-512 at 24 M)
BLOCK = 256
BLOCKS_PER_SM = 1        # a small grid keeps the grid barrier cheap


def delta_for(prep, delta_factor: float | None = None) -> int:
    factor = delta_factor or prep.tuning.get("near_far_delta_factor", DELTA_FACTOR)
    return max(1, int(factor * prep.mean_weight))


def run_gpu(prep, source: int, dist64: bool, delta_factor: float | None = None,
            blocks: int | None = None, threads: int | None = None):
    backend, xp, n = prep.backend, prep.xp, prep.n
    defines = dist_defines(dist64)
    dist_type = np.uint64 if dist64 else np.uint32
    delta = min(delta_for(prep, delta_factor), int(np.iinfo(dist_type).max) - 1)
    threads = threads or prep.tuning.get("near_far_threads", BLOCK)
    blocks = blocks or prep.tuning.get("near_far_blocks") or backend.cooperative_blocks(
        "near_far", "near_far", threads, BLOCKS_PER_SM, defines)
    while True:
        cap = prep.tuning.get(("near_far_queue", dist64), max(n, QUEUE_MIN))
        state = prep.state(("near_far", dist64, cap), lambda: _Queues(prep, dist64, cap))
        d = device_distances(prep, source, dist64)
        backend.launch("near_far", "near_far",
                       (prep.first_out, prep.head, prep.weight, d, *state.queues,
                        np.int32(cap), state.count, dist_type(delta), np.int32(source),
                        state.status),
                       grid=blocks, block=threads, defines=defines, cooperative=True)
        iterations, overflowed, dropped = (int(x) for x in backend.to_host(state.status))
        if not overflowed:
            return d, {"iterations": iterations, "delta": delta, "queue": cap,
                       "dropped": bool(dropped)}
        prep.device_state.pop(("near_far", dist64, cap))
        prep.tuning[("near_far_queue", dist64)] = _larger_queue(cap, prep.m + n)


QUEUE_MIN = 1 << 16      # queue entries at least; a near queue never needs more than m


def _larger_queue(cap: int, arcs: int) -> int:
    """The queue size after one overflowed: four times larger. A near queue holds at
    most one entry per arc; a far queue, entries of many iterations, may need more,
    but a run that needs over eight times the arcs is refused."""
    if cap >= 8 * arcs:
        raise MemoryError(f"near-far: a queue passed {cap:,} entries ({8 * arcs:,} is the "
                          "limit); try a smaller delta factor or another method")
    return min(4 * cap, 8 * arcs)


class _Queues:
    """The kernel's five queues of (distance, node) entries, counts and status."""

    def __init__(self, prep, dist64: bool, cap: int) -> None:
        xp = prep.xp
        words = 4 if dist64 else 2          # an entry is 16 or 8 bytes
        self.queues = [xp.empty((cap, words), dtype=np.int32) for _ in range(5)]
        self.count = xp.zeros(5, dtype=np.int32)
        self.status = xp.zeros(3, dtype=np.int32)


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
