"""What the round-based SSSP variants share.

GPU: distances and round counters in device memory, reused across runs, and a
batch of rounds captured as one CUDA graph (``Backend.capture``): a launch from
Python costs about 5 µs, a kernel in a replayed graph about 1 µs, and these
variants launch thousands of small kernels. The batch launches the same kernels
with the same arguments every time, so round numbers live in device memory.

CPU (Numba): the start distances and the deduplicated push onto a work pile.
"""
from __future__ import annotations

import numba
import numpy as np

INF64 = np.iinfo(np.int64).max
BLOCK = 256


def dist_defines(dist64: bool) -> tuple[str, ...]:
    """The -D defines of the SSSP kernels for 32- or 64-bit distances."""
    return ("DIST64",) if dist64 else ()


def device_distances(prep, source: int, dist64: bool, out=None):
    """Distances on the device, INF except 0 at ``source`` (into ``out`` when given)."""
    backend, n = prep.backend, prep.n
    if out is None:
        out = backend.xp.empty(n, dtype=np.uint64 if dist64 else np.uint32)
    backend.launch("sssp", "init_dist", (out, np.int32(n), np.int32(source)), threads=n,
                   defines=dist_defines(dist64))
    return out


class RoundBatch:
    """Reused device buffers of a round-based variant and ``rounds`` rounds of it as
    one captured graph. A variant subclasses it: ``batch()`` launches the rounds'
    kernels, each with ``round_base`` and the round's offset; the base then advances
    by ``rounds``. Set the variant's own buffers before calling ``__init__``."""
    KERNELS: tuple[str, ...] = ()       # what batch() launches, besides bf_advance

    def __init__(self, prep, dist64: bool, rounds: int) -> None:
        backend, xp = prep.backend, prep.backend.xp
        self.prep, self.dist64, self.rounds = prep, dist64, rounds
        for name in self.KERNELS + ("bf_advance",):       # loaded before the capture
            backend.kernel("sssp", name, dist_defines(dist64))
        self.d = xp.empty(prep.n, dtype=np.uint64 if dist64 else np.uint32)
        self.round_base = xp.zeros(1, dtype=np.int32)
        self.last_change = xp.zeros(1, dtype=np.int32)

        def all_rounds():
            self.batch()
            self.launch("bf_advance", (self.round_base, np.int32(rounds)), grid=1, block=1)

        self.replay = backend.capture(all_rounds)

    def batch(self) -> None:
        raise NotImplementedError

    def launch(self, name: str, args, **where) -> None:
        self.prep.backend.launch("sssp", name, args, defines=dist_defines(self.dist64), **where)

    def run(self, unchecked_rounds: int = 0) -> int:
        """Replay batches, the first ``unchecked_rounds`` without a look at the device,
        then until a batch changes nothing; the rounds that changed something."""
        rounds = 0
        for _ in range(unchecked_rounds // self.rounds):
            self.replay()
            rounds += self.rounds
        while True:
            self.replay()
            rounds += self.rounds
            if self._last_change() < rounds:
                return self._last_change() + 1

    def _last_change(self) -> int:
        return int(self.prep.backend.to_host(self.last_change)[0])


@numba.njit(cache=True)
def start_distances(n, source):
    d = np.full(n, INF64, dtype=np.int64)
    d[source] = 0
    return d


@numba.njit(cache=True)
def push(v, stamp, generation, pile, size):
    """Append ``v`` to ``pile`` unless it went there in this ``generation``; the new size."""
    if stamp[v] != generation:
        stamp[v] = generation
        pile[size] = v
        size += 1
    return size


@numba.njit(cache=True)
def relax_pile(first_out, head, w, d, near, near_size, near_next, far, far_size, stamps,
               generations, threshold):
    """Relax the out-arcs of the ``near_size`` nodes of ``near``: improved nodes below
    ``threshold`` go to ``near_next``, the others onto ``far``, each at most once
    per generation (``stamps[0]``/``[1]`` against ``generations[0]``/``[1]``);
    (next near size, far size). Bellman-Ford's round is this with no threshold."""
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
                    out = push(v, stamps[0], generations[0], near_next, out)
                else:
                    far_size = push(v, stamps[1], generations[1], far, far_size)
    return out, far_size
