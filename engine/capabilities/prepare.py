"""prepare (hidden): after a graph load, build what the first route needs where turns
matter, as a job of its own: the turn model (engine.model) and its router, warmed up.

A load (engine.capabilities.load) shows the map without them, since at 1 M road nodes
they took about 4-10 s and 0.7 GB; this job runs right after it on the engine thread,
while the person already pans and zooms, so that the first click is answered at once.
It is a background job: a new load cancels it (between its steps)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from engine.capabilities import Capability, register
from engine.capabilities.common import METRIC


@dataclass(frozen=True)
class Prepared:
    metric: str
    router: str              # its label, e.g. "turn-aware bidirectional Dijkstra"
    expanded_nodes: int      # 0 where routes run on the road graph itself
    expanded_edges: int
    model_bytes: int         # the turn model's arrays (engine.model.expanded.model_bytes)
    seconds: float


def run(workspace, params: dict, ctx) -> Prepared:
    started = time.perf_counter()
    metric = workspace.graph.metric_of(params.get("metric")).name
    ctx.progress(0.0, "Preparing turn-aware routing: the allowed turns")
    workspace.turns()
    ctx.cancel.check()
    ctx.progress(0.4, "Preparing turn-aware routing: the turn model")
    model = workspace.model_for(metric)
    ctx.cancel.check()
    ctx.progress(0.6, "Preparing turn-aware routing: the router")
    router = workspace.router(metric)
    ctx.cancel.check()
    if model is None:
        return Prepared(metric, router.label, 0, 0, 0, time.perf_counter() - started)
    from engine.model.expanded import model_bytes
    return Prepared(metric, router.label, model.expanded.num_nodes, model.expanded.num_arcs,
                    model_bytes(model), time.perf_counter() - started)


PREPARE = register(Capability(
    name="prepare", label="Preparing turn-aware routing", help="build the turn model and its router",
    params=(METRIC,), run=run, hidden=True, order=1001))
