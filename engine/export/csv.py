"""CSV of a shortest-path tree: one row per node with its file id, distance and parent's
file id (empty where there is none), lon/lat when the graph has coordinates. A first
comment line names the metric and its unit."""
from __future__ import annotations

import csv
import io

import numpy as np

from engine.io.atomic import atomic_write
from engine.core.units import Unit

FORMAT = "CSV"


def write_tree(out, graph, tree, unit: Unit) -> None:
    parent = np.where(tree.parent >= 0, graph.node_id[np.maximum(tree.parent, 0)], -1)
    columns = [graph.node_id.tolist(), [d if d >= 0 else "" for d in tree.distance.tolist()],
               [p if p >= 0 else "" for p in parent.tolist()]]
    header = ["node_id", "distance", "parent"]
    if graph.has_coordinates:
        columns += [graph.lon.tolist(), graph.lat.tolist()]
        header += ["lon", "lat"]
    per_unit = (f" (1 {unit.symbol} = {unit.size:g} {'s' if unit.kind == 'time' else 'm'})"
                if unit.kind and unit.size != 1 else "")
    text = io.StringIO()
    text.write(f"# RouteLab shortest-path tree from node {graph.node_id[tree.source]}; distance: "
               f"{tree.metric} in {unit.name}{per_unit}; empty: unreached, or no parent\n")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*columns))
    with atomic_write(out) as f:
        f.write(text.getvalue().encode("utf-8"))
