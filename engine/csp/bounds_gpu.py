"""The bounds on the GPU: PHAST from the target on the reversed graph, once per metric.

The reversed graph (every arc turned around) is contracted once per metric (CU-CH,
engine.ch); a query is then two PHAST sweeps from the target, exact distances to it
for every node (about 0.4 ms each on NY). ``csp_tree`` picks each node's first arc on
a tight path to the target, and pointer jumping (``csp_jump``, ceil(log2 n) rounds)
sums the other metric along that tree path: the cost of the shortest completion and
the length of the least-cost completion, as engine.csp.bounds computes on the CPU.
The sweeps and the tree rounds are captured CUDA graphs.

A node whose tight path loops through zero-weight arcs never reaches the target by
pointer jumping; it gets no completion (INF), which only prunes less. The host falls
back to the CPU bounds for the reference paths when the source is such a node.
"""
from __future__ import annotations

import math

import numpy as np

from engine.ch import contract
from engine.graph import RoadGraph
from engine.phast import PhastQuery, _gpu_distances

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
        self._ptr = [xp.empty(n, np.int32) for _ in range(2)]
        self._along = xp.empty(n, np.int64)
        self.rounds = max(1, math.ceil(math.log2(max(n, 2))))
        self._trees = None

    def run(self, target: int) -> None:
        """Queue the two sweeps and the trees for ``target`` (no host wait)."""
        d = {name: _gpu_distances(q.index, [int(target)], False)[0][0]
             for name, q in self.phast.items()}
        if self._trees is None:
            for name in ("csp_tree", "csp_jump", "csp_jump_end"):
                self.backend.kernel("csp", name)
            self._d = d                     # PHAST writes into the same buffers every time
            self._trees = self.backend.capture(self._queue_trees)
        self._trees()

    def _queue_trees(self) -> None:
        target = _sources(self.phast["length"])   # its sources buffer holds the target
        self.tree(self.len, self.cost, self._d["length"], self.lb_l, self.length_next,
                  self.cost_along, target)
        self.tree(self.cost, self.len, self._d["cost"], self.lb_c, self.cost_next,
                  self.length_along, target)

    def tree(self, w, other, d, lb, next_arc, along, target_buffer) -> None:
        """From distances ``d`` (uint64) to the target under forward arc weights ``w``:
        ``lb`` (int64, INF none), each node's first tree arc and the sum of ``other``
        along its tree path (``along``; INF where a zero-weight loop hides it)."""
        b, n = self.backend, np.int32(self.n)
        ptr, tmp = self._ptr
        b.launch("csp", "csp_tree", (self.first_out, self.head, w, other, d, n, target_buffer,
                                     lb, next_arc, ptr, along), threads=self.n, block=TREE_BLOCK)
        src_p, src_a, dst_p, dst_a = ptr, along, tmp, self._along
        for _ in range(self.rounds):
            b.launch("csp", "csp_jump", (n, src_p, src_a, dst_p, dst_a),
                     threads=self.n, block=TREE_BLOCK)
            src_p, src_a, dst_p, dst_a = dst_p, dst_a, src_p, src_a
        if src_a is not along:
            along[...] = src_a
        b.launch("csp", "csp_jump_end", (n, target_buffer, src_p, along),
                 threads=self.n, block=TREE_BLOCK)


def _sources(query: PhastQuery):
    """The device int32 [1] that holds the last PHAST source (our target)."""
    return query.index.graphs[1].sources
