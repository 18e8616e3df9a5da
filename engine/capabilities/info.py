"""info: what a graph holds (sizes, metrics and their ranges, attributes, restrictions)."""
from __future__ import annotations

from engine.capabilities import Capability, Param, register
from engine.io import siblings_used
from engine.core.units import Unit


def describe(workspace, params: dict, ctx) -> dict:
    graph = workspace.graph
    restrictions = graph.turn_restrictions
    return {
        "source": graph.source, "nodes": graph.num_nodes, "arcs": graph.num_arcs,
        "siblings": siblings_used(graph),
        "metrics": {name: {"min": int(w.min()) if w.size else 0,
                           "max": int(w.max()) if w.size else 0,
                           "unit": graph.metric_units.get(name, "")}
                    for name, w in graph.metrics.items()},
        "coordinates": graph.has_coordinates,
        "arc_attributes": sorted(graph.arc_attrs),
        "arc_geometry": graph.geometry_first is not None,
        "turn_restrictions": len(restrictions) if restrictions is not None else 0,
        "license": graph.data_license,
        **_partition(workspace, params),
    }


def _partition(workspace, params: dict) -> dict:
    """The CRP partition's cells and boundary arcs per level, when one is given."""
    if params.get("partition"):
        workspace.load_partition(params["partition"])
    partition = getattr(workspace, "partition", None)     # any object with a graph will do
    if partition is None:
        return {}
    from engine.crp.partition.nested import partition_report
    return {"partition": partition_report(workspace.graph, partition)}


def text(r: dict) -> str:
    lines = [f"{r['source']}: {r['nodes']:,} nodes, {r['arcs']:,} arcs"]
    for name, m in r["metrics"].items():
        unit = Unit(m["unit"])
        lines.append(f"  metric {name}: {unit.format(m['min'])} .. {unit.format(m['max'])} "
                     f"(raw {m['min']:,}..{m['max']:,} {unit.name})" if unit.kind else
                     f"  metric {name}: {m['min']:,}..{m['max']:,}, unit not known")
    lines += [f"  coordinates: {'yes' if r['coordinates'] else 'no'}",
              f"  arc attributes: {', '.join(r['arc_attributes']) or 'none'}",
              f"  arc geometry: {'yes' if r['arc_geometry'] else 'no'}",
              f"  turn restrictions: {r['turn_restrictions']:,}"]
    if r["license"]:
        lines.append(f"  data: {r['license']}")
    lines += _partition_lines(r.get("partition"))
    if "load_seconds" in r:
        lines.append(f"  loaded in {r['load_seconds']:.3f} s")
    return "\n".join(lines)


def _partition_lines(p: dict | None) -> list[str]:
    if not p:
        return []
    lines = ["  CRP partition (level: cell size, cells, boundary arcs):"]
    for i, size in enumerate(p["cell_sizes_log2"]):
        mezz = "  (mezzanine: customization only)" if p["mezzanine"][i] else ""
        lines.append(f"    {i}: 2^{size}, {p['cells'][i]:,} cells, "
                     f"{p['boundary_arcs'][i]:,} boundary arcs{mezz}")
    return lines


INFO = register(Capability(
    name="info", label="Graph information", help="describe a graph",
    params=(Param("partition", str, None, "also report this CRP partition (.rlp): cells "
                  "and boundary arcs per level", file=True),),
    run=describe, to_json=lambda ws, params, result: dict(result),
    to_text=text, needs_backend=False,
    order=10, menu="&File", menu_text="Graph &information", shortcut="Ctrl+I"))
