"""Edge-parallel Bellman-Ford (the "GPU SSSP with Bellman-Ford" write-up).

One thread per arc, arcs ordered by the cache segment of their head then their
tail, distances read through the read-only cache, and a convergence check only
every CHECK_EVERY rounds. An arc is relaxed only when its tail improved in the
previous round. The CPU twin runs the same rounds, visiting just those tails.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.sssp.rounds import INF64, RoundBatch, device_distances, relax_pile, start_distances

CHECK_EVERY = 32


def run_gpu(prep, source: int, dist64: bool):
    state = prep.state(("bellman_ford", dist64), lambda: _Rounds(prep, dist64))
    device_distances(prep, source, dist64, out=state.d)
    state.launch("bf_start", (state.improved, np.int32(prep.n), np.int32(source),
                              state.round_base, state.last_change), threads=prep.n)
    rounds = state.run()             # before the copy: the copy must see the final rounds
    return state.d.copy(), {"rounds": rounds}


class _Rounds(RoundBatch):
    """CHECK_EVERY rounds of relaxing every arc whose tail improved last round."""
    KERNELS = ("bf_round",)

    def __init__(self, prep, dist64: bool) -> None:
        self.improved = prep.xp.empty(prep.n, dtype=np.int32)
        self.arcs = prep.bf_arcs()
        super().__init__(prep, dist64, CHECK_EVERY)

    def batch(self) -> None:
        m = self.prep.m
        for offset in range(1, CHECK_EVERY + 1):
            self.launch("bf_round", (*self.arcs, np.int32(m), self.d, self.d, self.improved,
                                     self.round_base, np.int32(offset), self.last_change),
                        threads=max(m, 1))


def run_cpu(prep, source: int):
    d, rounds = _rounds(prep.first_out, prep.head, prep.weight, prep.n, source)
    return d, {"rounds": int(rounds)}


@numba.njit(cache=True)
def _rounds(first_out, head, w, n, source):
    """Round r relaxes the out-arcs of the nodes improved in round r - 1."""
    d = start_distances(n, source)
    current, nxt = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    stamps = np.zeros((2, n), dtype=np.int64)
    generations = np.ones(2, dtype=np.int64)
    no_far = np.empty(0, dtype=np.int64)        # nothing is beyond an infinite threshold
    current[0] = source
    size = 1
    rounds = 0
    while size > 0:
        rounds += 1
        generations[0] += 1
        size, _ = relax_pile(first_out, head, w, d, current, size, nxt, no_far, 0, stamps,
                             generations, INF64)
        current, nxt = nxt, current
    return d, rounds
