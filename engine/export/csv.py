"""CSV of a shortest-path tree: one row per node with its file id, distance and parent's
file id (empty where there is none), lon/lat when the graph has coordinates.

The file is RFC 4180: the header row first, CRLF line ends, fields quoted where needed
(Python's csv module). What a CSV reader would take for data stays out of it: the
columns' meaning (the metric, its unit, the source node) and the data's attribution
("© OpenStreetMap contributors") go to ``NAME.csv-metadata.json`` beside it, the W3C
CSVW metadata file (Metadata Vocabulary for Tabular Data), where CSVW tools look for a
table's description and plain CSV readers never look. Both are written atomically.
"""
from __future__ import annotations

import csv
import io
import json
import os

import numpy as np

from engine.io.atomic import atomic_write, check_writable
from engine.core.units import Unit

FORMAT = "CSV"
METADATA_SUFFIX = "-metadata.json"      # CSVW: the metadata of T.csv is T.csv-metadata.json


def metadata_path(out) -> str:
    """The CSVW metadata file that describes the CSV ``out``."""
    return os.fspath(out) + METADATA_SUFFIX


def write_tree(out, graph, tree, unit: Unit) -> str:
    """Write the tree to ``out`` and its description to ``metadata_path(out)``; returns
    the latter. Both targets are checked before either is written."""
    meta = metadata_path(out)
    check_writable(meta)
    check_writable(out)
    parent = np.where(tree.parent >= 0, graph.node_id[np.maximum(tree.parent, 0)], -1)
    columns = [graph.node_id.tolist(), [d if d >= 0 else "" for d in tree.distance.tolist()],
               [p if p >= 0 else "" for p in parent.tolist()]]
    header = ["node_id", "distance", "parent"]
    if graph.has_coordinates:
        columns += [graph.lon.tolist(), graph.lat.tolist()]
        header += ["lon", "lat"]
    text = io.StringIO(newline="")
    writer = csv.writer(text)                # RFC 4180: CRLF, minimal quoting
    writer.writerow(header)
    writer.writerows(zip(*columns))
    with atomic_write(meta) as f:
        f.write(json.dumps(tree_metadata(out, graph, tree, unit, header), indent=2,
                           ensure_ascii=False).encode("utf-8") + b"\n")
    with atomic_write(out) as f:
        f.write(text.getvalue().encode("utf-8"))
    return meta


def tree_metadata(out, graph, tree, unit: Unit, header: list[str]) -> dict:
    """The CSVW description of a tree's CSV: its title, source, attribution (dc:rights)
    and each column's meaning, the distance's unit included."""
    source = int(graph.node_id[tree.source])
    per_unit = (f"; 1 {unit.symbol} = {unit.size:g} {'s' if unit.kind == 'time' else 'm'}"
                if unit.kind and unit.size != 1 else "")
    said = {"node_id": ("integer", "the node's id in the graph file"),
            "distance": ("integer", f"{tree.metric} from node {source}, "
                                    + (f"in {unit.name} ({unit.words}{per_unit})" if unit.kind
                                       else "its unit not known") + "; empty: not reached"),
            "parent": ("integer", "the node before it on its shortest path (file id); empty: "
                                  "the source, or not reached"),
            "lon": ("double", "longitude, WGS 84 degrees"),
            "lat": ("double", "latitude, WGS 84 degrees")}
    meta = {"@context": "http://www.w3.org/ns/csvw",
            "url": os.path.basename(os.fspath(out)),
            "dc:title": f"RouteLab shortest-path tree from node {source} ({tree.metric})",
            "dc:creator": "RouteLab",
            "dc:source": graph.source or "",
            "tableSchema": {"columns": [{"name": name, "titles": name, "datatype": said[name][0],
                                         "dc:description": said[name][1]} for name in header],
                            "primaryKey": "node_id"}}
    if graph.data_license:
        meta["dc:rights"] = graph.data_license
    return meta
