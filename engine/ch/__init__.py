"""CU-CH: contraction hierarchies built level by level (Karimi, Koppelman, Michael,
ICS'19). One module per step of the paper's Algorithm 1:

    score.py     SCORE    1-hop witness edge difference and tie-breakers
    select.py    SELECT   least important C·|V_l| nodes, then two rounds of Luby's MIS
    shortcut.py  SHORTCUT 2-hop witness search, merged shortcuts
    witness.py            then a bounded local Dijkstra for longer detours (not in the paper)
    update.py    UPDATE   levels, upward/downward arcs, how shortcuts unpack
    extract.py   EXTRACT  the next overlay in fresh arrays
    apsp.py      APSP     the core as a complete distance matrix

Every step is written once in array operations that run on NumPy and on CuPy, so
the CPU and the GPU build the same levels and shortcuts (all keys are integers and
every sort has a total order).
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np

from engine import backend as backends
from engine.ch.apsp import core_apsp
from engine.ch.extract import next_overlay
from engine.ch.hierarchy import Hierarchy
from engine.ch import device
from engine.ch.overlay import COUNT_CONTRACTED, COUNT_MAX_OUT_DEGREE, normalized
from engine.ch.score import importance
from engine.ch.select import independent_set
from engine.ch.shortcut import find_shortcuts
from engine.ch.update import ArcTable
from engine.graph import RoadGraph
from engine.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.timing import Timer

__all__ = ["contract", "Hierarchy"]

DEFAULT_K = 1025      # stop when fewer nodes remain; they form the core
DEFAULT_C = 0.3       # share of the live nodes that are candidates for U_l
STEPS = ("score", "select", "shortcut", "update", "extract")


def contract(graph: RoadGraph, metric: str | None = None, K: int = DEFAULT_K,
             C: float = DEFAULT_C, backend=None, progress: ProgressFn = no_progress,
             cancel: CancelToken = NEVER_CANCELLED, on_iteration=None) -> Hierarchy:
    """Contract ``graph`` under ``metric``; ``on_iteration(record)`` sees every level."""
    if K < 2:
        raise ValueError("K (the core size) must be at least 2")
    if not 0.0 < C <= 1.0:
        raise ValueError("C (the selection fraction) must be in (0, 1]")
    backend = backend or backends.current()
    xp = backend.xp
    metric = metric or graph.default_metric
    w = graph.metric(metric)
    n = graph.num_nodes
    originals = {"tail": graph.tail.astype(np.int64), "head": graph.head.astype(np.int64),
                 "weight": w.astype(np.int64)}
    tail, head, weight = (xp.asarray(originals[name]) for name in ("tail", "head", "weight"))
    table = ArcTable(xp, tail, head)
    g = normalized(xp, n, tail, head, weight, xp.arange(graph.num_arcs, dtype=xp.int64))
    alive = xp.ones(n, dtype=bool)
    live_ids = xp.arange(n, dtype=xp.int64)      # the nodes of G_l, ascending
    node_level = xp.zeros(n, dtype=xp.int32)
    iterations = []
    live = n
    level = 0
    started = time.perf_counter()
    while live >= K:
        cancel.check()
        timer = Timer(backend)
        out_first = g.out_first()
        with timer.step("score", level):
            score = importance(g, alive, out_first)
        with timer.step("select", level):
            chosen = independent_set(g, live_ids, score, C, level)
        with timer.step("shortcut", level):
            sc = find_shortcuts(g, chosen, out_first)
        with timer.step("update", level):
            ids = table.add_shortcuts(g, sc)
            table.record_leaving(g, chosen, level)
            node_level = xp.where(chosen, xp.int32(level), node_level)
        overlay, arcs_l = g, g.num_arcs
        with timer.step("extract", level):
            g = next_overlay(g, chosen, sc, ids, out_first)
        contracted, max_degree = _level_counts(xp, overlay, chosen, out_first)
        alive &= ~chosen
        live_ids = live_ids[~chosen[live_ids]]
        record = {"level": level, "nodes": live, "contracted": contracted,
                  "mis_fraction": round(contracted / max(1, int(C * live)), 4),
                  "avg_degree": round(arcs_l / max(live, 1), 3),
                  "max_degree": max_degree,
                  "candidates": sc.candidates, "shortcuts": int(sc.tail.size),
                  "arcs_next": g.num_arcs,
                  "ms": {r.step: round(r.ms, 4) for r in timer.records()}}
        iterations.append(record)
        if on_iteration is not None:
            on_iteration(record)
        live -= contracted
        level += 1
        progress(min(0.95, 1.0 - live / max(n, 1)), f"level {level}: {live:,} nodes left")
        if contracted == 0:           # cannot happen for a non-empty overlay; never loop forever
            break
    cancel.check()
    levels_ms = (time.perf_counter() - started) * 1000
    core_nodes = live_ids
    node_level[core_nodes] = level
    t0 = time.perf_counter()
    core_dist, core_pred = core_apsp(g, core_nodes, backend)
    if backend.is_gpu:
        xp.cuda.Stream.null.synchronize()
    apsp_ms = (time.perf_counter() - t0) * 1000
    up_harc, up_first, down_harc, down_first = table.level_arcs(node_level, level)
    if backend.is_gpu:
        xp.cuda.Stream.null.synchronize()
    built_ms = (time.perf_counter() - started) * 1000     # the hierarchy complete on the device
    host = partial(device.to_host, xp)
    arcs = table.host_arrays(originals)
    progress(1.0, f"contracted in {level} levels")
    return Hierarchy(
        metric=metric, num_nodes=n, num_levels=level, node_level=host(node_level),
        arc_tail=arcs["tail"], arc_head=arcs["head"], arc_weight=arcs["weight"],
        arc_child1=arcs["child1"], arc_child2=arcs["child2"],
        up_first=host(up_first.astype(xp.int64)), up_harc=host(up_harc),
        down_first=host(down_first.astype(xp.int64)), down_harc=host(down_harc),
        core_nodes=host(core_nodes), core_dist=host(core_dist), core_pred=host(core_pred),
        num_original_arcs=graph.num_arcs, iterations=iterations,
        metric_hash=graph.metric_of(metric).hash,
        params={"K": K, "C": C, "backend": backend.name, "levels_ms": round(levels_ms, 3),
                "apsp_ms": round(apsp_ms, 3), "built_ms": round(built_ms, 3),
                "wall_ms": round((time.perf_counter() - started) * 1000, 2)},
        graph=graph)


def _level_counts(xp, g, chosen, out_first):
    """(|U_l|, largest out-degree of G_l): on the GPU the kernels counted them."""
    if device.on_gpu(xp):
        counts = g.counters.get()
        return int(counts[COUNT_CONTRACTED]), int(counts[COUNT_MAX_OUT_DEGREE])
    degree = out_first[1:] - out_first[:-1]
    return int(chosen.sum()), int(degree.max()) if degree.size else 0
