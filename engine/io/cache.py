"""RouteLab's own graph cache: every array of a RoadGraph in one uncompressed ``.npz``.

Saving and reopening is bit-identical. Reading checks the format tag and the CSR's
consistency, so a damaged or foreign file is a LoadError, never a broken graph.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from engine.graph import RoadGraph, TurnRestrictions
from engine.io.errors import LoadError

FORMAT = "routelab-graph"
VERSION = 1


def save_cache(graph: RoadGraph, path) -> Path:
    path = Path(path)
    arrays = {"first_out": graph.first_out, "head": graph.head, "node_id": graph.node_id}
    for name, w in graph.metrics.items():
        arrays[f"metric/{name}"] = w
    for name, values in graph.arc_attrs.items():
        arrays[f"attr/{name}"] = values
    if graph.lon is not None:
        arrays["lon"], arrays["lat"] = graph.lon, graph.lat
    if graph.geometry_first is not None:
        arrays["geometry_first"] = graph.geometry_first
        arrays["geometry_lonlat"] = graph.geometry_lonlat
    if graph.turn_restrictions is not None:
        arrays["turn_from_arc"] = graph.turn_restrictions.from_arc
        arrays["turn_to_arc"] = graph.turn_restrictions.to_arc
    meta = {"format": FORMAT, "version": VERSION, "metrics": list(graph.metrics),
            "attrs": list(graph.arc_attrs), "metric_units": graph.metric_units,
            "source": graph.source, "data_license": graph.data_license}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    # np.savez appends .npz to names without it; write through a handle to keep ours.
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def load_cache(path) -> RoadGraph:
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise LoadError(path, f"not a readable RouteLab cache ({e})") from None
    try:
        meta = json.loads(arrays.pop("meta").tobytes().decode())
    except (KeyError, ValueError, UnicodeDecodeError):
        raise LoadError(path, "not a RouteLab cache (no metadata)") from None
    if meta.get("format") != FORMAT:
        raise LoadError(path, "not a RouteLab graph cache")
    if meta.get("version") != VERSION:
        raise LoadError(path, f"cache version {meta.get('version')} is not supported "
                              f"(this RouteLab reads version {VERSION}); reload the source file")
    try:
        graph = RoadGraph(
            first_out=arrays["first_out"], head=arrays["head"], node_id=arrays["node_id"],
            metrics={m: arrays[f"metric/{m}"] for m in meta["metrics"]},
            arc_attrs={a: arrays[f"attr/{a}"] for a in meta["attrs"]},
            lon=arrays.get("lon"), lat=arrays.get("lat"),
            geometry_first=arrays.get("geometry_first"),
            geometry_lonlat=arrays.get("geometry_lonlat"),
            turn_restrictions=(TurnRestrictions(arrays["turn_from_arc"], arrays["turn_to_arc"])
                               if "turn_from_arc" in arrays else None),
            metric_units=meta.get("metric_units", {}), source=meta.get("source", path.name),
            data_license=meta.get("data_license", ""))
    except KeyError as e:
        raise LoadError(path, f"damaged cache: array {e} is missing") from None
    problem = _inconsistency(graph)
    if problem:
        raise LoadError(path, f"damaged cache: {problem}")
    return graph


def _inconsistency(g: RoadGraph) -> str | None:
    """The first structural problem of a graph read from disk, or None."""
    n, m = g.first_out.size - 1, g.head.size
    if n < 0 or g.first_out[0] != 0 or g.first_out[-1] != m or np.any(np.diff(g.first_out) < 0):
        return "first_out is not a valid CSR index"
    if m and (g.head.min() < 0 or g.head.max() >= n):
        return "arc head out of range"
    if g.node_id.shape != (n,):
        return "node_id has the wrong length"
    for name, w in g.metrics.items():
        if w.shape != (m,) or (m and w.min() < 0):
            return f"metric {name!r} has the wrong length or a negative cost"
    for name, a in g.arc_attrs.items():
        if a.shape[0] != m:
            return f"attribute {name!r} has the wrong length"
    if (g.lon is None) != (g.lat is None) or (g.lon is not None and g.lon.shape != (n,)):
        return "coordinates have the wrong length"
    if g.geometry_first is not None and (g.geometry_first.shape != (m + 1,) or
                                        g.geometry_first[-1] != g.geometry_lonlat.shape[0]):
        return "arc geometry is inconsistent"
    tr = g.turn_restrictions
    if tr is not None and len(tr) and (tr.from_arc.max() >= m or tr.to_arc.max() >= m or
                                       min(tr.from_arc.min(), tr.to_arc.min()) < 0):
        return "turn restriction arc out of range"
    return None
