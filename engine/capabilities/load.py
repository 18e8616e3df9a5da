"""load (hidden): make a graph (open files, generate the default network, or take one
built already) and prepare a Workspace for it, which the engine then adopts. The
window's own job: not on the command line (which reads its files itself) or the menus."""
from __future__ import annotations

import inspect
import time
import warnings
from dataclasses import dataclass

from engine.capabilities import Capability, register
from engine.core.graph import RoadGraph
from engine.io.dimacs import SiblingWarning
from engine.workspace import Workspace


@dataclass(frozen=True)
class NewGraph:
    workspace: Workspace           # of the new graph, on the engine's backend
    seconds: float                 # making and preparing it
    notes: tuple[str, ...] = ()    # e.g. sibling files skipped because they do not match


def load(backend, params: dict, ctx) -> NewGraph:
    """``params["make"](progress=, cancel=) -> RoadGraph``, prepared on this thread."""
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SiblingWarning)
        graph = params["make"](progress=ctx.progress, cancel=ctx.cancel)
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, SiblingWarning))
    ctx.cancel.check()
    ctx.progress(0.97, "Preparing the map")
    _ = graph.tail, graph.xy            # fill the lazy caches on this thread
    workspace = Workspace(graph, backend)
    workspace.input_files = input_files(params.get("files") or ())
    workspace.prepare(graph.default_metric)     # compiled before the first click (Workspace.prepare)
    ctx.cancel.check()
    return NewGraph(workspace, time.perf_counter() - started, notes)


def input_files(file_paths, siblings: bool = True) -> tuple:
    """(label, path) of the files a graph is opened from and, with ``siblings``, of those
    a load may add from beside them (engine.io.companion_files): no save writes over one."""
    from engine.io import companion_files
    found = [("the graph file", str(p)) for p in file_paths]
    if siblings:
        found += [("the graph's sibling file", str(p)) for p in companion_files(file_paths)]
    return tuple(found)


def generate_default_network(num_nodes: int, seed: int, progress, cancel) -> RoadGraph:
    from engine.generate.network import generate_road_network
    accepted = inspect.signature(generate_road_network).parameters   # progress and cancel, if it takes them
    extra = {k: v for k, v in (("progress", progress), ("cancel", cancel)) if k in accepted}
    return generate_road_network(num_nodes=num_nodes, seed=seed, **extra)


def open_files(file_paths: list[str], progress, cancel) -> RoadGraph:
    from engine import io
    return io.load(file_paths, progress=progress, cancel=cancel)


LOAD = register(Capability(
    name="load", label="Loading a graph", help="make a graph and adopt it", params=(),
    run=load, hidden=True, makes_graph=True, order=1000))
