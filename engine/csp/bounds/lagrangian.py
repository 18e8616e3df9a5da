"""A Lagrangian bound for the hard queries: one extra prune, from LARAC's multiplier.

For any lambda = p/q >= 0 and any path P from a label (l, c) at v to the target,
q*len(P) + p*cost(P) >= q*l + p*c + d(v), where d(v) is v's distance to the target
under the combined weight q*length + p*cost. A path within the budget has
p*cost(P) <= p*B, so its length is at least (q*l + p*c + d(v) - p*B) / q. A label
whose bound reaches what is already known can go:

    q*l + p*c + d(v) - p*B >= q*incumbent     (a path found by the labeling), or
    q*l + p*c + d(v) - p*B >  q*upper         (a path LARAC found, unlabelled: ties
                                               stay, so the labeling still finds it)

The two bounds the labeling has (lb_l, lb_c) are this bound at lambda = 0 and its
limit at infinity; one lambda in between is often far stronger. LARAC (Juttner et al.,
INFOCOM 2001) finds the lambda that maximises the lower bound at the source: start
from the shortest path (too costly) and the least-cost path (within the budget), set
lambda where both have the same combined weight, search once under it, and replace
one of the two by the path found; stop when none lies below their line.

Each step is one search from the target on the reversed graph (``search(p, q,
radius)``, this backend's: engine/csp/bounds/cpu.py reverse_search on the CPU,
engine/csp/bounds/lagrangian_gpu.py on the GPU). Nodes past ``radius = q*upper + p*B`` get
INF: their bound exceeds q*upper whatever the label, so INF ("prune") is exact.
Integral weights: lambda is rounded to p/q with q*max length + p*max cost < 2^31
(so per-arc weights fit the GPU kernels' int32); a rounded lambda gives a bound just
as valid, only a little weaker.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from engine.csp.bounds.cpu import ReverseGraph, search

INF = np.iinfo(np.int64).max
WEIGHT_LIMIT = (1 << 31) - 1
MAX_STEPS = 8
POLICIES = ("auto", "always", "never")
# "auto" restarts a labeling with the bound once it has created this many labels per
# graph node: about what LARAC's searches cost in labels on that backend (NY, H100:
# ~35 ms of near-far searches; the GPU labeling makes ~4x the twin's labels, at about
# the twin's cost per label on 2 cores).
AUTO_AFTER_PER_NODE = {"cpu": 1, "gpu": 4}


@dataclass(frozen=True)
class LagrangianBound:
    d: Any                   # int64 [n] combined distance to the target (INF: prune)
    p: int
    q: int
    upper: int               # a path of this length within the budget exists (LARAC's best)
    lower: float             # (d(source) - p*B) / q: no path within the budget is shorter
    steps: int
    ms: float

    @property
    def cut(self) -> int:
        """q * upper: a label whose bound exceeds it cannot lead to a path of at most upper."""
        return self.q * self.upper


def weights_for(lam: float, max_length: int, max_cost: int) -> tuple[int, int]:
    """Integers (p, q), q >= 1, p >= 0, p/q close to ``lam``, with q*max_length +
    p*max_cost within WEIGHT_LIMIT (a length of WEIGHT_LIMIT itself, the most a graph
    holds, leaves no room: p = 0, the plain length bound)."""
    max_length, max_cost = max(int(max_length), 1), max(int(max_cost), 1)
    q = max(1, int(WEIGHT_LIMIT // (max_length + lam * max_cost)))
    p = max(0, min(int(round(lam * q)), (WEIGHT_LIMIT - q * max_length) // max_cost))
    g = math.gcd(p, q)
    return p // g, q // g


def larac(search_combined: Callable, budget: int, shortest: tuple[int, int],
          cheapest: tuple[int, int], max_length: int, max_cost: int,
          max_steps: int = MAX_STEPS) -> LagrangianBound:
    """LARAC from the shortest path ``(length, cost)``, which costs more than the
    budget, and the least-cost path, which fits it. ``search_combined(p, q, radius)``
    returns (d, d_source, path_length, path_cost): the distances under q*length +
    p*cost and the length and cost of a tight source path. The bound kept is the step
    with the best lower bound at the source."""
    t0 = time.perf_counter()
    (l1, c1), (l2, c2) = shortest, cheapest
    upper, best, steps = l2, None, 0
    while steps < max_steps:
        p, q = weights_for((l2 - l1) / (c1 - c2), max_length, max_cost)
        d, d_source, length, cost = search_combined(p, q, q * upper + p * budget)
        steps += 1
        lower = (d_source - p * budget) / q
        if best is None or lower > best[0]:
            best = (lower, d, p, q)
        if cost <= budget:
            upper = min(upper, length)
        if math.ceil(lower) >= upper:               # the bound proves ``upper`` optimal
            break
        if d_source >= min(q * l1 + p * c1, q * l2 + p * c2):
            break                                   # nothing below the line: lambda is best
        if cost <= budget:
            l2, c2 = length, cost
        else:
            l1, c1 = length, cost
    lower, d, p, q = best
    return LagrangianBound(d, p, q, upper, lower, steps, (time.perf_counter() - t0) * 1000)


def cpu_search(rev: ReverseGraph, head: np.ndarray, cost: np.ndarray, source: int,
               target: int) -> Callable:
    """LARAC's search on the CPU: a reverse Dijkstra under the combined weight, to the
    radius (engine.csp.bounds.cpu.search)."""
    def run(p: int, q: int, radius: int):
        w = q * rev.length + p * rev.cost
        dist, _, along = search(rev, w, cost, head, target, source,
                                np.array([min(radius, INF - 1)], np.int64))
        c = int(along[source])
        return dist, int(dist[source]), (int(dist[source]) - p * c) // q, c
    return run


def lagrangian_summary(bound: LagrangianBound | None, restart: int) -> dict | None:
    """What a result reports of the bound (None: not used): LARAC's steps, lambda = p/q,
    the lower bound and LARAC's best path length (upper), its time, and the labels of
    the run it restarted (0: used from the start)."""
    if bound is None:
        return None
    return {"steps": bound.steps, "lambda": bound.p / bound.q, "lower": bound.lower,
            "upper": bound.upper, "ms": bound.ms, "labels_before_restart": restart}
