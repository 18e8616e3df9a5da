"""The bounds on the GPU: PHAST from the target on the reversed graph, once per metric.

The reversed graph (every arc turned around) is contracted once per metric (CU-CH,
engine.ch); a query is then two PHAST sweeps from the target, exact distances to it
for every node (about 0.4 ms each on NY). ``csp_tree`` picks each node's first arc on
a tight path to the target, and pointer jumping (``csp_jump``, ceil(log2 n) rounds)
sums the other metric along that tree path: the cost of the shortest completion and
the length of the least-cost completion, as engine.csp.bounds.cpu computes on the CPU.
The sweeps and the tree rounds are captured CUDA graphs; the cost's sweep and tree run
on a second stream beside the length's (each a chain of small kernels that leaves most
of the device idle).

A node whose tight path loops through zero-weight arcs never reaches the target by
pointer jumping; it gets no completion (INF), which only prunes less. The host falls
back to the CPU bounds for the reference paths when the source is such a node.
"""
from __future__ import annotations

import math

import numpy as np

from engine.ch import contract
from engine.core.graph import RoadGraph
from engine.ch.phast import PhastQuery

TREE_BLOCK = 256


class GpuBounds:
    """Per graph and metric pair: the two reversed hierarchies and the device arrays
    a query writes (``lb_l``, ``lb_c``, ``cost_along``, ``length_along``,
    ``length_next``, ``cost_next``); ``run(target)`` fills them."""

    def __init__(self, graph, length: np.ndarray, cost: np.ndarray, backend) -> None:
        xp = backend.xp
        self.backend, self.n = backend, graph.num_nodes
        self.reverse = reverse = RoadGraph.from_arcs(graph.num_nodes, graph.head, graph.tail,
                                                     {"length": length, "cost": cost})
        self.phast = {name: PhastQuery(contract(reverse, name, backend=backend), backend)
                      for name in ("length", "cost")}
        self.preparation_ms = sum(q.hierarchy.params["wall_ms"] for q in self.phast.values())
        self.first_out, self.head = xp.asarray(graph.first_out), xp.asarray(graph.head)
        self.len = xp.asarray(length.astype(np.int32))
        self.cost = xp.asarray(cost.astype(np.int32))
        n = self.n
        self.lb_l, self.lb_c = xp.empty(n, np.int64), xp.empty(n, np.int64)
        self.cost_along, self.length_along = xp.empty(n, np.int64), xp.empty(n, np.int64)
        self.length_next, self.cost_next = xp.empty(n, np.int32), xp.empty(n, np.int32)
        # the sweeps' distances in node order and the target: buffers the trees'
        # captured launches read
        self._d = {name: xp.empty(n, np.uint64) for name in self.phast}
        self._target = xp.zeros(1, np.int32)
        self.rounds = max(1, math.ceil(math.log2(max(n, 2))))
        # per metric: its tree's arrays, pointer-jumping scratch and captured launches
        self._tree_args = {
            "length": (self.len, self.cost, self.lb_l, self.length_next, self.cost_along),
            "cost": (self.cost, self.len, self.lb_c, self.cost_next, self.length_along)}
        self._scratch = {name: self.tree_scratch() for name in self.phast}
        self._trees = None
        self.side = xp.cuda.Stream(non_blocking=True)
        self.forked, self.joined = (xp.cuda.Event(disable_timing=True) for _ in range(2))

    def run(self, target: int) -> None:
        """Queue the two sweeps and the trees for ``target`` (no host wait): the cost's
        on the side stream, joined back before the caller's next work."""
        self.backend.to_device(np.array([target], dtype=np.int32), out=self._target)
        if self._trees is None:
            for name in ("csp_tree", "csp_jump", "csp_jump_end"):
                self.backend.kernel("csp", name)
            self._trees = {name: self.backend.capture(lambda name=name: self._queue_tree(name))
                           for name in self.phast}
        main = self.backend.xp.cuda.get_current_stream()
        self.forked.record(main)          # the side waits for the work queued before
        self.side.wait_event(self.forked)
        with self.side:
            self._sweep("cost", target)
            self._trees["cost"]()
            self.joined.record(self.side)
        self._sweep("length", target)
        self._trees["length"]()
        main.wait_event(self.joined)

    def _sweep(self, name: str, target: int) -> None:
        """Queue one PHAST sweep from ``target`` into its distances buffer."""
        self.phast[name].sweep_into(target, self._d[name])

    def _queue_tree(self, name: str) -> None:
        w, other, lb, next_arc, along = self._tree_args[name]
        self.tree(w, other, self._d[name], lb, next_arc, along, self._target,
                  self._scratch[name])

    def tree_scratch(self) -> tuple:
        """Pointer-jumping buffers for ``tree``: one set per caller that may run beside
        another (the two metrics' trees run on two streams)."""
        xp, n = self.backend.xp, self.n
        return xp.empty(n, np.int32), xp.empty(n, np.int32), xp.empty(n, np.int64)

    def tree(self, w, other, d, lb, next_arc, along, target_buffer, scratch) -> None:
        """From distances ``d`` (uint64) to the target under forward arc weights ``w``:
        ``lb`` (int64, INF none), each node's first tree arc and the sum of ``other``
        along its tree path (``along``; INF where a zero-weight loop hides it), with
        ``scratch`` from ``tree_scratch``."""
        b, n = self.backend, np.int32(self.n)
        ptr, tmp, spare = scratch
        b.launch("csp", "csp_tree", (self.first_out, self.head, w, other, d, n, target_buffer,
                                     lb, next_arc, ptr, along), threads=self.n, block=TREE_BLOCK)
        src_p, src_a, dst_p, dst_a = ptr, along, tmp, spare
        for _ in range(self.rounds):
            b.launch("csp", "csp_jump", (n, src_p, src_a, dst_p, dst_a),
                     threads=self.n, block=TREE_BLOCK)
            src_p, src_a, dst_p, dst_a = dst_p, dst_a, src_p, src_a
        if src_a is not along:
            along[...] = src_a
        b.launch("csp", "csp_jump_end", (n, target_buffer, src_p, along),
                 threads=self.n, block=TREE_BLOCK)

