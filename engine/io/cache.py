"""RouteLab's own graph cache (``.rlg``): every array of a RoadGraph in one uncompressed
``.npz`` (engine.io.npz), and its validator.

Saving (atomic) and reopening is bit-identical. Reading checks every array and the
metadata first (``check_cache``; ``check_graph`` runs the same checks on a built
graph), so a damaged, foreign or crafted file is a LoadError, never a broken graph.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.core.graph import ROAD_CLASSES, GraphError, RoadGraph, TurnRestrictions, path_cost_bound
from engine.io.checks import INT32_MAX, in_range, need, offsets
from engine.io.errors import LoadError
from engine.io.npz import read_meta, write_npz
from engine.io.npz_stored import read_stored_npz

FORMAT = "routelab-graph"
VERSION = 1
# The arc attributes the engine reads (decoders, summaries): (dtype kinds, least, most).
# Any other attribute is one number or flag per arc; every attribute is 1-D.
KNOWN_ATTRS = {"length_m": ("fiu", 0, INT32_MAX), "speed_kmh": ("fiu", 0, 10_000),
               "road_class": ("iu", 0, len(ROAD_CLASSES) - 1), "lanes": ("iu", 0, 127),
               "oneway": ("biu", 0, 1), "toll": ("biu", 0, 1), "roundabout": ("biu", 0, 1),
               "unpaved": ("biu", 0, 1)}
LON, LAT = (-180.0, 180.0), (-90.0, 90.0)


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
    return write_npz(path, arrays, meta)


def load_cache(path) -> RoadGraph:
    """The graph of a cache, after ``check_cache`` has checked every array and the
    metadata (nothing unpickled, sizes bounded before reading)."""
    path = Path(path)
    arrays = read_stored_npz(path, "RouteLab cache")
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


# ------------------------------------------------------------------ .rlg caches
CACHE_KEYS = {"metrics": list, "attrs": list, "metric_units": dict, "source": str,
              "data_license": str}


def check_cache(path, meta: dict, arrays: dict) -> None:
    """A graph cache's metadata names its arrays; every one present and valid."""
    metrics = str_list(path, meta["metrics"], "metrics")
    attrs = str_list(path, meta["attrs"], "attrs")
    units = meta["metric_units"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in units.items()):
        raise LoadError(path, "damaged cache: metadata 'metric_units' must map names to units")
    wanted = ["first_out", "head", "node_id", *(f"metric/{m}" for m in metrics),
              *(f"attr/{a}" for a in attrs)]
    missing = [name for name in wanted if name not in arrays]
    if missing:
        raise LoadError(path, f"damaged cache: array {missing[0]!r} is missing")
    check_graph_arrays(
        path, first_out=arrays["first_out"], head=arrays["head"], node_id=arrays["node_id"],
        metrics={m: arrays[f"metric/{m}"] for m in metrics},
        arc_attrs={a: arrays[f"attr/{a}"] for a in attrs},
        lon=arrays.get("lon"), lat=arrays.get("lat"),
        geometry_first=arrays.get("geometry_first"),
        geometry_lonlat=arrays.get("geometry_lonlat"),
        turn_from_arc=arrays.get("turn_from_arc"), turn_to_arc=arrays.get("turn_to_arc"))


def str_list(path, value, key: str) -> list[str]:
    if not all(isinstance(v, str) for v in value):
        raise LoadError(path, f"damaged cache: metadata {key!r} must be a list of names")
    return value


# ------------------------------------------------------------------ graphs
def check_graph_arrays(path, *, first_out, head, node_id, metrics: dict, arc_attrs=None,
                       lon=None, lat=None, geometry_first=None, geometry_lonlat=None,
                       turn_from_arc=None, turn_to_arc=None) -> None:
    """A RoadGraph's arrays, before the graph is built: dtypes, shapes, ranges, offsets."""
    need(path, first_out, "first_out", np.int32, (None,))
    n = first_out.size - 1
    head = need(path, head, "head", np.int32, (None,))
    m = head.size
    offsets(path, first_out, "first_out", m)
    in_range(path, head, "arc head", 0, n - 1)
    node_id = need(path, node_id, "node_id", np.int64, (n,))
    if not np.all(node_id[1:] > node_id[:-1]):      # ascending ids (DIMACS) are distinct: no sort
        ids = np.sort(node_id)
        if np.any(ids[1:] == ids[:-1]):
            raise LoadError(path, f"node id {ids[1:][ids[1:] == ids[:-1]][0]} appears twice")
    if not metrics:
        raise LoadError(path, "a graph needs at least one metric")
    for name, w in metrics.items():
        check_metric(path, name, w, n, m)
    for name, a in (arc_attrs or {}).items():
        check_attribute(path, name, a, m)
    if (lon is None) != (lat is None):
        raise LoadError(path, "coordinates need both lon and lat")
    for name, c, bounds in (("lon", lon, LON), ("lat", lat, LAT)):
        if c is not None:
            _check_degrees(path, need(path, c, name, np.float64, (n,)), name, bounds)
    _check_geometry(path, geometry_first, geometry_lonlat, m)
    _check_turns(path, turn_from_arc, turn_to_arc, first_out, head)


def check_attribute(path, name: str, a, m: int) -> None:
    """One number or flag per arc (1-D, a numeric dtype); a known attribute (KNOWN_ATTRS)
    also of its kind and in its range, finite."""
    what = f"attribute {name!r}"
    if not isinstance(a, np.ndarray) or a.shape != (m,):
        shape = a.shape if isinstance(a, np.ndarray) else type(a).__name__
        raise LoadError(path, f"{what} must have one value per arc, shape ({m},); it has {shape}")
    kinds, low, high = KNOWN_ATTRS.get(name, ("biuf", None, None))
    if a.dtype.kind not in kinds:
        raise LoadError(path, f"{what} has dtype {a.dtype.str}, expected "
                              f"{_KIND_NAMES[kinds]}")
    if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
        raise LoadError(path, f"{what} holds a value that is not finite (arc "
                              f"{int(np.flatnonzero(~np.isfinite(a))[0])})")
    if low is not None and a.size and (a.min() < low or a.max() > high):
        arc = int(np.flatnonzero((a < low) | (a > high))[0])
        raise LoadError(path, f"{what} holds {a[arc]} at arc {arc}, out of range {low}..{high}")


_KIND_NAMES = {"fiu": "a number", "iu": "an integer", "biu": "a flag (bool or 0/1)",
               "biuf": "a number or a flag"}


def _check_degrees(path, values: np.ndarray, name: str, bounds) -> None:
    """Finite degrees within ``bounds``; the message names the first bad one."""
    bad = ~np.isfinite(values) | (values < bounds[0]) | (values > bounds[1])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        why = "not finite" if not np.isfinite(values[i]) else \
            f"outside {bounds[0]:g}..{bounds[1]:g} degrees"
        raise LoadError(path, f"{name} holds {values[i]} at index {i}: {why}")


def check_metric(path, name: str, w, n: int, m: int) -> None:
    """One cost per arc, integral, 0..2^31-1, stored as int32, path costs within int64."""
    what = f"metric {name!r}"
    if not isinstance(w, np.ndarray) or w.shape != (m,):
        raise LoadError(path, f"{what} must have one cost per arc ({m})")
    if not np.issubdtype(w.dtype, np.integer):
        raise LoadError(path, f"{what} is not integral (dtype {w.dtype.str})")
    in_range(path, w, what, 0, INT32_MAX)
    need(path, w, what, np.int32)
    try:
        path_cost_bound(n, w)
    except GraphError as e:
        raise LoadError(path, f"{what}: {e}") from None


def _check_geometry(path, first, points, m: int) -> None:
    if (first is None) != (points is None):
        raise LoadError(path, "arc geometry needs both geometry_first and geometry_lonlat")
    if first is None:
        return
    need(path, first, "geometry_first", np.int64, (m + 1,))
    points = need(path, points, "geometry_lonlat", np.float64, (None, 2))
    offsets(path, first, "geometry_first", points.shape[0])
    _check_degrees(path, points[:, 0], "geometry_lonlat's longitude", LON)
    _check_degrees(path, points[:, 1], "geometry_lonlat's latitude", LAT)


def _check_turns(path, from_arc, to_arc, first_out, head) -> None:
    if (from_arc is None) != (to_arc is None):
        raise LoadError(path, "turn restrictions need both turn_from_arc and turn_to_arc")
    if from_arc is None:
        return
    need(path, from_arc, "turn_from_arc", np.int32, (None,))
    need(path, to_arc, "turn_to_arc", np.int32, from_arc.shape)
    for name, arcs in (("turn_from_arc", from_arc), ("turn_to_arc", to_arc)):
        in_range(path, arcs, name, 0, head.size - 1)
    tail_of_to = np.searchsorted(first_out, to_arc, side="right") - 1
    if np.any(head[from_arc] != tail_of_to):
        raise LoadError(path, "a turn restriction joins arcs that do not meet")


def check_graph(graph, path=None) -> None:
    """The same checks on a built RoadGraph (e.g. before saving or after a transform)."""
    tr = graph.turn_restrictions
    check_graph_arrays(path or graph.source, first_out=graph.first_out, head=graph.head,
                       node_id=graph.node_id, metrics=graph.metrics, arc_attrs=graph.arc_attrs,
                       lon=graph.lon, lat=graph.lat, geometry_first=graph.geometry_first,
                       geometry_lonlat=graph.geometry_lonlat,
                       turn_from_arc=None if tr is None else tr.from_arc,
                       turn_to_arc=None if tr is None else tr.to_arc)
