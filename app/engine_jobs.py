"""The engine thread's internal jobs: what the window asks of the engine besides the
registered capabilities (load a graph, open or save a hierarchy, build, open or save
a bi-criteria hierarchy, save a cache).
Each runs on the engine thread as ``fn(worker, job, ctx)`` (worker: the EngineWorker,
job: its Job); no Qt here.
"""
from __future__ import annotations

import inspect
import time
import warnings
from dataclasses import dataclass
from typing import Callable

from engine.core.graph import RoadGraph
from engine.io.dimacs import SiblingWarning
from engine.core.jobs import JobContext
from engine.workspace import Workspace

from app.network_geometry import NetworkDrawing, build_drawing


@dataclass(frozen=True)
class LoadedGraph:
    serial: int                      # changes with every graph the worker adopts
    graph: RoadGraph
    drawing: NetworkDrawing | None   # None when the graph has no coordinates
    seconds: float
    notes: tuple[str, ...] = ()      # e.g. sibling files skipped because they do not match


def _load(worker, job, ctx: JobContext) -> LoadedGraph:
    """Make a graph (``params["make"](progress=, cancel=)``), prepare it, adopt it."""
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SiblingWarning)
        graph = job.params["make"](progress=ctx.progress, cancel=ctx.cancel)
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, SiblingWarning))
    ctx.cancel.check()
    ctx.progress(0.97, "Preparing the map")
    _ = graph.tail, graph.xy            # fill the lazy caches on this thread
    drawing = build_drawing(graph)
    workspace = Workspace(graph, worker.backend)
    workspace.router(graph.default_metric)      # compiled and warmed up before the first click
    ctx.cancel.check()
    worker.workspace, worker.drawing = workspace, drawing
    worker.serial += 1
    return LoadedGraph(worker.serial, graph, drawing, time.perf_counter() - started, notes)


def _open_hierarchy(worker, job, ctx: JobContext):
    return worker.workspace_for(job).load_hierarchy(job.params["path"])


def _save_hierarchy(worker, job, ctx: JobContext) -> str:
    h = worker.workspace_for(job).hierarchy
    if h is None:
        raise RuntimeError("there is no contraction hierarchy to save: contract the graph first")
    return str(h.save(job.params["path"]))


def _build_csp_hierarchy(worker, job, ctx: JobContext) -> dict:
    """The bi-criteria hierarchy of two metrics (kept in the workspace), with progress
    per contraction round and cancel between rounds."""
    p = job.params

    def progress(done: int, total: int) -> None:
        ctx.cancel.check()
        ctx.progress(done / max(total, 1), f"Contracting: {done:,} of {total:,} nodes")
    h = worker.workspace_for(job).csp_hierarchy(p["minimize"], p["budget_metric"],
                                                progress=progress)
    return _csp_hierarchy_answer(h)


def _open_csp_hierarchy(worker, job, ctx: JobContext) -> dict:
    p = job.params
    return _csp_hierarchy_answer(worker.workspace_for(job).load_csp_hierarchy(
        p["path"], p["minimize"], p["budget_metric"]))


def _save_csp_hierarchy(worker, job, ctx: JobContext) -> str:
    from engine.csp.hierarchy.file import save_pareto_hierarchy
    p = job.params
    h = worker.workspace_for(job).csp_hierarchy(p["minimize"], p["budget_metric"], build=False)
    if h is None:
        raise RuntimeError("there is no bi-criteria hierarchy of these metrics to save: build "
                           "one first")
    return str(save_pareto_hierarchy(h, p["path"]))


def _csp_hierarchy_answer(h) -> dict:
    """What the window keeps of a bi-criteria hierarchy (the arrays stay in the engine)."""
    return {"metrics": tuple(h.metrics), "summary": h.summary()}


def _save_cache(worker, job, ctx: JobContext) -> str:
    from engine.io.cache import save_cache
    return str(save_cache(worker.workspace_for(job).graph, job.params["path"]) or job.params["path"])


def _export(worker, job, ctx: JobContext) -> str:
    """Write a file the window prepared (``params["write"]() -> what was written``): a
    tree of NY as GeoJSON takes a second, which the window must not wait for."""
    return job.params["write"]()


INTERNAL_JOBS: dict[str, Callable] = {"load": _load, "open_hierarchy": _open_hierarchy,
                                      "save_hierarchy": _save_hierarchy, "save_cache": _save_cache,
                                      "export": _export, "csp_hierarchy": _build_csp_hierarchy,
                                      "open_csp_hierarchy": _open_csp_hierarchy,
                                      "save_csp_hierarchy": _save_csp_hierarchy}


def generate_default_network(num_nodes: int, seed: int, progress, cancel) -> RoadGraph:
    from engine.generate.network import generate_road_network
    accepted = inspect.signature(generate_road_network).parameters   # progress and cancel, if it takes them
    extra = {k: v for k, v in (("progress", progress), ("cancel", cancel)) if k in accepted}
    return generate_road_network(num_nodes=num_nodes, seed=seed, **extra)


def open_files(file_paths: list[str], progress, cancel) -> RoadGraph:
    from engine import io
    return io.load(file_paths, progress=progress, cancel=cancel)
