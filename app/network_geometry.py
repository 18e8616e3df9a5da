"""What the map draws, as flat NumPy arrays (no Qt): built once per graph on the engine thread.

* ``build_drawing(graph)`` turns the arcs into line segments in projected metres
  (``graph.xy``), following per-arc geometry, one segment chain per two-way road,
  sorted by road-class group.
* Level of detail: coarser copies of the segments made by vertex clustering on grids
  of doubling cell size (every point snaps to the mean of its grid cell, segments that
  collapse or repeat are dropped). At a zoom where a cell is at most a pixel the picture
  is the same, with far fewer segments. ``NetworkDrawing.level_for(metres_per_pixel)``
  picks one; ``Level.pairs(group, rect)`` gives x/y arrays for ``connect='pairs'``.
  Every segment remembers the two end nodes of the road it draws (``end_a``, ``end_b``;
  on a coarse level, of one road it stands for), so per-node values such as the
  distances of a shortest-path tree can colour any level.
* The arcs' polylines (``arc_chains``) and a path's (``route_polyline``) are engine.core.polylines'.
* Picking: a cKDTree on the node coordinates.
* The first view: ``bulk_bounds`` (see there), not the box of every point, which one
  stray ferry terminal or clipped fragment can make mostly empty.
* ``arc_group`` and ``node_groups`` say which road groups carry a route or a marker
  (the map keeps them drawn at any zoom).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from engine.core.graph import EARTH_RADIUS_M, RoadGraph
from engine.core.polylines import arc_chains

from app.map_style import CLASS_TO_GROUP, PLAIN_GROUP, ROAD_GROUPS

# Coarsest level: the whole network about this many cells wide (a map ~half that wide).
COARSEST_CELLS = 512
# Stop refining once a level keeps more than this share of the exact segments.
KEEP_LEVEL_BELOW = 0.8
# The first view: the 1st-99th percentile box of the nodes of the components that hold
# at least this share of the nodes (always the largest).
BULK_PERCENTILE = 1.0
BULK_COMPONENT_SHARE = 0.05
BULK_REACH = 0.05      # nodes this share of the box's size beyond it are not outliers


@dataclass(frozen=True)
class Level:
    """Segments of one level of detail, sorted by group: group g is [first[g], first[g+1])."""
    cell: float                 # grid cell in metres; 0 for the exact geometry
    x0: np.ndarray              # float64 [s]
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    group_first: np.ndarray     # int64 [num_groups + 1]
    end_a: np.ndarray           # int32 [s]: the end nodes of the road a segment draws
    end_b: np.ndarray

    @property
    def num_segments(self) -> int:
        return int(self.x0.size)

    def select(self, group: int | None = None, rect=None) -> np.ndarray:
        """Indices of a group's segments (all groups for None) whose box meets ``rect``
        = (xmin, ymin, xmax, ymax), or all of them for no rect."""
        a, b = (0, self.num_segments) if group is None else \
            (int(self.group_first[group]), int(self.group_first[group + 1]))
        if rect is None:
            return np.arange(a, b)
        x0, y0, x1, y1 = self.x0[a:b], self.y0[a:b], self.x1[a:b], self.y1[a:b]
        xmin, ymin, xmax, ymax = rect
        keep = ((np.maximum(x0, x1) >= xmin) & (np.minimum(x0, x1) <= xmax) &
                (np.maximum(y0, y1) >= ymin) & (np.minimum(y0, y1) <= ymax))
        return a + np.flatnonzero(keep)

    def pairs_of(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Interleaved x, y (start, end, start, end, ...) of the segments ``idx``."""
        x = np.empty(2 * idx.size)
        y = np.empty(2 * idx.size)
        x[0::2], x[1::2], y[0::2], y[1::2] = self.x0[idx], self.x1[idx], self.y0[idx], self.y1[idx]
        return x, y

    def pairs(self, group: int, rect=None) -> tuple[np.ndarray, np.ndarray]:
        """x, y for ``connect='pairs'`` of a group's segments that meet ``rect``."""
        return self.pairs_of(self.select(group, rect))


@dataclass(frozen=True)
class NetworkDrawing:
    groups: tuple                  # RoadGroup per group index
    points: np.ndarray             # float64 [v, 2]: node xy, then projected geometry points
    num_nodes: int
    levels: tuple[Level, ...]      # coarsest first; the last one is exact (cell 0)
    bounds: tuple[float, float, float, float]   # xmin, ymin, xmax, ymax of all points
    tree: cKDTree                  # on node xy, for picking
    bulk: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)   # bulk_bounds: the first view
    origin_lat: float = 0.0        # latitude where the projection's x is true to scale
    arc_group: np.ndarray | None = None     # int8 [m]: road group of every graph arc
    node_groups: np.ndarray | None = None   # uint32 [n]: bit g set = a road of group g meets the node

    def groups_of_arcs(self, arcs) -> int:
        """Bit mask of the road groups the graph arcs ``arcs`` belong to."""
        if self.arc_group is None or len(arcs) == 0:
            return 0
        return sum(1 << int(g) for g in np.unique(self.arc_group[np.asarray(arcs)]))

    def groups_at_node(self, node: int) -> int:
        """Bit mask of the road groups that meet ``node``."""
        return 0 if self.node_groups is None else int(self.node_groups[node])

    def east_metres_per_unit(self, y: float) -> float:
        """Ground metres per projected x unit at projected y (1 at ``origin_lat``):
        the equirectangular projection stretches east-west lengths by cos(lat0)/cos(lat)."""
        lat = self.origin_lat + np.degrees(y / EARTH_RADIUS_M)
        return float(np.cos(np.radians(lat)) / np.cos(np.radians(self.origin_lat)))

    @property
    def node_xy(self) -> np.ndarray:
        return self.points[:self.num_nodes]

    @property
    def exact(self) -> Level:
        return self.levels[-1]

    def level_for(self, metres_per_pixel: float) -> Level:
        """The coarsest level whose grid cell is at most one pixel."""
        for level in self.levels:
            if level.cell <= metres_per_pixel:
                return level
        return self.exact

    def nearest_node(self, x: float, y: float) -> int:
        return int(self.tree.query([x, y])[1])

    def nodes_in(self, rect) -> np.ndarray:
        xmin, ymin, xmax, ymax = rect
        xy = self.node_xy
        return np.flatnonzero((xy[:, 0] >= xmin) & (xy[:, 0] <= xmax) &
                              (xy[:, 1] >= ymin) & (xy[:, 1] <= ymax))


def drawing_points(graph: RoadGraph) -> np.ndarray:
    """Node xy followed by the projected interior geometry points."""
    if graph.geometry_lonlat is None or graph.geometry_lonlat.size == 0:
        return np.asarray(graph.xy, dtype=np.float64)
    g = graph.geometry_lonlat
    return np.concatenate([graph.xy, graph.projection.project(g[:, 0], g[:, 1])])


def build_drawing(graph: RoadGraph, coarsest_cells: int | None = None) -> NetworkDrawing | None:
    """Segments and levels of detail for a graph with coordinates (None without)."""
    if graph.xy is None:
        return None
    n = graph.num_nodes
    points = drawing_points(graph)
    # one arc per road: u->v and v->u are drawn once
    lo = np.minimum(graph.tail, graph.head).astype(np.int64)
    hi = np.maximum(graph.tail, graph.head).astype(np.int64)
    _, arcs = np.unique(lo * max(n, 1) + hi, return_index=True)
    if "road_class" in graph.arc_attrs:
        groups = ROAD_GROUPS
        group_of_arc = CLASS_TO_GROUP[graph.arc_attrs["road_class"].astype(np.int64)]
    else:
        groups = (PLAIN_GROUP,)
        group_of_arc = np.zeros(graph.num_arcs, dtype=np.int8)
    arc_group = group_of_arc[arcs]

    idx, starts, k = arc_chains(graph, arcs)
    is_start = np.ones(max(idx.size - 1, 0), dtype=bool)
    is_start[(starts + k + 1)[:-1]] = False   # the last point of a chain starts nothing
    seg_a = idx[:-1][is_start]
    seg_b = idx[1:][is_start]
    seg_group = np.repeat(arc_group, k + 1)
    seg_arc = np.repeat(arcs, k + 1)
    ends = (graph.tail[seg_arc].astype(np.int32), graph.head[seg_arc].astype(np.int32))

    if points.size:
        bounds = (*points.min(axis=0), *points.max(axis=0))
    else:
        bounds = (0.0, 0.0, 1.0, 1.0)
    exact = _level(0.0, points, seg_a, seg_b, seg_group, len(groups), ends)
    levels = []
    extent = max(bounds[2] - bounds[0], bounds[3] - bounds[1])
    cell = extent / (coarsest_cells or COARSEST_CELLS)
    while cell > 0 and seg_a.size and len(levels) < 16:
        level = _clustered_level(cell, points, bounds, seg_a, seg_b, seg_group, len(groups), ends)
        if level.num_segments > KEEP_LEVEL_BELOW * exact.num_segments:
            break
        levels.append(level)
        cell /= 2
    return NetworkDrawing(tuple(groups), points, n, (*levels, exact), tuple(map(float, bounds)),
                          cKDTree(graph.xy), bulk_bounds(graph),
                          graph.projection.lat0 if n else 0.0,
                          group_of_arc, _node_groups(graph, group_of_arc, len(groups)))


def bulk_bounds(graph: RoadGraph) -> tuple[float, float, float, float]:
    """The box a first view should fit: the BULK_PERCENTILE..100-BULK_PERCENTILE box of
    the nodes of the network's main parts (weakly connected components with at least
    BULK_COMPONENT_SHARE of the nodes, always the largest), widened by BULK_REACH of its
    size on each side as far as those nodes go (an even network is shown whole).

    Percentiles drop the few far nodes of a ferry to another coast; components drop the
    clipped fragments an extract has around it (heidelberg.ors-test: 10 % of the nodes
    spread over 80 km). Two big islands stay together: both are main parts.
    """
    xy = graph.xy
    n = graph.num_nodes
    if n == 0:
        return (0.0, 0.0, 1.0, 1.0)
    adjacency = coo_matrix((np.ones(graph.num_arcs, dtype=np.int8), (graph.tail, graph.head)), shape=(n, n))
    _, label = connected_components(adjacency, directed=True, connection="weak")
    size = np.bincount(label)
    main = (size >= BULK_COMPONENT_SHARE * n) | (size == size.max())
    pts = xy[main[label]]
    # nearest-rank percentiles: with fewer than 100 nodes no node is cut
    lo = np.percentile(pts, BULK_PERCENTILE, axis=0, method="inverted_cdf")
    hi = np.percentile(pts, 100 - BULK_PERCENTILE, axis=0, method="inverted_cdf")
    # ... and the nodes just beyond them stay: only far outliers are left out
    reach = BULK_REACH * (hi - lo)
    lo, hi = np.maximum(pts.min(axis=0), lo - reach), np.minimum(pts.max(axis=0), hi + reach)
    centre, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 50.0)   # never a zero-size view
    return (*map(float, centre - half), *map(float, centre + half))


def _node_groups(graph: RoadGraph, arc_group: np.ndarray, num_groups: int) -> np.ndarray:
    mask = np.zeros(graph.num_nodes, dtype=np.uint32)
    for g in range(num_groups):
        ends = np.concatenate([graph.tail[arc_group == g], graph.head[arc_group == g]])
        mask[np.unique(ends)] |= np.uint32(1 << g)
    return mask


def _level(cell, points, seg_a, seg_b, seg_group, num_groups, ends) -> Level:
    order = np.argsort(seg_group, kind="stable")
    a, b = seg_a[order], seg_b[order]
    first = np.zeros(num_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg_group, minlength=num_groups), out=first[1:])
    return Level(cell, points[a, 0], points[a, 1], points[b, 0], points[b, 1], first,
                 ends[0][order], ends[1][order])


def _clustered_level(cell, points, bounds, seg_a, seg_b, seg_group, num_groups, ends) -> Level:
    """Vertex clustering: snap points to the mean of their grid cell, drop collapsed
    and repeated segments (per group); a kept segment keeps the road ends of the first
    segment it stands for."""
    ij = np.floor((points - np.asarray(bounds[:2])) / cell).astype(np.int64)
    key = ij[:, 0] * (int(ij[:, 1].max()) + 1) + ij[:, 1]
    _, cluster = np.unique(key, return_inverse=True)
    cluster = cluster.ravel()
    count = np.bincount(cluster)
    centre = np.stack([np.bincount(cluster, points[:, 0]) / count,
                       np.bincount(cluster, points[:, 1]) / count], axis=1)
    ca, cb = cluster[seg_a], cluster[seg_b]
    keep = ca != cb
    ca, cb, g = ca[keep], cb[keep], seg_group[keep]
    c = count.size
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    _, first = np.unique((g.astype(np.int64) * c + lo) * c + hi, return_index=True)
    kept_ends = (ends[0][keep][first], ends[1][keep][first])
    return _level(cell, centre, lo[first], hi[first], g[first], num_groups, kept_ends)
