"""LARAC's search on the GPU: the near-far SSSP (engine.sssp.near_far) from the target
on the reversed graph under q*length + p*cost, then the bounds' tree kernels for the
cost of a tight path from the source (its length follows: (d - p*cost) / q).

The combined weights are made on the device per step. No CH serves them: a hierarchy
is built for one metric, and lambda changes with every query. The search runs to the
end (near-far has no radius), which only prunes a little more than the CPU's.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from engine.csp.bounds.cpu import INF
from engine.csp.bounds.gpu import GpuBounds
from engine.sssp import near_far
from engine.sssp.prepared import prepare


class GpuLagrangian:
    """Per graph and metric pair, beside its GpuBounds (whose reversed graph and tree
    kernels it uses)."""

    def __init__(self, bounds: GpuBounds, backend) -> None:
        xp = backend.xp
        self.bounds, self.backend = bounds, backend
        reverse = bounds.reverse
        self.prep = prepare(reverse, "length", backend)
        rev_length, rev_cost = reverse.metric("length"), reverse.metric("cost")
        self.means = (float(rev_length.mean() if rev_length.size else 1.0),
                      float(rev_cost.mean() if rev_cost.size else 1.0))
        self.rev_length = xp.asarray(rev_length.astype(np.int64))
        self.rev_cost = xp.asarray(rev_cost.astype(np.int64))
        self.length = bounds.len.astype(np.int64)        # forward arcs
        self.cost = bounds.cost.astype(np.int64)
        n = bounds.n
        self.next_arc, self.along = xp.empty(n, np.int32), xp.empty(n, np.int64)
        self.scratch = bounds.tree_scratch()
        self.target = xp.empty(1, np.int32)
        if n:      # compile the kernels now: a query's LARAC time never includes it
            self.search(0, 0)(0, 1, 0)

    def search(self, source: int, target: int):
        """``search_combined`` for engine.csp.bounds.lagrangian.larac."""
        xp, bd = self.backend.xp, self.bounds

        def run(p: int, q: int, radius: int):
            w = (q * self.rev_length + p * self.rev_cost).astype(np.uint32)
            prep = dataclasses.replace(self.prep, weight=w,
                                       mean_weight=max(1.0, q * self.means[0] + p * self.means[1]))
            d64, _ = near_far.run_gpu(prep, int(target), dist64=True)
            d = xp.empty(bd.n, np.int64)
            self.target.fill(int(target))
            bd.tree((q * self.length + p * self.cost).astype(np.int32), bd.cost, d64, d,
                    self.next_arc, self.along, self.target, self.scratch)
            d_source, cost = (int(x) for x in self.backend.to_host(
                xp.stack([d[source], self.along[source]])))
            if cost == INF:
                raise ZeroWeightLoop
            return d, d_source, (d_source - p * cost) // q, cost
        return run


class ZeroWeightLoop(RuntimeError):
    """The tight path from the source loops through arcs of zero length and cost: the
    tree kernels cannot sum along it (the CPU's search can)."""
