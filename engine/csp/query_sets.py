"""Vine's query sets for cost-budgeted paths (issue #14, step 6), built from a seed.

Vine (PVLDB 14(4)) draws src and dst at random and groups the pairs by the length of
their shortest path: Q1 in [d/8, d/4], Q2 in [d/4, d/2], Q3 >= d/2, where d is the
graph's diameter by length. We make the shared boundaries half-open (Q1 [d/8, d/4),
Q2 [d/4, d/2), Q3 [d/2, inf)) so that every pair has one set. The budget is drawn
uniformly between the least cost of any src->dst path and the cost of the
shortest-length path (the least cost among shortest-length paths, where several tie).
The oracle is SciPy's Dijkstra (engine.routing.reference).

d is an estimate, a lower bound of the true diameter: the largest eccentricity of a
few random sources, then of the farthest node found (one more sweep).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.sparse import csgraph

from engine.csp.reference import least_cost, reference_csp, reference_csp_compiled
from engine.core.graph import RoadGraph
from engine.routing.reference import scipy_matrix

SETS = ("Q1", "Q2", "Q3")
SYNTHETIC = "synthetic"
# Speed classes (km/h) of the synthetic cost; an arc's class comes from a hash of its id.
SYNTHETIC_SPEEDS_KMH = (30, 50, 70, 100)
SYNTHETIC_DESCRIPTION = ("synthetic travel time (ds): ceil(length * 36 / speed), speed in "
                         "{30, 50, 70, 100} km/h picked per arc by a hash of its arc id")
_BATCH = 8              # sources per SciPy call: memory is batch x n float64


def synthetic_cost(graph: RoadGraph, length_metric: str | None = None) -> np.ndarray:
    """A deterministic cost column for graphs with one metric: the travel time in
    deciseconds at a pseudo-random speed class per arc (a multiplicative hash of the
    arc id, so the same file gives the same costs everywhere)."""
    length = graph.metric(length_metric or _default_length(graph)).astype(np.int64)
    h = (np.arange(graph.num_arcs, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    speed = np.asarray(SYNTHETIC_SPEEDS_KMH, dtype=np.int64)[(h >> np.uint64(62)).astype(np.int64)]
    return ((length * 36 + speed - 1) // speed).astype(np.int32)   # ceil, in integers


def with_cost_metric(graph: RoadGraph, cost_metric: str,
                     length_metric: str | None = None) -> RoadGraph:
    """``graph`` itself, or for ``cost_metric == "synthetic"`` a copy that also has the
    synthetic cost column as metric "synthetic" (the arrays are shared)."""
    if cost_metric != SYNTHETIC or SYNTHETIC in graph.metrics:
        return graph
    metrics = {**graph.metrics, SYNTHETIC: synthetic_cost(graph, length_metric)}
    return dataclasses.replace(graph, metrics=metrics,
                               metric_units={**graph.metric_units, SYNTHETIC: "ds"})


def _default_length(graph: RoadGraph) -> str:
    return "distance" if "distance" in graph.metrics else graph.default_metric


def set_of(length: int, diameter: int) -> str | None:
    """The query set of a pair whose shortest length is ``length`` (exact integer test)."""
    if 2 * length >= diameter:
        return "Q3"
    if 4 * length >= diameter:
        return "Q2"
    if 8 * length >= diameter:
        return "Q1"
    return None


def _distances(matrix, sources) -> np.ndarray:
    """Integer distances from each source (rows), -1 where unreachable."""
    d = csgraph.dijkstra(matrix, directed=True, indices=np.asarray(sources))
    finite = np.isfinite(d)
    return np.where(finite, np.rint(np.where(finite, d, 0)), -1).astype(np.int64)


def estimate_diameter(graph: RoadGraph, length_metric: str, rng, samples: int = 8) -> int:
    """A lower bound of the diameter by length: the largest eccentricity of ``samples``
    random sources, then of the farthest node that any of them reaches."""
    matrix = scipy_matrix(graph, length_metric)
    sources = rng.choice(graph.num_nodes, size=min(samples, graph.num_nodes), replace=False)
    dist = _distances(matrix, sources)
    far = int(np.unravel_index(np.argmax(dist), dist.shape)[1])
    return int(max(dist.max(), _distances(matrix, [far]).max()))


def _shortest_path_cost(graph: RoadGraph, length, cost, from_src, src: int, dst: int) -> int:
    """The least cost of a shortest-length src->dst path (ties are common on road
    graphs, and the least one is what an unbounded budget answers): a Dijkstra by cost
    over the arcs of the shortest-path DAG of src, where every src->dst path has the
    least length. ``from_src`` holds the length distances from src (-1 unreachable)."""
    tail, head = graph.tail, graph.head
    tight = (from_src[tail] >= 0) & (from_src[tail] + length == from_src[head])
    arcs = np.flatnonzero(tight)
    first_out = np.searchsorted(tail[arcs], np.arange(graph.num_nodes + 1))
    return least_cost(first_out, head[arcs], cost[arcs], src, dst)


def _draw_pairs(graph: RoadGraph, length_metric: str, diameter: int, rng, per_set: int,
                targets_per_source: int, max_sources: int) -> dict[str, list[tuple]]:
    """Random (src, dst, shortest length) pairs, per set, until each set has ``per_set``."""
    matrix = scipy_matrix(graph, length_metric)
    pairs: dict[str, list[tuple]] = {name: [] for name in SETS}
    drawn = 0
    while any(len(p) < per_set for p in pairs.values()):
        if drawn >= max_sources:
            short = [n for n, p in pairs.items() if len(p) < per_set]
            raise ValueError(f"could not fill query set(s) {', '.join(short)} with {per_set} "
                             f"pairs from {drawn} random sources")
        sources = rng.integers(0, graph.num_nodes, size=_BATCH)
        dist = _distances(matrix, sources)
        drawn += _BATCH
        for row, src in enumerate(sources.tolist()):
            for dst in rng.integers(0, graph.num_nodes, size=targets_per_source).tolist():
                d = int(dist[row, dst])
                name = set_of(d, diameter) if d >= 0 and dst != src else None
                if name is not None and len(pairs[name]) < per_set:
                    pairs[name].append((src, dst, d))
    return pairs


def _costs_of_pairs(graph: RoadGraph, length_metric: str, cost_metric: str,
                    pairs: list[tuple]) -> dict[tuple, tuple[int, int]]:
    """(least cost, least cost of a shortest-length path) of every (src, dst, _) pair."""
    length = graph.metric(length_metric).astype(np.int64)
    cost = graph.metric(cost_metric).astype(np.int64)
    by_length, by_cost = scipy_matrix(graph, length_metric), scipy_matrix(graph, cost_metric)
    out = {}
    for k in range(0, len(pairs), _BATCH):
        batch = pairs[k:k + _BATCH]
        from_src = _distances(by_length, [p[0] for p in batch])
        least = _distances(by_cost, [p[0] for p in batch])
        for row, (src, dst, d) in enumerate(batch):
            out[(src, dst, d)] = (int(least[row, dst]),
                                  _shortest_path_cost(graph, length, cost, from_src[row],
                                                      src, dst))
    return out


def build_query_sets(graph: RoadGraph, length_metric: str | None = None,
                     cost_metric: str = "travel_time", seed: int = 0, per_set: int = 20,
                     targets_per_source: int = 4, max_sources: int = 20_000) -> dict:
    """Vine's Q1, Q2 and Q3 for ``graph`` from ``seed``, as the JSON-ready dict that
    scripts/csp_queries.py writes (node ids are the file's). ``cost_metric`` may be
    "synthetic" (see synthetic_cost) for graphs with one metric."""
    length_metric = length_metric or _default_length(graph)
    graph = with_cost_metric(graph, cost_metric, length_metric)
    graph.metric(cost_metric)                      # a clear KeyError for an unknown name
    rng = np.random.default_rng(seed)
    diameter = estimate_diameter(graph, length_metric, rng)
    pairs = _draw_pairs(graph, length_metric, diameter, rng, per_set, targets_per_source,
                        max_sources)
    costs = _costs_of_pairs(graph, length_metric, cost_metric,
                            [p for name in SETS for p in pairs[name]])
    sets = {}
    for name in SETS:
        sets[name] = []
        for src, dst, d in pairs[name]:
            least, on_shortest = costs[(src, dst, d)]
            sets[name].append({
                "source": int(graph.node_id[src]), "target": int(graph.node_id[dst]),
                "budget": int(rng.integers(least, on_shortest + 1)),
                "shortest_length": d, "least_cost": least, "shortest_path_cost": on_shortest})
    return {
        "graph": f"{graph.source or 'graph'} ({graph.num_nodes} nodes, {graph.num_arcs} arcs)",
        "length_metric": length_metric, "cost_metric": cost_metric,
        "cost_description": SYNTHETIC_DESCRIPTION if cost_metric == SYNTHETIC else None,
        "seed": seed, "diameter": diameter,
        "diameter_note": "estimate (lower bound): largest eccentricity of 8 random sources "
                         "and of the farthest node they reach",
        "shortest_path_cost_note": "least cost among the shortest-length paths",
        "ranges": {"Q1": [diameter / 8, diameter / 4], "Q2": [diameter / 4, diameter / 2],
                   "Q3": [diameter / 2, None]},
        "sets": sets,
    }


def internal_queries(graph: RoadGraph, query_sets: dict, name: str) -> list[tuple[int, int, int]]:
    """The queries of set ``name`` as (source, target, budget) in internal node indices."""
    queries = query_sets["sets"][name]
    src = graph.index_of([q["source"] for q in queries]).tolist()
    dst = graph.index_of([q["target"] for q in queries]).tolist()
    return [(s, t, q["budget"]) for s, t, q in zip(src, dst, queries)]


def add_reference_answers(graph: RoadGraph, query_sets: dict, progress=None,
                          names=SETS, compiled: bool = False) -> dict:
    """Add to every query of the sets ``names`` its answer by engine.csp.reference
    ("reference": {"length", "cost"}), so that slow reference runs (NY: seconds to
    minutes per query in pure Python) are paid once, when the file is written;
    ``compiled`` uses reference_csp_compiled (the same search in Numba). Returns
    ``query_sets``."""
    search = reference_csp_compiled if compiled else reference_csp
    graph = with_cost_metric(graph, query_sets["cost_metric"], query_sets["length_metric"])
    length = graph.metric(query_sets["length_metric"])
    cost = graph.metric(query_sets["cost_metric"])
    for name in names:
        for q, (s, t, budget) in zip(query_sets["sets"][name],
                                     internal_queries(graph, query_sets, name)):
            found = search(graph.first_out, graph.head, length, cost, s, t, budget)
            q["reference"] = None if found is None else {"length": found[0], "cost": found[1]}
            if progress is not None:
                progress(name, q)
    query_sets["reference_note"] = (f"answers by engine.csp.reference ({search.__name__}) "
                                    f"for {', '.join(names)}")
    return query_sets
