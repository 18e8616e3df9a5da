"""Arcs and paths as polylines that follow the road (the arcs' own geometry where the
graph has it), in lon/lat for exports and isochrones, or in any point table numbered
the same way (the map's metres)."""
from __future__ import annotations

import numpy as np

from engine.core.graph import RoadGraph


class NoCoordinates(ValueError):
    """The graph has no node coordinates (e.g. a DIMACS file without its .co)."""


def require_coordinates(graph: RoadGraph, what: str) -> None:
    if not graph.has_coordinates:
        raise NoCoordinates(f"{what} needs node coordinates, and this graph has none "
                            f"(for DIMACS, give the .co file too)")


def arc_chains(graph: RoadGraph, arcs: np.ndarray):
    """Point indices of each arc's polyline, concatenated: tail, interior points, head.

    Interior points are numbered after the nodes (``num_nodes + geometry index``), as in
    ``lonlat_points`` and the map's drawing points. Returns (indices, starts, interior_counts).
    """
    arcs = np.asarray(arcs, dtype=np.int64)
    n = graph.num_nodes
    if graph.geometry_first is None:
        k = np.zeros(arcs.size, dtype=np.int64)
    else:
        k = graph.geometry_first[arcs + 1] - graph.geometry_first[arcs]
    lengths = k + 2
    starts = np.zeros(arcs.size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    idx = np.empty(int(lengths.sum()), dtype=np.int64)
    idx[starts] = graph.tail[arcs]
    idx[starts + k + 1] = graph.head[arcs]
    total_k = int(k.sum())
    if total_k:
        k_first = np.zeros(arcs.size, dtype=np.int64)
        np.cumsum(k[:-1], out=k_first[1:])
        within = np.arange(total_k) - np.repeat(k_first, k)
        idx[np.repeat(starts + 1, k) + within] = n + np.repeat(graph.geometry_first[arcs], k) + within
    return idx, starts, k


def route_polyline(points: np.ndarray, graph: RoadGraph, arcs: np.ndarray) -> np.ndarray:
    """[k, 2] points of a path (arcs in order) along its arc geometry, from ``points``
    numbered as ``arc_chains`` numbers them (lon/lat or the map's metres)."""
    arcs = np.asarray(arcs)
    if arcs.size == 0:
        return np.zeros((0, 2))
    idx, starts, k = arc_chains(graph, arcs)
    keep = np.ones(idx.size, dtype=bool)
    keep[(starts + k + 1)[:-1]] = False   # a head repeats the next arc's tail
    return points[idx[keep]]


def lonlat_points(graph: RoadGraph) -> np.ndarray:
    """[n + G, 2] lon/lat of the nodes, then of the arcs' interior geometry points."""
    require_coordinates(graph, "arc geometry")
    nodes = np.stack([graph.lon, graph.lat], axis=1).astype(np.float64)
    if graph.geometry_lonlat is None or graph.geometry_lonlat.size == 0:
        return nodes
    return np.concatenate([nodes, np.asarray(graph.geometry_lonlat, dtype=np.float64)])


def arc_polylines(graph: RoadGraph, arcs) -> tuple[np.ndarray, np.ndarray]:
    """The polylines of ``arcs`` (tail, interior geometry points, head), concatenated:
    (points [P, 2] lon/lat, first [len(arcs) + 1]) with arc i at points[first[i]:first[i+1]]."""
    idx, starts, _ = arc_chains(graph, arcs)
    return lonlat_points(graph)[idx], np.append(starts, idx.size)


def path_lonlat(graph: RoadGraph, nodes, arcs) -> np.ndarray:
    """[k, 2] lon/lat points of a path along its arcs' geometry (a junction once); a path
    of no arcs is its one node."""
    require_coordinates(graph, "a path's geometry")
    if np.asarray(arcs).size == 0:
        v = int(np.asarray(nodes)[0])
        return np.array([[graph.lon[v], graph.lat[v]]])
    return route_polyline(lonlat_points(graph), graph, arcs)
