"""isochrone: the areas reachable from one node within given cut-offs (engine.sssp.isochrone),
from a shortest-path tree made as the tree capability makes it: PHAST when a hierarchy
of the metric is loaded or given, direct SSSP on the backend otherwise."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.capabilities import Capability, Param, register
from engine.capabilities.common import HIERARCHY, METRIC, NODE_BASED, SOURCE, use_hierarchy_file
from engine.capabilities.tree import PHAST, TreeAnswer, shortest_path_tree
from engine.export import written_lines
from engine.core.polylines import require_coordinates
from engine.core.units import Unit, parse_amounts, unit_of
from engine.model.defaults import restrictions_in_force

if TYPE_CHECKING:               # shapely is imported when an isochrone is made, not before
    from engine.sssp.isochrone import Isochrones


@dataclass(frozen=True)
class IsochroneAnswer:
    tree: TreeAnswer
    isochrones: Isochrones
    unit: Unit                 # the unit of the tree's metric (and of the cut-offs)


def cutoffs_in_raw_units(text, unit: Unit) -> list[float]:
    """Cut-offs as raw units of the metric: "300,600,900" (seconds or metres; raw units
    when the unit is not known), "5min,10min", "2km", or "5, 10, 15 min" (a unit after
    the last one applies to the bare numbers before it); a list of numbers is raw already."""
    if not isinstance(text, str):
        return [float(c) for c in text]
    parts = [p.strip() for p in text.split(",")]
    last = _UNIT_AFTER.search(parts[-1])
    if last and len(parts) > 1:
        parts = [p + last[1] if _BARE.match(p) else p for p in parts]
    joined = ",".join(parts)
    try:
        return parse_amounts(joined, unit)
    except ValueError as e:
        raise ValueError(f"--cutoffs: {str(e).replace(repr(joined), repr(text))}") from None


_UNIT_AFTER = re.compile(r"[0-9.]\s*([a-zµ]+)\s*$")
_BARE = re.compile(r"^[0-9]*\.?[0-9]+$")


def run(workspace, params: dict, ctx) -> IsochroneAnswer:
    graph = workspace.graph
    require_coordinates(graph, "an isochrone")
    params = dict(params)
    use_hierarchy_file(workspace, params)               # sets the metric to the hierarchy's
    metric = graph.metric_of(params.get("metric")).name
    unit = unit_of(graph.metric_units, metric)
    from engine.sssp.isochrone import checked_buffer_m, checked_cutoffs, isochrones
    cutoffs = list(checked_cutoffs(cutoffs_in_raw_units(params.get("cutoffs") or "", unit)))
    if params.get("buffer") is not None:                # refused before the tree is made
        checked_buffer_m(params["buffer"])
    node_based = bool(params.get("node_based"))
    method = PHAST if workspace.hierarchy_serves(metric, node_based) else params.get("method")
    tree = shortest_path_tree(workspace, {"source": params["source"], "metric": metric,
                                          "method": method or "auto", "node_based": node_based},
                              ctx)
    iso = isochrones(graph, tree.tree.distance, metric, cutoffs, params.get("buffer"),
                     source=int(params["source"]), progress=ctx.progress, cancel=ctx.cancel,
                     on_band=lambda k, band: ctx.record({"band": k, "cutoffs": cutoffs,
                                                         "geometry": band}))
    if params.get("geojson"):
        from engine.export import geojson
        geojson.write(params["geojson"], geojson.isochrone_collection(graph, iso, metric, unit,
                                                                      int(params["source"])))
    return IsochroneAnswer(tree, iso, unit)


def to_json(workspace, params: dict, a: IsochroneAnswer) -> dict:
    from engine.export.geojson import json_number
    g, iso = workspace.graph, a.isochrones
    return {"from": int(g.node_id[a.tree.tree.source]), "metric": a.tree.tree.metric,
            "unit": a.unit.name, "cutoffs": [json_number(c) for c in iso.cutoffs],
            "cutoffs_text": [a.unit.format(c) for c in iso.cutoffs],
            "area_km2": [round(m2 / 1e6, 3) for m2 in iso.area_m2],
            "buffer_m": round(iso.buffer_m, 1), "tree_method": a.tree.method,
            "tree_ms": round(a.tree.compute_ms, 4), "geometry_s": round(iso.seconds, 3),
            "backend": a.tree.backend, "turn_aware": a.tree.turn_aware,
            "restrictions": restrictions_in_force(g), "geojson": params.get("geojson")}


def text(r: dict) -> str:
    lines = [f"{r['metric']} isochrones from {r['from']} (buffer {r['buffer_m']:g} m):"]
    lines += [f"  within {t}: {km2:,.2f} km²" for t, km2 in zip(r["cutoffs_text"], r["area_km2"])]
    model = (f"turn-aware, {r['restrictions']:,} turn restrictions obeyed" if r["turn_aware"]
             else "node-based: ignores turn restrictions and turn costs")
    lines.append(f"  tree {r['tree_ms']:.2f} ms by {r['tree_method']} on {r['backend']} "
                 f"({model}); areas {r['geometry_s']:.2f} s")
    return "\n".join(lines + written_lines(r))


ISOCHRONE = register(Capability(
    name="isochrone", label="Service area (isochrones)",
    help="areas reachable from a node within cut-offs (GeoJSON polygons)",
    params=(SOURCE,
            Param("cutoffs", str, None, "increasing cut-offs: 300,600,900 (seconds or metres), "
                  "5min,10min, 5,10,15min or 1km,2km", required=True),
            METRIC, HIERARCHY, NODE_BASED,
            Param("method", str, "auto", "SSSP method without a hierarchy (see tree)", cli=False),
            Param("buffer", float, None, "buffer width in metres (default: half the median arc "
                  "length, 10-150 m)"),
            Param("geojson", str, None, "write the areas as a GeoJSON FeatureCollection",
                  file=True, output=True)),
    run=run, to_json=to_json, to_text=text,
    order=90, menu="&Tree", menu_text="&Service area of the tree"))
