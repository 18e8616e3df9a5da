"""GeoJSON (RFC 7946) from routes, trees and isochrones: [lon, lat] positions, polygon
rings closed and wound by the right-hand rule, the graph's attribution in the properties."""
from __future__ import annotations

import json
import math

import numpy as np
import shapely
from shapely.geometry import mapping

from engine.io.atomic import atomic_write
from engine.core.polylines import path_lonlat, require_coordinates
from engine.core.units import Unit

FORMAT = "GeoJSON"


def attribution(graph) -> dict:
    """{"attribution": ...} when the graph's data asks for one, else {}."""
    return {"attribution": graph.data_license} if graph.data_license else {}


def feature(geometry: dict, properties: dict) -> dict:
    return {"type": "Feature", "geometry": geometry, "properties": properties}


def collection(features: list, **members) -> dict:
    """A FeatureCollection; ``members`` are foreign members (RFC 7946 §6.1) beside it."""
    return {"type": "FeatureCollection", **members, "features": features}


def linestring(points: np.ndarray) -> dict:
    """A LineString of [k, 2] lon/lat points (one point is repeated: a line needs two)."""
    coords = np.asarray(points, dtype=np.float64).tolist()
    return {"type": "LineString", "coordinates": coords if len(coords) > 1 else coords * 2}


def polygonal(geometry) -> dict:
    """A shapely (Multi)Polygon as GeoJSON, exterior rings counter-clockwise and holes
    clockwise (RFC 7946 §3.1.6); an empty one as an empty MultiPolygon."""
    if geometry.is_empty:
        return {"type": "MultiPolygon", "coordinates": []}
    return mapping(shapely.orient_polygons(geometry, exterior_cw=False))


def path_feature(graph, path, properties: dict) -> dict:
    """A path as a LineString along its arcs' geometry, with ``properties`` and the
    graph's attribution."""
    require_coordinates(graph, "a GeoJSON route")
    return feature(linestring(path_lonlat(graph, path.nodes, path.arcs)),
                   {**properties, **attribution(graph)})


def write(path, data: dict) -> None:
    """Write a GeoJSON object atomically (UTF-8, compact)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    with atomic_write(path) as f:
        f.write(text.encode("utf-8"))


def write_route(out, graph, path, properties: dict) -> None:
    write(out, collection([path_feature(graph, path, properties)]))


def write_tree(out, graph, tree, unit: Unit) -> None:
    """One Point per reached node with its file id, distance (raw units of the tree's
    metric, and in seconds or metres when the unit is known) and parent's file id
    (null at the source): what QGIS needs to colour or filter by distance."""
    require_coordinates(graph, "a GeoJSON tree")
    reached = np.flatnonzero(tree.distance >= 0)
    parent = tree.parent[reached]
    parent_id = np.where(parent >= 0, graph.node_id[np.maximum(parent, 0)], -1).tolist()
    real_key = {"time": "seconds", "length": "metres"}.get(unit.kind)
    distance = tree.distance[reached]
    real = (distance * unit.size).round(3).tolist() if real_key else None
    features = []
    for i, (v, node, d, p, lon, lat) in enumerate(zip(reached.tolist(), graph.node_id[reached].tolist(),
                                                     distance.tolist(), parent_id,
                                                     graph.lon[reached].tolist(),
                                                     graph.lat[reached].tolist())):
        props = {"node_id": node, "distance": d, "parent": None if p < 0 else p}
        if real_key:
            props[real_key] = real[i]
        features.append(feature({"type": "Point", "coordinates": [lon, lat]}, props))
    write(out, collection(features, metric=tree.metric, unit=unit.name,
                          source=int(graph.node_id[tree.source]), **attribution(graph)))


def isochrone_collection(graph, isochrones, metric: str, unit: Unit, source: int) -> dict:
    """One Feature per cut-off, its whole area (nested: each holds the smaller ones),
    the largest first so that a GIS draws the smaller ones on top."""
    features = []
    for cutoff, area, area_m2 in reversed(list(zip(isochrones.cutoffs, isochrones.areas,
                                                   isochrones.area_m2))):
        features.append(feature(polygonal(area), {
            "cutoff": json_number(cutoff), "cutoff_text": unit.format(cutoff), "unit": unit.name,
            "metric": metric, "source": int(graph.node_id[source]),
            "area_km2": round(area_m2 / 1e6, 4), "buffer_m": round(isochrones.buffer_m, 1),
            **attribution(graph)}))
    return collection(features)


def json_number(x: float):
    """A whole float as an int (JSON readers see 300, not 300.0)."""
    return int(x) if math.isfinite(x) and float(x).is_integer() else round(float(x), 3)
