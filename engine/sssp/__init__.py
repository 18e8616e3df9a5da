"""Shortest-path trees with no preprocessing: three GPU variants, each with a CPU twin.

``TreeQuery(graph, metric, backend).tree(source, method=...)`` runs one variant and
returns a ``ShortestPathTree`` (host NumPy arrays, the same type as the reference)
plus timings; the query object keeps the prepared graph for the next tree. Every
variant yields the same tree on both backends: distances are unique, and the parent
of a node is chosen from the final distances alone (engine/sssp/parents.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine.core import backend as backends
from engine.core.graph import RoadGraph
from engine.core.paths import ShortestPathTree, check_node
from engine.sssp import bellman_ford, locality, near_far
from engine.sssp.parents import parent_arcs
from engine.sssp.prepared import prepare
from engine.core.timing import Timer

# name -> (module, label). "auto" is DEFAULT_METHOD on the CPU and, on the GPU, the
# variant measured fastest on the graph at hand.
METHODS = {
    "near_far": (near_far, "near-far frontier (work-efficient)"),
    "kstep": (locality, "locality k-step relaxation"),
    "bellman_ford": (bellman_ford, "edge-parallel Bellman-Ford"),
}
DEFAULT_METHOD = "near_far"
UINT32_INF = np.iinfo(np.uint32).max


@dataclass(frozen=True)
class TreeResult:
    tree: ShortestPathTree
    method: str
    backend: str
    compute_ms: float            # distances + parents on the device
    total_ms: float              # including the copy back to host memory
    stats: dict = field(default_factory=dict)


def method_names() -> list[str]:
    return list(METHODS)


class TreeQuery:
    """Shortest-path trees on one graph, metric and backend. Owns the prepared graph
    (device arrays, per-variant tuning, buffers and captured launches), so repeated
    trees reuse them; made by whoever queries, dropped to free device memory."""

    def __init__(self, graph: RoadGraph, metric: str | None = None, backend=None) -> None:
        self.graph = graph
        self.backend = backend or backends.current()
        self.prepared = prepare(graph, metric, self.backend)
        self.metric = self.prepared.metric

    def tree(self, source: int, method: str = "auto", **options) -> TreeResult:
        """One-to-all shortest paths from internal node ``source``."""
        check_node(self.graph, source)
        if method != "auto" and method not in METHODS:
            raise ValueError(f"unknown SSSP method {method!r}; choose one of auto, {', '.join(METHODS)}")
        if method == "auto":
            method = self.fastest_method(int(source)) if self.backend.is_gpu else DEFAULT_METHOD
        prep, backend = self.prepared, self.backend
        timer = Timer(backend)
        t0 = time.perf_counter()
        d, stats, unreached = _distances(prep, METHODS[method][0], int(source), timer, options)
        with timer.step("parents"):      # the copies to the host come after, off the steps
            parent_arc = parent_arcs(prep, d, unreached, int(source), on_device=True)
        d_host = backend.to_host(d)
        parent_arc = backend.to_host(parent_arc)
        total_ms = (time.perf_counter() - t0) * 1000
        records = timer.records()
        distance = d_host.astype(np.int64)
        distance[d_host == unreached] = -1
        parent = np.full(self.graph.num_nodes, -1, dtype=np.int32)
        has_parent = parent_arc >= 0
        parent[has_parent] = self.graph.tail[parent_arc[has_parent]]
        tree = ShortestPathTree(int(source), prep.metric, distance, parent, parent_arc)
        return TreeResult(tree, method, backend.name, sum(r.ms for r in records), total_ms,
                          {**stats, "steps": {r.step: r.ms for r in records}})

    def fastest_method(self, source: int) -> str:
        """On the GPU the best variant depends on the graph (Bellman-Ford wins when the
        tree is shallow and the graph fits in cache, near-far on large graphs): time each
        once, after a warm-up, on the first "auto" query, and keep the winner."""
        tuning = self.prepared.tuning
        if "auto_method" not in tuning:
            times = {}
            for name in METHODS:
                self.tree(source, name)   # warm-up
                times[name] = self.tree(source, name).compute_ms
            tuning["auto_method"] = min(times, key=times.get)
        return tuning["auto_method"]


def shortest_path_tree(graph: RoadGraph, source: int, metric: str | None = None,
                       method: str = "auto", backend=None, **options) -> TreeResult:
    """One tree with a fresh TreeQuery; hold a TreeQuery for repeated trees."""
    return TreeQuery(graph, metric, backend).tree(source, method, **options)


def _distances(prep, module, source: int, timer, options):
    """(distances on the backend, stats, the value of unreached nodes)."""
    if not prep.backend.is_gpu:
        with timer.step("distances"):
            d, stats = module.run_cpu(prep, source, **options)
        return d, stats, int(np.iinfo(np.int64).max)
    with timer.step("distances"):
        d, stats = module.run_gpu(prep, source, dist64=False, **options)
        # a variant that tracks its dropped candidates says so; the others are checked
        overflowed = stats.pop("dropped") if "dropped" in stats else _may_have_overflowed(prep, d)
    if overflowed:
        with timer.step("distances (64-bit rerun)"):
            d, stats = module.run_gpu(prep, source, dist64=True, **options)
            stats.pop("dropped", None)      # a 64-bit run drops nothing that fits
    return d, stats, int(np.iinfo(d.dtype).max)


def _may_have_overflowed(prep, d) -> bool:
    """True when a 32-bit run could have dropped a candidate that did not fit.

    If every finite distance plus the largest arc cost stays below INF, no
    relaxation from a final distance overflowed, so the distances are exact.
    """
    if d.dtype != np.uint32:
        return False
    xp = prep.xp
    finite = xp.where(d == UINT32_INF, 0, d)
    return int(finite.max()) + prep.max_weight >= UINT32_INF
