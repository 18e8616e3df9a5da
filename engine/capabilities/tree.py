"""tree: the shortest-path tree from one node, by a direct SSSP method on the
backend, or by PHAST on the loaded contraction hierarchy."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import HIERARCHY, METRIC, SOURCE, text_lines, use_hierarchy_file
from engine.export import written_lines
from engine.core.paths import ShortestPathTree
from engine.core.units import Unit, unit_of

PHAST = "phast"
PHAST_LABEL = "PHAST (hierarchy)"


def method_names() -> tuple:
    from engine.sssp import METHODS
    return ("auto",) + tuple(METHODS) + (PHAST,)


def method_label(name: str) -> str:
    """A tree method's name as people read it."""
    from engine.sssp import METHODS
    return PHAST_LABEL if name == PHAST else METHODS[name][1] if name in METHODS else name


@dataclass(frozen=True)
class TreeAnswer:
    tree: ShortestPathTree
    method: str           # the method that ran ("auto" resolved)
    method_label: str
    backend: str          # e.g. "GPU: NVIDIA H100 80GB HBM3 (80 GiB)"
    compute_ms: float     # on the device, warm
    total_ms: float       # with the copy to host memory
    stats: dict = field(default_factory=dict)
    level_ms: dict | None = None   # PHAST: {"up": [ms per level], "core": ms, "down": [...]}


def shortest_path_tree(workspace, params: dict, ctx) -> TreeAnswer:
    use_hierarchy_file(workspace, params)
    method = params.get("method") or "auto"
    if params.get("hierarchy"):             # a hierarchy given: "auto" means its query
        method = AUTO_WITH_HIERARCHY.get(method, method)
    run = ON_HIERARCHY.get(method, _direct_tree)
    answer = run(workspace, int(params["source"]), params.get("metric"), method,
                 bool(params.get("per_level")))
    if params.get("out"):
        _save_tree(workspace.graph, answer.tree, params["out"])
    _export_tree(workspace.graph, answer.tree, params)
    return answer


def _export_tree(graph, tree: ShortestPathTree, params: dict) -> None:
    """The --geojson (a Point per reached node) and --csv (a row per node) files."""
    unit = unit_of(graph.metric_units, tree.metric)
    if params.get("geojson"):
        from engine.export import geojson
        geojson.write_tree(params["geojson"], graph, tree, unit)
    if params.get("csv"):
        from engine.export import csv
        csv.write_tree(params["csv"], graph, tree, unit)


def _direct_tree(workspace, source: int, metric, method: str, per_level: bool) -> TreeAnswer:
    """A direct SSSP method of engine.sssp on the backend (no preprocessing)."""
    query = workspace.tree_query(metric)
    workspace.warm_once(("tree", query.metric, method), lambda: query.tree(source, method))
    r = query.tree(source, method)
    return TreeAnswer(r.tree, r.method, method_label(r.method), workspace.backend.describe(),
                      r.compute_ms, r.total_ms, r.stats)


def _phast_tree(workspace, source: int, metric, method: str, per_level: bool) -> TreeAnswer:
    query = workspace.phast_query(metric)
    workspace.warm_once(("phast", id(query)), lambda: query.tree(source, per_level))
    r = query.tree(source, per_level)
    return TreeAnswer(r.tree, PHAST, PHAST_LABEL, workspace.backend.describe(), r.compute_ms,
                      r.total_ms, {}, r.level_ms)


# The tree methods that run on a contraction hierarchy (any other is a direct method).
ON_HIERARCHY = {PHAST: _phast_tree}
AUTO_WITH_HIERARCHY = {"auto": PHAST}


def _save_tree(graph, tree: ShortestPathTree, out: str) -> None:
    parent = np.where(tree.parent >= 0, graph.node_id[np.maximum(tree.parent, 0)], -1)
    from engine.io.atomic import atomic_write
    # atomic: a failed write keeps the previous file; keep the name as given
    # (np.savez would add .npz to a name)
    with atomic_write(out) as f:
        np.savez(f, node_id=graph.node_id, distance=tree.distance, parent=parent.astype(np.int64))


def to_json(workspace, params: dict, a: TreeAnswer) -> dict:
    g, t = workspace.graph, a.tree
    reached = t.distance >= 0
    return {"from": int(g.node_id[t.source]), "metric": t.metric,
            "unit": unit_of(g.metric_units, t.metric).name, "method": a.method,
            "method_label": a.method_label, "backend": a.backend, "reached": int(reached.sum()),
            "nodes": g.num_nodes, "max_distance": int(t.distance.max()) if reached.any() else 0,
            "compute_ms": round(a.compute_ms, 4), "total_ms": round(a.total_ms, 4),
            "out": params.get("out"), "geojson": params.get("geojson"), "csv": params.get("csv")}


def text(r: dict) -> str:
    farthest = Unit(r.get("unit", "")).with_raw(r["max_distance"])
    return "\n".join([text_lines([f"{r['metric']} tree from {r['from']}: reached {r['reached']:,} of "
                                  f"{r['nodes']:,} nodes, farthest {farthest}",
                                  f"  computed in {r['compute_ms']:.2f} ms ({r['total_ms']:.2f} ms with "
                                  f"the copy to host) by {r['method']} on {r['backend']}"],
                                 r["out"], "tree (node_id, distance, parent)"),
                      *written_lines(r)])


TREE = register(Capability(
    name="tree", label="Shortest-path tree", help="shortest-path tree from one node",
    params=(SOURCE, METRIC,
            Param("method", str, "auto", "SSSP method; phast needs a hierarchy", choices=method_names),
            Param("per_level", bool, False, "PHAST: time every level"),
            Param("out", str, None, "write node_id, distance, parent to this .npz", file=True),
            HIERARCHY,
            Param("geojson", str, None, "write a GeoJSON Point per reached node (distance, "
                  "parent)", file=True),
            Param("csv", str, None, "write node_id, distance, parent (and lon, lat) as CSV",
                  file=True)),
    run=shortest_path_tree, to_json=to_json, to_text=text,
    order=30, menu="&Tree", menu_text="&Tree mode: shortest-path tree from a click", shortcut="T",
    policy=QUEUE))
