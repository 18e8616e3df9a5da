"""Arcs and paths as polylines that follow the road (the arcs' own geometry where the
graph has it), in lon/lat, and the local metric projection that isochrones and
exports share with ``RoadGraph.xy``."""
from __future__ import annotations

import numpy as np

from engine.graph import EARTH_RADIUS_M, RoadGraph


class NoCoordinates(ValueError):
    """The graph has no node coordinates (e.g. a DIMACS file without its .co)."""


def require_coordinates(graph: RoadGraph, what: str) -> None:
    if not graph.has_coordinates:
        raise NoCoordinates(f"{what} needs node coordinates, and this graph has none "
                            f"(for DIMACS, give the .co file too)")


class LocalProjection:
    """Equirectangular metres about the centre of the graph's bounding box: the same
    projection as ``RoadGraph.xy`` (engine.graph.project_lonlat), with its inverse."""

    def __init__(self, graph: RoadGraph) -> None:
        require_coordinates(graph, "a projection")
        self.lon0 = 0.5 * (float(graph.lon.min()) + float(graph.lon.max()))
        self.lat0 = 0.5 * (float(graph.lat.min()) + float(graph.lat.max()))
        self.ky = np.pi / 180.0 * EARTH_RADIUS_M
        self.kx = self.ky * np.cos(np.radians(self.lat0))

    def to_xy(self, lonlat: np.ndarray) -> np.ndarray:
        lonlat = np.asarray(lonlat, dtype=np.float64).reshape(-1, 2)
        return np.stack([(lonlat[:, 0] - self.lon0) * self.kx, (lonlat[:, 1] - self.lat0) * self.ky], axis=1)

    def to_lonlat(self, xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        return np.stack([xy[:, 0] / self.kx + self.lon0, xy[:, 1] / self.ky + self.lat0], axis=1)


def arc_polylines(graph: RoadGraph, arcs) -> tuple[np.ndarray, np.ndarray]:
    """The polylines of ``arcs`` (tail, interior geometry points, head), concatenated:
    (points [P, 2] lon/lat, first [len(arcs) + 1]) with arc i at points[first[i]:first[i+1]]."""
    require_coordinates(graph, "arc geometry")
    arcs = np.asarray(arcs, dtype=np.int64)
    if graph.geometry_first is None:
        interior = np.zeros(arcs.size, dtype=np.int64)
    else:
        interior = graph.geometry_first[arcs + 1] - graph.geometry_first[arcs]
    first = np.zeros(arcs.size + 1, dtype=np.int64)
    np.cumsum(interior + 2, out=first[1:])
    points = np.empty((int(first[-1]), 2), dtype=np.float64)
    tails, heads = graph.tail[arcs], graph.head[arcs]
    points[first[:-1]] = np.stack([graph.lon[tails], graph.lat[tails]], axis=1)
    points[first[1:] - 1] = np.stack([graph.lon[heads], graph.lat[heads]], axis=1)
    total = int(interior.sum())
    if total:
        start = np.repeat(graph.geometry_first[arcs], interior)
        within = np.arange(total) - np.repeat(np.cumsum(interior) - interior, interior)
        points[np.repeat(first[:-1] + 1, interior) + within] = graph.geometry_lonlat[start + within]
    return points, first


def path_lonlat(graph: RoadGraph, nodes, arcs) -> np.ndarray:
    """[k, 2] lon/lat points of a path along its arcs' geometry (a junction once); a path
    of no arcs is its one node."""
    require_coordinates(graph, "a path's geometry")
    arcs = np.asarray(arcs, dtype=np.int64)
    if arcs.size == 0:
        v = int(np.asarray(nodes)[0])
        return np.array([[graph.lon[v], graph.lat[v]]])
    points, first = arc_polylines(graph, arcs)
    keep = np.ones(points.shape[0], dtype=bool)
    keep[first[1:-1]] = False          # each arc's tail repeats the previous arc's head
    return points[keep]
