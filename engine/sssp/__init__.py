"""Shortest-path trees with no preprocessing: three GPU variants, each with a CPU twin.

``shortest_path_tree(graph, source, method=...)`` runs one variant on the current
backend and returns a ``ShortestPathTree`` (host NumPy arrays, the same type as
the reference) plus timings. Every variant yields the same tree on both backends:
distances are unique, and the parent of a node is chosen from the final distances
alone (engine/sssp/parents.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine import backend as backends
from engine.graph import RoadGraph
from engine.reference import ShortestPathTree
from engine.sssp import bellman_ford, locality, near_far
from engine.sssp.parents import parent_arcs
from engine.sssp.prepared import prepare
from engine.timing import Timer

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


def shortest_path_tree(graph: RoadGraph, source: int, metric: str | None = None,
                       method: str = "auto", backend=None, **options) -> TreeResult:
    """One-to-all shortest paths from internal node ``source``."""
    if not 0 <= int(source) < graph.num_nodes:
        raise IndexError(f"node index {source} out of range 0..{graph.num_nodes - 1}")
    if method != "auto" and method not in METHODS:
        raise ValueError(f"unknown SSSP method {method!r}; choose one of auto, {', '.join(METHODS)}")
    backend = backend or backends.current()
    prep = prepare(graph, metric, backend)
    if method == "auto":
        method = _fastest_method(graph, int(source), prep) if backend.is_gpu else DEFAULT_METHOD
    module = METHODS[method][0]
    timer = Timer(backend)
    t0 = time.perf_counter()
    if backend.is_gpu:
        with timer.step("distances"):
            d, stats = module.run_gpu(prep, int(source), dist64=False, **options)
        if _may_have_overflowed(prep, d):
            with timer.step("distances (64-bit rerun)"):
                d, stats = module.run_gpu(prep, int(source), dist64=True, **options)
        unreached = int(np.iinfo(d.dtype).max)
    else:
        with timer.step("distances"):
            d, stats = module.run_cpu(prep, int(source), **options)
        unreached = int(np.iinfo(np.int64).max)
    with timer.step("parents"):
        parent_arc = parent_arcs(prep, d, unreached, int(source))
    d_host = backend.to_host(d)
    total_ms = (time.perf_counter() - t0) * 1000
    records = timer.records()
    if "_iterations" in stats:   # read back from the device only now, off the clock
        stats["iterations"] = int(stats.pop("_iterations").get()[0])
    distance = d_host.astype(np.int64)
    distance[d_host == unreached] = -1
    parent = np.full(graph.num_nodes, -1, dtype=np.int32)
    has_parent = parent_arc >= 0
    parent[has_parent] = graph.tail[parent_arc[has_parent]]
    tree = ShortestPathTree(int(source), prep.metric, distance, parent, parent_arc)
    return TreeResult(tree, method, backend.name, sum(r.ms for r in records), total_ms,
                      {**stats, "steps": {r.step: r.ms for r in records}})


def _fastest_method(graph, source: int, prep) -> str:
    """On the GPU the best variant depends on the graph (Bellman-Ford wins when the
    tree is shallow and the graph fits in cache, near-far on large graphs): time each
    once, after a warm-up, on the first query of a graph, and keep the winner."""
    if "auto_method" not in prep.tuning:
        times = {}
        for name in METHODS:
            shortest_path_tree(graph, source, prep.metric, name, prep.backend)   # warm-up
            times[name] = shortest_path_tree(graph, source, prep.metric, name, prep.backend).compute_ms
        prep.tuning["auto_method"] = min(times, key=times.get)
    return prep.tuning["auto_method"]


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
