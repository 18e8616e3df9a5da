"""RouteLab's own graph cache: every array of a RoadGraph in one uncompressed ``.npz``.

Saving (atomic) and reopening is bit-identical. Reading runs engine.io.validate's
checks first, so a damaged, foreign or crafted file is a LoadError, never a broken graph.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from engine.core.graph import RoadGraph, TurnRestrictions
from engine.io.atomic import atomic_write
from engine.io.errors import LoadError
from engine.io.validate import CACHE_KEYS, check_cache, read_meta, read_npz

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
    # np.savez appends .npz to names without it; write through a handle to keep ours,
    # a temporary one renamed over the target only once complete.
    with atomic_write(path) as f:
        np.savez(f, **arrays)
    return path


def load_cache(path) -> RoadGraph:
    """The graph of a cache, after engine.io.validate has checked every array and the
    metadata (nothing unpickled, sizes bounded before reading)."""
    path = Path(path)
    arrays = read_npz(path, "RouteLab cache")
    meta = read_meta(path, arrays, FORMAT, VERSION, "RouteLab graph cache", CACHE_KEYS)
    check_cache(path, meta, arrays)
    try:
        return RoadGraph(
            first_out=arrays["first_out"], head=arrays["head"], node_id=arrays["node_id"],
            metrics={m: arrays[f"metric/{m}"] for m in meta["metrics"]},
            arc_attrs={a: arrays[f"attr/{a}"] for a in meta["attrs"]},
            lon=arrays.get("lon"), lat=arrays.get("lat"),
            geometry_first=arrays.get("geometry_first"),
            geometry_lonlat=arrays.get("geometry_lonlat"),
            turn_restrictions=(TurnRestrictions(arrays["turn_from_arc"], arrays["turn_to_arc"])
                               if "turn_from_arc" in arrays else None),
            metric_units=meta["metric_units"], source=meta["source"] or path.name,
            data_license=meta["data_license"])
    except KeyError as e:
        raise LoadError(path, f"damaged cache: array {e} is missing") from None
