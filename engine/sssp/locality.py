"""Locality-based k-step relaxation (the GT 630 paper).

Each GPU thread owns two vertices; a flagged vertex starts a depth-first wave that
relaxes up to k hops, flagging the vertices it improves at depth k in the other of
two flag arrays. The host launches N rounds with no host-device traffic, then
checked rounds until one changes nothing. N is measured on the graph: the first
run per graph counts its rounds and later runs skip most of the checks.
The CPU twin runs the same rounds in vertex order.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.sssp.rounds import RoundBatch, device_distances, start_distances

DEFAULT_K = 4
MAX_K = 8                # the kernel's stack depth
UNCHECKED_SHARE = 0.7    # share of the measured round count launched unchecked
BATCH = 16               # rounds per captured graph and per convergence check


def run_gpu(prep, source: int, dist64: bool, k: int | None = None):
    k = k or prep.tuning.get("kstep_k", DEFAULT_K)
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be 1..{MAX_K}")
    state = prep.state(("kstep", dist64, k), lambda: _Rounds(prep, dist64, k))
    device_distances(prep, source, dist64, out=state.d)
    state.flags.fill(0)
    state.launch("kstep_start", (state.flags[0], np.int32(source), state.round_base,
                                 state.last_change), grid=1, block=1)
    unchecked = prep.tuning.get(("kstep_unchecked", k))
    used = state.run(unchecked or 0)     # N rounds with no host-device traffic first
    if unchecked is None:
        prep.tuning[("kstep_unchecked", k)] = int(used * UNCHECKED_SHARE)
    return state.d.copy(), {"rounds": used, "k": k, "unchecked_rounds": unchecked or 0}


class _Rounds(RoundBatch):
    """BATCH k-step rounds (an even number: the flags swap back)."""
    KERNELS = ("kstep_round",)

    def __init__(self, prep, dist64: bool, k: int) -> None:
        self.k = k
        self.flags = prep.xp.zeros((2, prep.n), dtype=np.uint8)
        super().__init__(prep, dist64, BATCH)

    def batch(self) -> None:
        prep, n = self.prep, self.prep.n
        for offset in range(1, BATCH + 1):
            flag_in, flag_out = self.flags[(offset - 1) % 2], self.flags[offset % 2]
            self.launch("kstep_round", (prep.first_out, prep.head, prep.weight, np.int32(n),
                                        self.d, flag_in, flag_out, np.int32(self.k),
                                        self.round_base, np.int32(offset), self.last_change),
                        threads=(n + 1) // 2)


def run_cpu(prep, source: int, k: int | None = None):
    k = k or prep.tuning.get("kstep_k", DEFAULT_K)
    d, rounds = _rounds(prep.first_out, prep.head, prep.weight, prep.n, source, k)
    return d, {"rounds": int(rounds), "k": k}


@numba.njit(cache=True)
def _rounds(first_out, head, w, n, source, k):
    d = start_distances(n, source)
    flag_in = np.zeros(n, dtype=np.bool_)
    flag_out = np.zeros(n, dtype=np.bool_)
    flag_in[source] = True
    stack_node = np.empty(k, dtype=np.int64)
    stack_arc = np.empty(k, dtype=np.int64)
    rounds = 0
    any_flag = True
    while any_flag:
        rounds += 1
        any_flag = False
        for root in range(n):
            if not flag_in[root]:
                continue
            flag_in[root] = False
            depth = 0
            stack_node[0] = root
            stack_arc[0] = first_out[root]
            while depth >= 0:
                x = stack_node[depth]
                if stack_arc[depth] >= first_out[x + 1]:
                    depth -= 1
                    continue
                a = stack_arc[depth]
                stack_arc[depth] += 1
                y = head[a]
                cand = d[x] + w[a]
                if cand < d[y]:
                    d[y] = cand
                    if depth + 1 < k:
                        depth += 1
                        stack_node[depth] = y
                        stack_arc[depth] = first_out[y]
                    else:
                        flag_out[y] = True
                        any_flag = True
        flag_in, flag_out = flag_out, flag_in
    return d, rounds
