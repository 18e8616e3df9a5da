"""The arcs of the OpenStreetMap graph's edges, in Numba: each arc's columns, and its
interior geometry, each in parallel passes with no temporaries (engine.io.osm_graph);
every output element is written by one iteration, so the result does not depend on
the thread count.

An arc runs along its edge (forward: ref positions a -> b) or against it; its columns
are gathers and selections of its edge's and its way's values, so the result equals
the NumPy expressions it replaces (np.where of gathers), at 30 bytes per arc and no
scratch: at 10 M arcs the NumPy form held about 250 MB of temporaries.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["arc_columns", "arc_geometry"]


@numba.njit(cache=True, nogil=True, parallel=True)
def arc_columns(arc_edge, is_fwd, e_tail, e_head, e_way, e_length, e_row, speed_f, speed_b,
                lanes_f, lanes_b):
    """(tail, head, way, length, speed, lanes, profile row) of every arc: the edge's
    ends in its direction, the way's speed and the profile's lanes for its direction."""
    n = arc_edge.size
    tail = np.empty(n, np.int32)
    head = np.empty(n, np.int32)
    way = np.empty(n, np.int32)
    length = np.empty(n, np.float64)
    speed = np.empty(n, np.float64)
    lanes = np.empty(n, np.int8)
    row = np.empty(n, np.int32)
    for i in numba.prange(n):
        e = arc_edge[i]
        w, r = e_way[e], e_row[e]
        way[i], row[i], length[i] = w, r, e_length[e]
        if is_fwd[i]:
            tail[i], head[i], speed[i], lanes[i] = e_tail[e], e_head[e], speed_f[w], lanes_f[r]
        else:
            tail[i], head[i], speed[i], lanes[i] = e_head[e], e_tail[e], speed_b[w], lanes_b[r]
    return tail, head, way, length, speed, lanes, row


def arc_geometry(a, b, arc_edge, is_fwd, lon, lat):
    """(geometry_first, geometry_lonlat): each arc's interior points, tail to head:
    ref positions a+1..b-1 of its edge forwards, b-1..a+1 backwards."""
    first = np.zeros(arc_edge.size + 1, np.int64)
    _interior_counts(a, b, arc_edge, first[1:])
    np.cumsum(first, out=first)   # in place: no second array of m values at the peak
    out = np.empty((int(first[-1]), 2))
    _fill_geometry(a, b, arc_edge, is_fwd, lon, lat, first, out)
    return first, out


@numba.njit(cache=True, nogil=True, parallel=True)
def _interior_counts(a, b, arc_edge, count):
    for i in numba.prange(arc_edge.size):
        e = arc_edge[i]
        count[i] = b[e] - a[e] - 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_geometry(a, b, arc_edge, is_fwd, lon, lat, first, out):
    for i in numba.prange(arc_edge.size):   # each arc writes its own rows only
        e = arc_edge[i]
        k = first[i]
        if is_fwd[i]:
            for p in range(a[e] + 1, b[e]):
                out[k, 0], out[k, 1] = lon[p], lat[p]
                k += 1
        else:
            for p in range(b[e] - 1, a[e], -1):
                out[k, 0], out[k, 1] = lon[p], lat[p]
                k += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def ref_lonlat(xy, ref_u):
    """(lon, lat) in degrees of every ref: libosmium's fixed point / 1e7, as NumPy's
    xy[ref_u, 0] / 1e7 (the int32 widened to float64, then one division)."""
    lon = np.empty(ref_u.size)
    lat = np.empty(ref_u.size)
    for i in numba.prange(ref_u.size):
        u = ref_u[i]
        lon[i] = np.float64(xy[u, 0]) / 1e7
        lat[i] = np.float64(xy[u, 1]) / 1e7
    return lon, lat


@numba.njit(cache=True, nogil=True, parallel=True)
def arc_costs(length, speed):
    """(distance m, travel_time ds) int64 per arc, both at least 1: the NumPy
    np.maximum(1, np.rint(length)) and np.maximum(1, np.rint(length / (speed / 3.6)
    * 10)), operation for operation (no fastmath: the same IEEE roundings)."""
    distance = np.empty(length.size, np.int64)
    travel_time = np.empty(length.size, np.int64)
    for i in numba.prange(length.size):
        d = np.rint(length[i])
        t = np.rint(length[i] / (speed[i] / 3.6) * 10)
        distance[i] = np.int64(d if d > 1.0 else 1.0)
        travel_time[i] = np.int64(t if t > 1.0 else 1.0)
    return distance, travel_time


@numba.njit(cache=True, nogil=True, parallel=True)
def arc_attr_columns(length, speed, row, road_class, oneway, toll, roundabout):
    """The per-arc attributes: length and speed as float32, and the profile's class
    (int8) and flags gathered by each arc's profile row."""
    n = row.size
    length32 = np.empty(n, np.float32)
    speed32 = np.empty(n, np.float32)
    cls = np.empty(n, np.int8)
    is_oneway = np.empty(n, np.bool_)
    is_toll = np.empty(n, np.bool_)
    is_round = np.empty(n, np.bool_)
    for i in numba.prange(n):
        r = row[i]
        length32[i], speed32[i] = np.float32(length[i]), np.float32(speed[i])
        cls[i], is_oneway[i], is_toll[i], is_round[i] = (road_class[r], oneway[r], toll[r],
                                                         roundabout[r])
    return length32, speed32, cls, is_oneway, is_toll, is_round
