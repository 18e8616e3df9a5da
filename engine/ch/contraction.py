"""CU-CH's Algorithm 1 (Karimi, Koppelman, Michael, ICS'19): contract a graph level by
level on one backend, each level through the steps score, select, shortcut, update
and extract (one module each, see engine.ch), then the core's all-pairs distances."""
from __future__ import annotations

import time

import numpy as np

from engine.core import backend as backends
from engine.ch.apsp import core_apsp
from engine.ch.extract import next_level_graph
from engine.ch.hierarchy import Hierarchy
from engine.ch.level_graph import normalized
from engine.ch.score import importance
from engine.ch.select import independent_set
from engine.ch.shortcut import find_shortcuts
from engine.ch.update import ArcTable
from engine.ch.parameters import CORE_BYTES_PER_PAIR, DEFAULT_C, DEFAULT_K, check_parameters
from engine.core.graph import RoadGraph
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.core.timing import Timer

# A level that contracts under STALLED of its nodes means a dense level graph (a metric
# without a road hierarchy, such as distance on a flat network: NY's core has degree
# ~100, a generated 2 M-node graph's ~1,000). Each further level then costs as much as
# an early one for a handful of nodes (hundreds of levels, minutes on a GPU), so the
# levels end there when the rest fits as the core.
STALLED = 0.02
MAX_STALLED_CORE = 8192
STEPS = ("score", "select", "shortcut", "update", "extract")


def contract(graph: RoadGraph, metric: str | None = None, K: int = DEFAULT_K,
             C: float = DEFAULT_C, backend=None, progress: ProgressFn = no_progress,
             cancel: CancelToken = NEVER_CANCELLED, on_iteration=None) -> Hierarchy:
    """Contract ``graph`` under ``metric``; ``on_iteration(record)`` sees every level."""
    check_parameters(graph.num_nodes, K, C)
    backend = backend or backends.current()
    metric = metric or graph.default_metric
    state = Contraction(graph, metric, backend)
    started = time.perf_counter()
    iterations = []
    while state.live >= K:
        cancel.check()
        record = state.contract_level(C, cancel)
        iterations.append(record)
        if on_iteration is not None:
            on_iteration(record)
        progress(min(0.95, 1.0 - state.live / max(graph.num_nodes, 1)),
                 f"level {state.level}: {state.live:,} nodes left")
        if record["contracted"] == 0:    # cannot happen for a non-empty level graph
            break
        if record["contracted"] < STALLED * record["nodes"] and core_fits(state.live):
            break
    cancel.check()
    levels_ms = (time.perf_counter() - started) * 1000
    arrays, apsp_ms = state.finish()
    built_ms = (time.perf_counter() - started) * 1000     # the hierarchy complete on the device
    params = {"K": K, "C": C, "backend": backend.name, "levels_ms": round(levels_ms, 3),
              "apsp_ms": round(apsp_ms, 3), "built_ms": round(built_ms, 3)}
    h = state.hierarchy(arrays, iterations, params)
    h.params["wall_ms"] = round((time.perf_counter() - started) * 1000, 2)
    progress(1.0, f"contracted in {state.level} levels")
    return h


def core_fits(nodes: int) -> bool:
    """Whether ``nodes`` may end the levels early as the core (see STALLED)."""
    from engine.io.limits import memory_budget
    return nodes <= MAX_STALLED_CORE and nodes * nodes * CORE_BYTES_PER_PAIR <= memory_budget()


class Contraction:
    """Algorithm 1 on one backend, between levels: the level graph G_l, its live
    nodes, the levels given so far and the arc table. ``contract`` drives it a
    level at a time; the step-parity tests read its state between levels."""

    def __init__(self, graph: RoadGraph, metric: str, backend) -> None:
        xp = backend.xp
        self.graph, self.metric, self.backend = graph, metric, backend
        n = graph.num_nodes
        self.originals = {"tail": graph.tail.astype(np.int64),
                          "head": graph.head.astype(np.int64),
                          "weight": graph.metric(metric).astype(np.int64)}
        tail, head, weight = (xp.asarray(self.originals[name]) for name in ("tail", "head", "weight"))
        self.table = ArcTable(backend, tail, head)
        self.g = normalized(backend, n, tail, head, weight,
                            xp.arange(graph.num_arcs, dtype=xp.int64))
        self.alive = xp.ones(n, dtype=bool)
        self.live_ids = xp.arange(n, dtype=xp.int64)      # the nodes of G_l, ascending
        self.node_level = xp.zeros(n, dtype=xp.int32)
        self.live = n
        self.level = 0

    def contract_level(self, C: float, cancel: CancelToken = NEVER_CANCELLED) -> dict:
        """Contract one independent set U_l of G_l; the level's record (sizes, step ms).
        Cancel is checked between steps: a level of a large graph takes ~0.5 s on the CPU."""
        xp, g, level, table = self.backend.xp, self.g, self.level, self.table
        timer = Timer(self.backend)
        out_first = g.out_first()
        with timer.step("score", level):
            score = importance(g, self.alive, out_first)
        cancel.check()
        with timer.step("select", level):
            chosen = independent_set(g, self.live_ids, score, C, level)
        cancel.check()
        with timer.step("shortcut", level):
            sc = find_shortcuts(g, chosen, out_first)
        cancel.check()
        with timer.step("update", level):
            ids = table.add_shortcuts(g, sc)
            table.record_leaving(g, chosen, level)
            self.node_level = xp.where(chosen, xp.int32(level), self.node_level)
        with timer.step("extract", level):
            self.g = next_level_graph(g, chosen, sc, ids, out_first)
        contracted, max_degree = g.level_counts(chosen, out_first)
        self.alive &= ~chosen
        self.live_ids = self.live_ids[~chosen[self.live_ids]]
        live = self.live
        record = {"level": level, "nodes": live, "contracted": contracted,
                  "mis_fraction": round(contracted / max(1, int(C * live)), 4),
                  "avg_degree": round(g.num_arcs / max(live, 1), 3),
                  "max_degree": max_degree,
                  "candidates": sc.candidates, "shortcuts": int(sc.tail.size),
                  "arcs_next": self.g.num_arcs,
                  "ms": {r.step: round(r.ms, 4) for r in timer.records()}}
        self.live -= contracted
        self.level += 1
        return record

    def finish(self) -> tuple[dict, float]:
        """The core (the live nodes) as a distance matrix and the up/down arc lists,
        complete on the device; and the APSP's wall ms."""
        backend = self.backend
        self.node_level[self.live_ids] = self.level
        t0 = time.perf_counter()
        core_dist, core_pred = core_apsp(self.g, self.live_ids, backend)
        backend.synchronize()
        apsp_ms = (time.perf_counter() - t0) * 1000
        up_harc, up_first, down_harc, down_first = self.table.level_arcs(self.node_level,
                                                                         self.level)
        backend.synchronize()
        return {"node_level": self.node_level, "core_nodes": self.live_ids,
                "core_dist": core_dist, "core_pred": core_pred,
                "up_harc": up_harc, "up_first": up_first.astype(backend.xp.int64),
                "down_harc": down_harc, "down_first": down_first.astype(backend.xp.int64)}, apsp_ms

    def hierarchy(self, arrays: dict, iterations: list, params: dict) -> Hierarchy:
        """The Hierarchy in host memory (pinned on the GPU): one copy per array."""
        graph, backend = self.graph, self.backend
        host = {name: backend.to_host(a, pinned=True) for name, a in arrays.items()}
        arcs = self.table.host_arrays(self.originals)
        return Hierarchy(
            metric=self.metric, num_nodes=graph.num_nodes, num_levels=self.level,
            arc_tail=arcs["tail"], arc_head=arcs["head"], arc_weight=arcs["weight"],
            arc_child1=arcs["child1"], arc_child2=arcs["child2"], **host,
            num_original_arcs=graph.num_arcs, iterations=iterations,
            metric_hash=graph.metric_of(self.metric).hash, params=params, graph=graph)
