"""A graph and metric prepared once for repeated SSSP runs on one backend.

Holds the CSR with uint32 costs, the arc list in Bellman-Ford's cache-friendly
order, and per-variant tuning measured on this graph; on the GPU the arrays live
on the device. Query objects (TreeQuery, PhastQuery) own one each.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.graph import RoadGraph

# Nodes per read-only-cache segment for Bellman-Ford's arc order: 4096 int32
# distances = 16 KiB, a fair share of an SM's L1 on recent GPUs.
SEGMENT_NODES = 4096


@dataclass(eq=False)
class Prepared:
    graph: RoadGraph
    metric: str
    backend: object
    n: int
    m: int
    first_out: object      # int32 [n+1]
    head: object           # int32 [m]
    tail: object           # int32 [m]
    weight: object         # uint32 [m]
    min_weight: int
    max_weight: int
    mean_weight: float
    bf_order: object = None          # arcs ordered by (head segment, tail segment)
    tuning: dict = field(default_factory=dict)          # measured per-variant settings
    device_state: dict = field(default_factory=dict)    # reusable buffers, CUDA graphs

    def state(self, key, make):
        """Device buffers (and captured graphs) of a variant, made once per key."""
        if key not in self.device_state:
            self.device_state[key] = make()
        return self.device_state[key]

    @property
    def xp(self):
        return self.backend.xp

    def bf_arcs(self):
        """(tail, head, weight) in Bellman-Ford's order, computed on first use."""
        if self.bf_order is None:
            g = self.graph
            order = np.lexsort((g.tail // SEGMENT_NODES, g.head // SEGMENT_NODES)).astype(np.int32)
            w = g.metric(self.metric).astype(np.uint32)
            xp = self.xp
            self.bf_order = (xp.asarray(g.tail[order]), xp.asarray(g.head[order]), xp.asarray(w[order]))
        return self.bf_order


def prepare(graph: RoadGraph, metric: str | None, backend) -> Prepared:
    """``graph`` under ``metric`` on ``backend``; the caller keeps it for its queries."""
    metric = metric or graph.default_metric
    w = graph.metric(metric)
    xp = backend.xp
    return Prepared(
        graph=graph, metric=metric, backend=backend, n=graph.num_nodes, m=graph.num_arcs,
        first_out=xp.asarray(graph.first_out), head=xp.asarray(graph.head),
        tail=xp.asarray(graph.tail), weight=xp.asarray(w.astype(np.uint32)),
        min_weight=int(w.min()) if w.size else 0, max_weight=int(w.max()) if w.size else 0,
        mean_weight=float(w.mean()) if w.size else 1.0)
