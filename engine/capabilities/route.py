"""route: the shortest path between two nodes, by the best router for the metric
(the CH query when a hierarchy of that metric is loaded, else bidirectional Dijkstra)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from engine.capabilities import Capability, register
from engine.capabilities.common import (DECODER, DECODER_TEXT, HIERARCHY, METRIC, PARTITION,
                                        SOURCE, TARGET, decoder_for, file_ids, use_hierarchy_file,
                                        use_partition_file)
from engine.paths import Path
from engine.summary import RouteSummary, route_summary


@dataclass(frozen=True)
class RouteAnswer:
    path: Path
    method: str             # the router's name: "ch" or "bidirectional_dijkstra"
    method_label: str       # "CH query" or "bidirectional Dijkstra"
    compute_ms: float       # the query alone, warm (no compilation)
    summary: RouteSummary
    turns: dict | None = None       # CRP: turns taken by type, and the turn costs paid
    steps: tuple | None = None      # CRP: (arcs, levels) of the path before unpacking (CrpQuery.steps)


def route(workspace, params: dict, ctx) -> RouteAnswer:
    if params.get("decoder") or params.get("decoder_text") or params.get("partition"):
        return _crp_route(workspace, params)
    use_hierarchy_file(workspace, params)
    router = workspace.router(params.get("metric"))
    t0 = time.perf_counter()
    path = router.route(int(params["source"]), int(params["target"]))
    ms = (time.perf_counter() - t0) * 1000
    return RouteAnswer(path, router.name, router.label, ms, route_summary(workspace.graph, path))


def _crp_route(workspace, params: dict) -> RouteAnswer:
    """A turn-aware route by the CRP query on the decoder's customization (made here
    unless the workspace already holds that decoder's)."""
    from engine.crp.query import path_turns
    use_partition_file(workspace, params)
    decoder = decoder_for(workspace, params)
    current = workspace.cell_metric
    if current is None or current.decoder != decoder or current.overlay is not workspace.overlay():
        workspace.customize(decoder, timed=False)    # only the query's time is shown
    router = workspace.crp_router()
    t0 = time.perf_counter()
    path = router.route(int(params["source"]), int(params["target"]))
    ms = (time.perf_counter() - t0) * 1000
    return RouteAnswer(path, router.name, router.label, ms, route_summary(workspace.graph, path),
                       path_turns(router, path.arcs), router.steps())


def to_json(workspace, params: dict, a: RouteAnswer) -> dict:
    g, s = workspace.graph, a.summary
    return {
        "from": int(g.node_id[a.path.source]), "to": int(g.node_id[a.path.target]),
        "metric": a.path.metric, "distance": a.path.distance, "arcs": a.path.num_arcs,
        "length_m": None if s.length_m is None else round(s.length_m, 1),
        "travel_time_s": s.travel_time_s, "path": file_ids(g, a.path.nodes),
        "compute_ms": round(a.compute_ms, 4), "method": a.method, "method_label": a.method_label,
        **({"turns": a.turns["by_type"], "turn_cost": a.turns["cost"],
            "unit": a.turns["unit"]} if a.turns else {}),
    }


def text(r: dict) -> str:
    extra = ([f"{r['length_m'] / 1000:.2f} km"] if r["length_m"] is not None else []) + \
        [f"{r['arcs']} arcs"]
    return "\n".join([f"{r['metric']} from {r['from']} to {r['to']}: {r['distance']}",
                      "  " + ", ".join(extra),
                      "  path: " + " ".join(map(str, r["path"])),
                      *_turn_lines(r),
                      f"  computed in {r['compute_ms']:.3f} ms by {r['method_label']} (CPU)"])


def _turn_lines(r: dict) -> list[str]:
    if "turns" not in r:
        return []
    taken = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in r["turns"].items() if n)
    return [f"  turns: {taken or 'none'}; turn costs paid {r['turn_cost']:,} {r['unit'] or 'units'}"]


ROUTE = register(Capability(
    name="route", label="Route", help="shortest path between two nodes",
    params=(SOURCE, TARGET, METRIC, HIERARCHY, PARTITION, DECODER, DECODER_TEXT), run=route, result_kind="route",
    to_json=to_json, to_text=text, needs_backend=False))
