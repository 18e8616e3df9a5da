"""Isochrones (service areas) from a shortest-path tree: for cut-offs c1 < c2 < ..., the
area reachable within each, built from the reached road segments.

An arc u->v whose tail is reached at d(u), with cost w, covers the costs d(u)..d(u)+w
along its polyline (linearly in its length), so the part of it reachable within c is
its first (c - d(u)) / w. Those parts are buffered by a fixed width and unioned with
shapely in the graph's local metric projection (metres), then turned back into lon/lat.

The areas nest: area_k = area_{k-1} ∪ buffer(the parts reached between c_{k-1} and
c_k), so the union costs about as much as the largest cut-off alone; the bands
(area_k minus area_{k-1}) are what a map fills, one shade each.

Bounds: at most MAX_CUTOFFS cut-offs and a buffer of at most LARGEST_BUFFER_M; the
geometry's memory is estimated from the reached road pieces and refused above the
memory budget (engine.io.limits) before any buffer is made. Every overlay input is
polygonal first (``polygonal``: points, lines and collapsed rings dropped), so GEOS
never sees mixed dimensions.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np
import shapely

from engine.core.graph import RoadGraph
from engine.core.polylines import arc_polylines, require_coordinates
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.io.limits import check_allocation

MIN_BUFFER_M, MAX_BUFFER_M = 10.0, 150.0
QUAD_SEGS = 2              # a quarter circle in 2 segments: round enough at map scale, cheap to union
PARALLEL_FROM = 20_000     # buffers: above this the union runs in spatial chunks on every core
MAX_CUTOFFS = 32           # bands a map can tell apart; each costs a union and a difference
LARGEST_BUFFER_M = 10_000.0    # a wider buffer no longer outlines roads (and leaves the projection)
BYTES_PER_PIECE = 1024     # peak memory per buffered road piece (measured ~900 B on NY, Porto)


@dataclass(frozen=True)
class Isochrones:
    cutoffs: tuple[float, ...]     # raw metric units, increasing
    areas: tuple                   # shapely (Multi)Polygon per cut-off, lon/lat: reachable within it
    bands: tuple                   # lon/lat: areas[k] minus areas[k-1] (bands[0] is areas[0])
    area_m2: tuple[float, ...]     # each area's size
    buffer_m: float                # the buffer width used
    seconds: float                 # the geometry's time (the tree not included)


def checked_cutoffs(cutoffs) -> tuple[float, ...]:
    values = tuple(float(c) for c in cutoffs)
    if not values:
        raise ValueError("give at least one cut-off")
    if len(values) > MAX_CUTOFFS:
        raise ValueError(f"at most {MAX_CUTOFFS} cut-offs are allowed (got {len(values)}): "
                         "each one is a band of the map and a union of its roads")
    if any(not np.isfinite(c) or c <= 0 for c in values):
        raise ValueError(f"cut-offs must be positive (got {', '.join(f'{c:g}' for c in values)})")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"cut-offs must increase (got {', '.join(f'{c:g}' for c in values)})")
    return values


def checked_buffer_m(buffer_m) -> float:
    """A buffer width in metres: positive and at most LARGEST_BUFFER_M."""
    width = float(buffer_m)
    if not (np.isfinite(width) and 0 < width <= LARGEST_BUFFER_M):
        raise ValueError(f"the buffer width must be a positive number of metres, at most "
                         f"{LARGEST_BUFFER_M:,.0f} (got {width:g})")
    return width


def default_buffer_m(graph: RoadGraph) -> float:
    """Half the median arc length, within [10 m, 150 m]. Half a typical arc makes the
    buffers of the streets around a city block meet, so a reached neighbourhood reads as
    an area rather than a web of lines, while water or a park wider than an arc stays a
    hole; the cap keeps a sparse rural graph (arcs of kilometres) from smearing an area
    across a river, and the floor keeps a dense one visible."""
    require_coordinates(graph, "an isochrone")
    if graph.num_arcs == 0:
        return MIN_BUFFER_M
    xy = graph.xy
    lengths = np.hypot(*(xy[graph.head] - xy[graph.tail]).T)
    return float(np.clip(0.5 * np.median(lengths), MIN_BUFFER_M, MAX_BUFFER_M))


def isochrones(graph: RoadGraph, distance: np.ndarray, metric: str, cutoffs,
               buffer_m: float | None = None, source: int | None = None,
               progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED,
               on_band: Callable[[int, object], None] = lambda k, band: None) -> Isochrones:
    """The areas reachable within each cut-off (raw units of ``metric``) of a tree's
    ``distance`` (-1: unreached), with the buffer width ``buffer_m`` (default:
    default_buffer_m). ``source``, when given, is always in the first area. Each band
    goes to ``on_band(k, band)`` as soon as it is known (a map can show the near ones
    while the far ones grow); cancelling takes effect between chunks of the union."""
    started = time.perf_counter()
    require_coordinates(graph, "an isochrone")
    cutoffs = checked_cutoffs(cutoffs)
    width = default_buffer_m(graph) if buffer_m is None else checked_buffer_m(buffer_m)
    projection = graph.projection
    segments = _Segments(graph, np.asarray(distance), graph.metric(metric), projection, cutoffs[-1])
    to_lonlat = projection.to_lonlat
    areas, bands, area, low = [], [], shapely.Polygon(), -np.inf
    for k, cutoff in enumerate(cutoffs):
        progress(k / len(cutoffs), f"service area: cut-off {k + 1} of {len(cutoffs)}")
        cancel.check()
        lines = segments.reached(low, cutoff)
        if k == 0 and source is not None:         # the source is reached even with no arc
            at = projection.to_xy([[graph.lon[source], graph.lat[source]]])[0]
            lines = np.append(lines, shapely.Point(at))
        grown = shapely.union(area, polygonal(_buffered_union(lines, width, cancel)))
        grown = _without_slivers(polygonal(grown), np.pi * width ** 2)
        band = polygonal(shapely.transform(shapely.difference(grown, area) if k else grown, to_lonlat))
        areas.append(grown)
        bands.append(band)
        on_band(k, band)
        area, low = grown, cutoff
    return Isochrones(cutoffs, tuple(polygonal(shapely.transform(a, to_lonlat)) for a in areas),
                      tuple(bands), tuple(float(a.area) for a in areas), width,
                      time.perf_counter() - started)


class _Segments:
    """The straight pieces of every arc whose tail is reached by the last cut-off, in
    metres, with where each lies along its arc (to interpolate the cost along it)."""

    def __init__(self, graph, distance, weights, projection, last_cutoff: float) -> None:
        tail_cost = distance[graph.tail]
        arcs = np.flatnonzero((tail_cost >= 0) & (tail_cost <= last_cutoff))
        pieces = arcs.size
        if graph.geometry_first is not None:
            pieces += int(np.diff(graph.geometry_first)[arcs].sum())
        check_allocation(pieces * BYTES_PER_PIECE,
                         f"the service area's geometry ({pieces:,} road pieces)")
        points, first = arc_polylines(graph, arcs)
        xy = projection.to_xy(points)
        starts = np.ones(points.shape[0], dtype=bool)
        starts[first[1:] - 1] = False                 # an arc's last point starts no piece
        i = np.flatnonzero(starts)
        self.p, self.q = xy[i], xy[i + 1]
        per_arc = np.diff(first) - 1
        arc_of_piece = np.repeat(np.arange(arcs.size), per_arc)
        length = np.hypot(*(self.q - self.p).T)
        before = np.cumsum(length) - length            # metres before each piece, all arcs
        self.begin = before - before[np.cumsum(per_arc) - per_arc][arc_of_piece]
        self.end = self.begin + length
        self.arc_length = np.bincount(arc_of_piece, length, arcs.size)[arc_of_piece]
        self.tail_cost = tail_cost[arcs].astype(np.float64)[arc_of_piece]
        self.weight = weights[arcs].astype(np.float64)[arc_of_piece]

    def reached(self, low: float, high: float) -> np.ndarray:
        """LineStrings of the parts of the pieces whose cost lies in [low, high]."""
        with np.errstate(divide="ignore", invalid="ignore"):
            metres_per_cost = np.where(self.weight > 0, self.arc_length / self.weight, np.inf)
            start = np.maximum(self.begin, (low - self.tail_cost) * metres_per_cost)
            stop = np.minimum(self.end, (high - self.tail_cost) * metres_per_cost)
        free = self.weight == 0                                  # a cost-free arc: all or nothing
        start = np.where(free, np.where(self.tail_cost >= low, self.begin, np.inf), start)
        stop = np.where(free, np.where(self.tail_cost <= high, self.end, -np.inf), stop)
        take = np.flatnonzero(stop >= start)
        if take.size == 0:
            return np.empty(0, dtype=object)
        length = np.maximum(self.end - self.begin, 1e-12)[take]
        p, q = self.p[take], self.q[take]
        a = np.clip((start[take] - self.begin[take]) / length, 0, 1)[:, None]
        b = np.clip((stop[take] - self.begin[take]) / length, 0, 1)[:, None]
        ends = np.stack([p + (q - p) * a, p + (q - p) * b], axis=1)
        return shapely.linestrings(_one_way(ends))


def _one_way(ends: np.ndarray) -> np.ndarray:
    """[k, 2, 2] pieces with a two-way road's two directions kept once (same ends,
    either order, to the centimetre)."""
    (x0, y0), (x1, y1) = ends[:, 0].T, ends[:, 1].T
    swap = (x0 > x1) | ((x0 == x1) & (y0 > y1))
    ordered = np.where(swap[:, None, None], ends[:, ::-1], ends)
    _, keep = np.unique(np.round(ordered.reshape(-1, 4), 2), axis=0, return_index=True)
    return ends[np.sort(keep)]


def _buffered_union(lines: np.ndarray, width: float, cancel: CancelToken = NEVER_CANCELLED):
    """The union of the buffers of ``lines``: with many, in compact spatial chunks
    (Z-order) on every core (shapely releases the GIL), then the chunks' unions merged
    pairwise, also in parallel (on 2 cores: 1.2 s instead of 2.6 s for 64 k buffers)."""
    def buffered(chunk):
        cancel.check()
        return shapely.union_all(shapely.buffer(chunk, width, quad_segs=QUAD_SEGS))
    workers = os.cpu_count() or 1
    if lines.size < PARALLEL_FROM or workers == 1:
        return buffered(lines)
    corner = shapely.bounds(lines)[:, :2]
    chunks = np.array_split(lines[np.argsort(_z_order(corner), kind="stable")], 4 * workers)
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(buffered, chunks))
        while len(parts) > 1:           # neighbours in Z-order are neighbours on the map
            pairs = [parts[i:i + 2] for i in range(0, len(parts), 2)]
            parts = list(pool.map(shapely.union_all, pairs))
    return parts[0]


def _z_order(xy: np.ndarray) -> np.ndarray:
    """Morton codes of points on a 65536² grid over their bounding box: sorting by them
    keeps neighbours together."""
    span = np.maximum(np.ptp(xy, axis=0), 1e-9)
    cells = ((xy - xy.min(axis=0)) / span * 65535).astype(np.uint64)
    code = np.zeros(xy.shape[0], dtype=np.uint64)
    for bit in range(16):
        for axis in (0, 1):
            code |= ((cells[:, axis] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(2 * bit + axis)
    return code


def polygonal(geometry):
    """``geometry`` as a valid (Multi)Polygon of its areas: collections flattened, points,
    lines and empty or collapsed rings dropped (they enclose nothing), each invalid part
    mended on its own (a change of coordinates can leave a near-degenerate ring invalid)
    and the parts unioned. GEOS's overlay refuses mixed dimensions; what this returns
    never mixes them."""
    if geometry.geom_type in ("Polygon", "MultiPolygon") and shapely.is_valid(geometry):
        return geometry
    parts = []
    for p in _polygon_parts(geometry):
        parts += [p] if shapely.is_valid(p) else _polygon_parts(_mended(p))
    if not parts:
        return shapely.Polygon()
    return _multi(_polygon_parts(shapely.union_all(parts)))


def _polygon_parts(geometry) -> list:
    """The non-empty Polygons of ``geometry``, any nesting of collections unpacked."""
    parts, todo = [], [geometry]
    while todo:
        g = todo.pop()
        if g is None or g.is_empty:
            continue
        if g.geom_type == "Polygon":
            if shapely.get_num_coordinates(g.exterior) >= 4:
                parts.append(g)
        elif g.geom_type in ("MultiPolygon", "GeometryCollection"):
            todo.extend(reversed(shapely.get_parts(g).tolist()))
    return parts


def _mended(polygon):
    """One invalid Polygon made valid: its areas kept, collapsed pieces dropped."""
    try:
        return shapely.make_valid(polygon, method="structure", keep_collapsed=False)
    except shapely.errors.GEOSException:
        return shapely.buffer(polygon, 0)


def _multi(parts: list):
    return parts[0] if len(parts) == 1 else shapely.MultiPolygon(parts)


def _without_slivers(area, min_hole_m2: float):
    """``area`` without holes smaller than a disc of one buffer width: they are the gaps
    left between the buffers of the streets around one block, not unreached land. (No
    part can lie in such a hole: every part holds a whole disc of that size.)"""
    kept = []
    for polygon in shapely.get_parts(area):
        holes = list(polygon.interiors)
        if holes:
            big = shapely.area(shapely.polygons(holes)) >= min_hole_m2
            holes = [h for h, keep in zip(holes, big) if keep]
        kept.append(shapely.Polygon(polygon.exterior, holes))
    return shapely.MultiPolygon(kept) if len(kept) > 1 else kept[0] if kept else shapely.Polygon()
