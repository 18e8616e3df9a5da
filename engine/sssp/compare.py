"""Compare every direct SSSP method (and PHAST when a hierarchy serves the metric)
with the CPU reference from one source: best time of a few warm runs, and whether
every distance agrees with the reference.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine import sssp
from engine.routing import reference
from engine.core.jobs import JobContext

COMPARE_RUNS = 3            # timed runs per method after one warm-up run ...
COMPARE_BUDGET_S = 1.0      # ... fewer when a method has used this much time
REFERENCE = "reference"
REFERENCE_LABEL = "CPU reference (scipy Dijkstra)"


@dataclass(frozen=True)
class MethodTiming:
    name: str             # a METHODS key or REFERENCE
    label: str
    ms: float             # best of ``runs`` timed runs after a warm-up, host arrays included
    runs: int
    mismatches: int       # nodes whose distance differs from the reference's
    example: str = ""     # one mismatch, "node ID: got X, reference Y"


@dataclass(frozen=True)
class Comparison:
    source: int
    metric: str
    backend: str
    timings: tuple[MethodTiming, ...]   # METHODS order, the reference last

    @property
    def exact(self) -> bool:
        return all(t.mismatches == 0 for t in self.timings)

    @property
    def verdict(self) -> str:
        bad = [f"{t.name}: {t.mismatches:,} distances differ ({t.example})"
               for t in self.timings if t.mismatches]
        return "all exact" if not bad else "MISMATCH — " + "; ".join(bad)


def compare_methods(workspace, source: int, metric: str | None = None,
                    ctx: JobContext = JobContext()) -> Comparison:
    """Every SSSP method and the reference from internal node ``source``, in the routing
    model: where turns matter all of them (SciPy too) run on the turn model's expanded
    graph (engine.model), and a node's distance is the least over its arcs."""
    graph = workspace.graph
    metric = graph.metric_of(metric).name
    model = workspace.model_for(metric)
    searched = graph if model is None else model.expanded
    start = source if model is None else model.start(source)
    to_road = (lambda d: d) if model is None else \
        (lambda d: model.road_tree(_as_tree(d, start, metric), source).distance)
    query = workspace.tree_query(metric, model)
    runs = {name: _timed_tree(query, start, name, to_road) for name in sssp.METHODS}
    labels = {name: label for name, (_, label) in sssp.METHODS.items()}
    matrix = reference.scipy_matrix(searched, metric)
    runs[REFERENCE] = _timed_reference(searched, start, metric, matrix, to_road)
    labels[REFERENCE] = REFERENCE_LABEL
    measured = {}
    for i, (name, run) in enumerate(runs.items()):
        ctx.progress(i / len(runs), f"Comparing: {labels[name]}")
        measured[name] = _best_of(run, ctx.cancel)
    ctx.progress(1.0, "Comparing: checking distances")
    ref = measured[REFERENCE][0]
    timings = tuple(MethodTiming(name, labels[name], ms, n, *_mismatches(graph, d, ref))
                    for name, (d, ms, n) in measured.items())
    return Comparison(int(source), metric, workspace.backend.describe(), timings)


def _timed_tree(query, source: int, method: str, to_road):
    def run():
        r = query.tree(source, method)
        return to_road(r.tree.distance), r.total_ms
    return run


def _timed_reference(graph, source: int, metric: str, matrix, to_road):
    def run():
        t0 = time.perf_counter()
        tree = reference.sssp(graph, source, metric, matrix)
        return to_road(tree.distance), (time.perf_counter() - t0) * 1000
    return run


def _as_tree(distance, source: int, metric: str):
    """Distances alone as a tree, for TurnModel.road_tree (which reads parents too)."""
    from engine.core.paths import ShortestPathTree
    none = np.full(distance.size, -1, dtype=np.int32)
    return ShortestPathTree(source, metric, distance, none, none)


def _best_of(run, token) -> tuple[np.ndarray, float, int]:
    """(distances, best ms, timed runs): one warm-up run, then up to COMPARE_RUNS timed
    ones within COMPARE_BUDGET_S."""
    token.check()
    run()
    times, spent = [], time.perf_counter()
    while len(times) < COMPARE_RUNS and (not times or time.perf_counter() - spent < COMPARE_BUDGET_S):
        token.check()
        distance, ms = run()
        times.append(ms)
    return distance, min(times), len(times)


def _mismatches(graph, distance: np.ndarray, ref: np.ndarray) -> tuple[int, str]:
    bad = np.flatnonzero(distance != ref)
    if bad.size == 0:
        return 0, ""
    v = int(bad[0])
    return int(bad.size), f"node {graph.node_id[v]}: got {distance[v]}, reference {ref[v]}"
