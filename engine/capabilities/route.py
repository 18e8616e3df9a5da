"""route: the shortest path between two nodes in the routing model (engine.model: turn
restrictions and turn costs obeyed), by the best router for the metric (the CH query
when a hierarchy of that metric and model is loaded, else bidirectional Dijkstra), or
by the CRP query under a decoder."""
from __future__ import annotations

import time
from dataclasses import dataclass

from engine.capabilities import QUEUE, Capability, register
from engine.capabilities.common import (CURRENT_METRIC, DECODER, GEOJSON, GPX, HIERARCHY, METRIC,
                                        NODE_BASED, PARTITION, SOURCE, TARGET, decoder_for, file_ids,
                                        use_hierarchy_file, use_partition_file)
from engine.export import write_path, written_lines
from engine.core.paths import Path
from engine.core.summary import RouteSummary, route_summary
from engine.core.units import Unit, format_duration, format_length, unit_of
from engine.model.defaults import restrictions_in_force


@dataclass(frozen=True)
class RouteAnswer:
    path: Path
    method: str             # the router's name: "ch" or "bidirectional_dijkstra"
    method_label: str       # "CH query" or "bidirectional Dijkstra"
    compute_ms: float       # the query alone, warm (no compilation)
    summary: RouteSummary
    turns: dict | None = None       # CRP: turns taken by type, and the turn costs paid
    steps: tuple | None = None      # CRP: (arcs, levels) of the path before unpacking (CrpQuery.steps)
    unit: Unit = Unit("")           # the unit of the path's cost
    turn_aware: bool = True         # False only for --node-based: the path ignores turns
    restrictions: int = 0           # banned turns in force on the graph


def route(workspace, params: dict, ctx) -> RouteAnswer:
    if params.get("decoder") or params.get("partition"):
        _refuse_flags_crp_ignores(params)
        return _crp_route(workspace, params)
    use_hierarchy_file(workspace, params)
    node_based = bool(params.get("node_based"))
    router = workspace.router(params.get("metric"), node_based=node_based)
    path, ms = _timed_route(workspace, router, params)
    g = workspace.graph
    turns = router.turns_taken(path) if hasattr(router, "turns_taken") else None
    label = router.label + (" (node-based: ignores turns)" if node_based else "")
    return _exported(workspace, params, RouteAnswer(
        path, router.name, label, ms, route_summary(g, path), turns,
        unit=unit_of(g.metric_units, path.metric), turn_aware=not node_based,
        restrictions=restrictions_in_force(g)))


def _timed_route(workspace, router, params: dict):
    """(path, ms): the query's time alone. The router's first query of this kind runs
    once untimed: its warm-up may not have found a path, and so not compiled the code
    that reads one off the search (seen: 157 ms for a 4-node graph, 0.02 ms warm). A
    router compiled ahead of time (``needs_warm_up = False``: SciPy's) runs once."""
    s, t = int(params["source"]), int(params["target"])
    if getattr(router, "needs_warm_up", True):
        workspace.warm_once(("route", id(router)), lambda: router.route(s, t))
    t0 = time.perf_counter()
    path = router.route(s, t)
    return path, (time.perf_counter() - t0) * 1000


def _exported(workspace, params: dict, a: RouteAnswer) -> RouteAnswer:
    """``a``, once the exports asked for (--geojson, --gpx) are written."""
    if params.get("geojson") or params.get("gpx"):
        write_path(workspace.graph, a.path, params,
                   *route_export(workspace.graph, a.path, a.unit, a.method, a.method_label,
                                 a.turn_aware))
    return a


def route_export(graph, path: Path, unit: Unit, method: str, method_label: str,
                 turn_aware: bool = True) -> tuple[dict, str, str]:
    """(properties, title, description) of a route for engine.export.write_path: its
    ends (file ids), cost (raw, its unit, in display form), length, travel time, method."""
    summary = route_summary(graph, path)
    seconds = summary.travel_time_s
    properties = {"from": int(graph.node_id[path.source]), "to": int(graph.node_id[path.target]),
                  "metric": path.metric, "cost": path.distance, "unit": unit.name,
                  "cost_text": unit.format(path.distance), "arcs": path.num_arcs,
                  "length_m": _rounded(summary.length_m), "travel_time_s": _rounded(seconds),
                  "method": method, "method_label": method_label,
                  "turn_aware": turn_aware, "restrictions": restrictions_in_force(graph)}
    title = f"RouteLab route from {properties['from']} to {properties['to']}"
    real = ([format_length(summary.length_m)] if summary.length_m is not None else []) + \
        ([format_duration(seconds)] if seconds is not None else [])
    description = ", ".join(real + [f"{path.metric} {properties['cost_text']} by {method_label}"])
    return properties, title, description


def _rounded(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def _refuse_flags_crp_ignores(params: dict) -> None:
    """A CRP route takes its costs from the decoder and needs no hierarchy: --metric,
    --hierarchy and --node-based would be ignored, so they are an error (the window's
    routes on the current metric carry its metric name, which is not a flag)."""
    if params.get("decoder") == CURRENT_METRIC:
        return
    given = [flag for name, flag in (("metric", "--metric"), ("hierarchy", "--hierarchy"),
                                     ("node_based", "--node-based")) if params.get(name)]
    if given:
        raise ValueError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not "
                         f"apply to a CRP route (--decoder or --partition): the decoder "
                         f"gives the costs, and CRP needs no hierarchy; drop "
                         f"{'it' if len(given) == 1 else 'them'} or the decoder")


def _crp_route(workspace, params: dict) -> RouteAnswer:
    """A turn-aware route by the CRP query: on the current customization when the
    decoder is CURRENT_METRIC (the window's routes), else on the decoder's (customized
    here unless the workspace already holds that decoder's)."""
    use_partition_file(workspace, params)
    if params.get("decoder") == CURRENT_METRIC:
        workspace.current_metric()                   # there is one, or a clear error
    else:
        decoder = decoder_for(workspace, params)
        current = workspace.cell_metric
        if current is None or current.decoder != decoder or current.overlay is not workspace.overlay():
            workspace.customize(decoder, timed=False)    # only the query's time is shown
    return crp_route(workspace, params)


def crp_route(workspace, params: dict) -> RouteAnswer:
    """The route from ``source`` to ``target`` on the workspace's current CRP
    customization, with the turns it takes and the query's steps."""
    from engine.crp.query.router import path_turns
    router = workspace.crp_router()
    path, ms = _timed_route(workspace, router, params)
    turns = path_turns(router, path.arcs)
    unit = Unit(turns["unit"] or "")                 # the decoder's: the path's metric is its name
    return _exported(workspace, params, RouteAnswer(
        path, router.name, router.label, ms, route_summary(workspace.graph, path, unit), turns,
        router.steps(), unit=unit,
        restrictions=restrictions_in_force(workspace.graph)))


def to_json(workspace, params: dict, a: RouteAnswer) -> dict:
    g, s = workspace.graph, a.summary
    return {
        "from": int(g.node_id[a.path.source]), "to": int(g.node_id[a.path.target]),
        "metric": a.path.metric, "distance": a.path.distance, "arcs": a.path.num_arcs,
        "unit": a.unit.name, "length_m": _rounded(s.length_m),
        "travel_time_s": _rounded(s.travel_time_s, 3), "path": file_ids(g, a.path.nodes),
        "compute_ms": round(a.compute_ms, 4), "method": a.method, "method_label": a.method_label,
        "turn_aware": a.turn_aware, "restrictions": a.restrictions,
        **({"turns": a.turns["by_type"], "turn_cost": a.turns["cost"]} if a.turns else {}),
        **{k: params[k] for k in ("geojson", "gpx") if params.get(k)},     # written by route
    }


def text(r: dict) -> str:
    cost = Unit(r.get("unit", "")).with_raw(r["distance"])
    extra = ([format_length(r["length_m"])] if r["length_m"] is not None else []) + \
        ([format_duration(r["travel_time_s"])] if r.get("travel_time_s") is not None else []) + \
        [f"{r['arcs']:,} arcs"]
    return "\n".join([f"{r['metric']} from {r['from']} to {r['to']}: {cost}",
                      "  " + ", ".join(extra),
                      "  path: " + " ".join(map(str, r["path"])),
                      *_turn_lines(r),
                      f"  computed in {r['compute_ms']:.3f} ms by {r['method_label']} (CPU)",
                      *written_lines(r)])


def _turn_lines(r: dict) -> list[str]:
    restrictions = r.get("restrictions", 0)
    if not r.get("turn_aware", True):
        return [f"  node-based: ignores the {restrictions:,} turn restrictions and all turn costs"]
    obeyed = f"; {restrictions:,} turn restrictions obeyed" if restrictions else ""
    if "turns" not in r:
        return [f"  turn-aware: no turn costs{obeyed}"] if obeyed else []
    taken = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in r["turns"].items() if n)
    paid = Unit(r.get("unit", "")).with_raw(r["turn_cost"])
    return [f"  turns: {taken or 'none'}; turn costs paid {paid}{obeyed}"]


ROUTE = register(Capability(
    name="route", label="Route", help="shortest path between two nodes",
    params=(SOURCE, TARGET, METRIC, HIERARCHY, NODE_BASED, PARTITION, DECODER, GEOJSON, GPX),
    run=route, to_json=to_json, to_text=text, needs_backend=False,
    order=20, menu="&Route", menu_text="&Route mode: start and destination by clicks", shortcut="R",
    policy=QUEUE))
