"""tree: the shortest-path tree from one node, by a direct SSSP method on the
backend, or by PHAST on the loaded contraction hierarchy. In the routing model
(engine.model) both run on the turn-expanded graph where turns matter: a node's
distance is the least over the arcs entering it, and paths are read off the arc tree."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import (HIERARCHY, METRIC, NODE_BASED, SOURCE, file_ids,
                                        text_lines, use_hierarchy_file)
from engine.model.defaults import restrictions_in_force
from engine.export import written_lines
from engine.core import tree_bins
from engine.core.paths import Path, ShortestPathTree
from engine.core.tree_bins import TreeBins
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
    turn_aware: bool = True        # False for --node-based: the tree ignores turns
    path: Path | None = None       # --path-to: the path to that node, read off the tree
    bins: TreeBins | None = None   # the window's colouring (param "bins"): a byte per node


def shortest_path_tree(workspace, params: dict, ctx) -> TreeAnswer:
    if params.get("csv"):                   # its CSVW metadata beside it: checked before the work
        from engine.export.csv import metadata_path
        from engine.io.atomic import check_writable
        check_writable(metadata_path(params["csv"]), workspace.input_files)
    use_hierarchy_file(workspace, params)
    method = params.get("method") or "auto"
    if params.get("hierarchy"):             # a hierarchy given: "auto" means its query
        method = AUTO_WITH_HIERARCHY.get(method, method)
    run = ON_HIERARCHY.get(method, _direct_tree)
    answer = run(workspace, int(params["source"]), params.get("metric"), method,
                 bool(params.get("per_level")), bool(params.get("node_based")),
                 bool(params.get("bins")))
    if params.get("path_to") is not None and answer.path is None:
        from engine.core.paths import path_from_tree
        answer = replace(answer, path=path_from_tree(workspace.graph, answer.tree,
                                                     int(params["path_to"])))
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


def _bins_of(graph, tree: ShortestPathTree) -> TreeBins:
    """The window's colouring of a tree on the host (the same code as on the device)."""
    factor = unit_of(graph.metric_units, tree.metric).axis()[0]
    lows, highs = tree_bins.bin_edges(tree_bins.bodies(np, tree.distance), factor)
    return TreeBins(lows, highs, tree_bins.node_bins(np, tree.distance, lows))


def _direct_tree(workspace, source: int, metric, method: str, per_level: bool,
                 node_based: bool = False, bins: bool = False) -> TreeAnswer:
    """A direct SSSP method of engine.sssp on the backend (no preprocessing)."""
    model = workspace.model_for(metric, node_based)
    query = workspace.tree_query(metric, model)
    start = source if model is None else model.start(source)
    workspace.warm_once(("tree", query.metric, method, model is None),
                        lambda: query.tree(start, method))
    r = query.tree(start, method)
    tree = r.tree if model is None else model.road_tree(r.tree, source)
    return TreeAnswer(tree, r.method, method_label(r.method), workspace.backend.describe(),
                      r.compute_ms, r.total_ms, r.stats, turn_aware=not node_based,
                      bins=_bins_of(workspace.graph, tree) if bins else None)


def _phast_tree(workspace, source: int, metric, method: str, per_level: bool,
                node_based: bool = False, bins: bool = False) -> TreeAnswer:
    query = workspace.phast_query(metric)
    h = workspace.hierarchy
    model = workspace.model_for(h.metric)         # a turn-aware hierarchy's own model
    if not h.turn_aware:
        if model is not None and not node_based:
            raise ValueError("the hierarchy is node-based and ignores this graph's turns: "
                             "contract a turn-aware one, or ask for a node-based tree")
        model = None
    turn_aware = model is not None or not node_based
    if model is not None:                         # the road tree is made on the host
        start = model.start(source)
        workspace.warm_once(("phast", id(query)), lambda: query.tree(start, per_level))
        r = query.tree(start, per_level)
        tree = model.road_tree(r.tree, source)
        return TreeAnswer(tree, PHAST, PHAST_LABEL, workspace.backend.describe(), r.compute_ms,
                          r.total_ms, {}, r.level_ms, turn_aware=turn_aware,
                          bins=_bins_of(workspace.graph, tree) if bins else None)
    workspace.warm_once(("phast", id(query)), lambda: query.device_tree(source, per_level))
    return _kept_answer(workspace, query.device_tree(source, per_level), bins, turn_aware)


def _kept_answer(workspace, kept, bins: bool, turn_aware: bool) -> TreeAnswer:
    """A PHAST tree read where it was computed: the colour bins (a byte per node),
    then the whole tree copied into pinned host memory (hover, paths, exports read it)."""
    distances_ms = kept.compute_ms
    t0 = time.perf_counter()
    colours = kept.bins(unit_of(workspace.graph.metric_units, kept.metric).axis()[0]) \
        if bins else None
    t1 = time.perf_counter()
    tree = kept.to_host()                      # the parents are made here (PhastTree)
    t2 = time.perf_counter()
    stats = {"bins_ms": (t1 - t0) * 1000, "copy_ms": (t2 - t1) * 1000}
    return TreeAnswer(tree, PHAST, PHAST_LABEL, workspace.backend.describe(), kept.compute_ms,
                      distances_ms + (t2 - t0) * 1000, stats, kept.level_ms,
                      turn_aware=turn_aware, bins=colours)


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
    from engine.export.csv import metadata_path
    g, t = workspace.graph, a.tree
    reached = t.distance >= 0
    return {"from": int(g.node_id[t.source]), "metric": t.metric,
            "unit": unit_of(g.metric_units, t.metric).name, "method": a.method,
            "method_label": a.method_label, "backend": a.backend, "reached": int(reached.sum()),
            "nodes": g.num_nodes, "max_distance": int(t.distance.max()) if reached.any() else 0,
            "compute_ms": round(a.compute_ms, 4), "total_ms": round(a.total_ms, 4),
            "turn_aware": a.turn_aware, "restrictions": restrictions_in_force(g),
            **({"path_to": int(g.node_id[a.path.target]), "path": file_ids(g, a.path.nodes),
                "path_distance": a.path.distance} if a.path is not None else {}),
            "out": params.get("out"), "geojson": params.get("geojson"), "csv": params.get("csv"),
            **({"csv_metadata": metadata_path(params["csv"])} if params.get("csv") else {})}


def text(r: dict) -> str:
    unit = Unit(r.get("unit", ""))
    model = (f"turn-aware, {r['restrictions']:,} turn restrictions obeyed" if r["turn_aware"]
             else "node-based: ignores turn restrictions and turn costs")
    path = ([f"  path to {r['path_to']}, {unit.with_raw(r['path_distance'])}: "
             + " ".join(map(str, r["path"]))] if "path" in r else [])
    return "\n".join([text_lines([f"{r['metric']} tree from {r['from']}: reached {r['reached']:,} of "
                                  f"{r['nodes']:,} nodes, farthest {unit.with_raw(r['max_distance'])}",
                                  f"  {model}", *path,
                                  f"  computed in {r['compute_ms']:.2f} ms ({r['total_ms']:.2f} ms with "
                                  f"the copy to host) by {r['method']} on {r['backend']}"],
                                 r["out"], "tree (node_id, distance, parent)"),
                      *written_lines(r)])


TREE = register(Capability(
    name="tree", label="Shortest-path tree", help="shortest-path tree from one node",
    params=(SOURCE, METRIC, NODE_BASED,
            Param("path_to", int, None, "also give the path to this node, read off the tree",
                  flag="--path-to", node=True),
            Param("method", str, "auto", "SSSP method; phast needs a hierarchy", choices=method_names),
            Param("per_level", bool, False, "PHAST: time every level"),
            Param("bins", bool, False, "colour bins: every node's distance bin, one byte "
                  "(made on the device for PHAST)", cli=False),
            Param("out", str, None, "write node_id, distance, parent to this .npz", file=True,
                  output=True),
            HIERARCHY,
            Param("geojson", str, None, "write a GeoJSON Point per reached node (distance, "
                  "parent)", file=True, output=True),
            Param("csv", str, None, "write node_id, distance, parent (and lon, lat) as CSV",
                  file=True, output=True)),
    run=shortest_path_tree, to_json=to_json, to_text=text,
    order=30, menu="&Tree", menu_text="&Tree mode: shortest-path tree from a click", shortcut="T",
    policy=QUEUE))
