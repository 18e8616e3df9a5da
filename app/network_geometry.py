"""What the map draws, as flat NumPy arrays (no Qt): built once per graph on the engine thread.

* ``build_drawing(graph)`` turns the arcs into line segments in projected metres
  (``graph.xy``), following per-arc geometry, one segment chain per two-way road,
  sorted by road-class group.
* Level of detail: coarser copies of the segments made by vertex clustering on grids
  of doubling cell size (a group's points snap to the mean of its points in their grid
  cell, segments that collapse or repeat are dropped). At a zoom where a cell is at
  most a pixel the picture is the same, with far fewer segments; ``NetworkDrawing.detail``
  picks the level and the road groups that fit a segment budget (the main roads first).
  Each level is indexed by tiles (``Level.select``: a crop costs what it returns);
  ``Level.pairs(group, rect)`` gives x/y arrays for ``connect='pairs'``.
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
# The segment index: about this many segments per tile of a level's grid (at most
# MAX_TILES_ACROSS tiles along a side; the keys stay int32).
SEGMENTS_PER_TILE = 32
MAX_TILES_ACROSS = 4096
LONG_TILE = np.iinfo(np.int32).max   # the key of segments longer than a tile


@dataclass(frozen=True)
class Level:
    """Segments of one level of detail, sorted by group: group g is [first[g], first[g+1]).

    A segment is two indices into ``points`` (the drawing's points for the exact level,
    the cluster centres for a coarse one): 8 bytes, not 32 of coordinates. Within a
    group, segments are sorted by the grid tile of their midpoint (``tile``), so that
    the segments meeting a rectangle are a few contiguous runs found by binary search
    (``select``), not a scan of the whole level: a re-crop costs what it draws.
    Segments longer than a tile (a ferry, a long straight road) sort after the tiles
    of their group (tile = LONG_TILE) and are tested one by one.
    """
    cell: float                 # grid cell in metres; 0 for the exact geometry
    points: np.ndarray          # float64 [p, 2]
    a: np.ndarray               # int32 [s]: first end of each segment, into points
    b: np.ndarray               # int32 [s]
    group_first: np.ndarray     # int64 [num_groups + 1]
    end_a: np.ndarray           # int32 [s]: the end nodes of the road a segment draws
    end_b: np.ndarray
    tile: np.ndarray            # int32 [s]: row * columns + column of the midpoint's tile
    grid: tuple[float, float, float, int, int]   # x origin, y origin, tile size, columns, rows
    reach: np.ndarray           # float64 [num_groups, 2]: largest half-extent (x, y) of a short segment

    @property
    def num_segments(self) -> int:
        return int(self.a.size)

    x0 = property(lambda self: self.points[self.a, 0])
    y0 = property(lambda self: self.points[self.a, 1])
    x1 = property(lambda self: self.points[self.b, 0])
    y1 = property(lambda self: self.points[self.b, 1])

    def _runs(self, group: int, rect) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (absolute, end excluded) of the runs of ``group``'s segments
        whose midpoint tile can hold a segment meeting ``rect``; the long ones last."""
        a, b = int(self.group_first[group]), int(self.group_first[group + 1])
        keys = self.tile[a:b]
        ox, oy, size, cols, rows = self.grid
        rx, ry = self.reach[group]
        c0, c1 = max(int((rect[0] - rx - ox) // size), 0), min(int((rect[2] + rx - ox) // size), cols - 1)
        r0, r1 = max(int((rect[1] - ry - oy) // size), 0), min(int((rect[3] + ry - oy) // size), rows - 1)
        row = np.arange(r0, r1 + 1, dtype=np.int64) * cols if c0 <= c1 else np.zeros(0, np.int64)
        start = np.searchsorted(keys, row + c0, "left")
        end = np.searchsorted(keys, row + c1, "right")
        long_start = np.searchsorted(keys, LONG_TILE, "left")
        return (np.append(start, long_start) + a, np.append(end, keys.size) + a)

    def count(self, group: int, rect=None) -> int:
        """An upper bound of ``len(select(group, rect))``, cheap: the size of the runs."""
        if rect is None:
            return int(self.group_first[group + 1] - self.group_first[group])
        start, end = self._runs(group, rect)
        return int((end - start).sum())

    def select(self, group: int | None = None, rect=None) -> np.ndarray:
        """Indices of a group's segments (all groups for None) whose box meets ``rect``
        = (xmin, ymin, xmax, ymax), or all of them for no rect."""
        if group is None:
            return np.concatenate([self.select(g, rect) for g in range(self.group_first.size - 1)]
                                  or [np.zeros(0, np.int64)])
        a, b = int(self.group_first[group]), int(self.group_first[group + 1])
        if rect is None:
            return np.arange(a, b)
        start, end = self._runs(group, rect)
        idx = _ranges(start, end)
        pa, pb = self.points[self.a[idx]], self.points[self.b[idx]]
        xmin, ymin, xmax, ymax = rect
        keep = ((np.maximum(pa[:, 0], pb[:, 0]) >= xmin) & (np.minimum(pa[:, 0], pb[:, 0]) <= xmax) &
                (np.maximum(pa[:, 1], pb[:, 1]) >= ymin) & (np.minimum(pa[:, 1], pb[:, 1]) <= ymax))
        return idx[keep]

    def pairs_of(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Interleaved x, y (start, end, start, end, ...) of the segments ``idx``."""
        ends = np.empty(2 * idx.size, dtype=np.int64)
        ends[0::2], ends[1::2] = self.a[idx], self.b[idx]
        xy = self.points[ends]
        return np.ascontiguousarray(xy[:, 0]), np.ascontiguousarray(xy[:, 1])

    def pairs_near(self, group: int, centres, r: float) -> tuple[np.ndarray, np.ndarray]:
        """x, y of a group's segments that meet a box of half-side ``r`` around a centre."""
        idx = [self.select(group, (x - r, y - r, x + r, y + r)) for x, y in centres]
        return self.pairs_of(np.unique(np.concatenate(idx or [np.zeros(0, np.int64)])))

    def pairs(self, group: int, rect=None) -> tuple[np.ndarray, np.ndarray]:
        """x, y for ``connect='pairs'`` of a group's segments that meet ``rect``."""
        return self.pairs_of(self.select(group, rect))

    @property
    def nbytes(self) -> int:
        """Bytes this level holds beyond the drawing's points (a coarse level's centres count)."""
        own = [self.a, self.b, self.end_a, self.end_b, self.tile, self.group_first, self.reach]
        return sum(x.nbytes for x in own) + (self.points.nbytes if self.cell > 0 else 0)


def _ranges(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The concatenation of arange(s, e) for every run (no Python loop)."""
    length = np.maximum(end - start, 0)
    total = int(length.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offset = np.repeat(start - np.cumsum(length) + length, length)
    return offset + np.arange(total, dtype=np.int64)


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

    def detail(self, metres_per_pixel: float, rect, budget: int, eligible: int,
               pinned: int = 0) -> tuple[Level, int, int]:
        """What the map draws of ``rect``: a level, a bit mask of groups drawn whole and
        one of groups drawn only near the markers.

        The level is the coarsest whose cell is at most a pixel (``level_for``), or a
        coarser one while the most important group alone has more than ``budget``
        segments in ``rect``. Then groups join in order of importance (the order of
        ROAD_GROUPS) while they are ``eligible`` and all of them together stay within
        ``budget`` (a segment of a pen wider than a pixel counts twice): zoomed out over
        a big network only the main roads are drawn, as on a printed map, and zoomed in
        every road is. The most important group is always drawn. A group in ``pinned``
        (it carries the route or a marker) is drawn whole where small (a few ferries), else
        near the markers only (the route hides its roads; lone service roads would speckle).
        """
        k = self.levels.index(self.level_for(metres_per_pixel))
        cost = [1 + (group.width > 1) for group in self.groups]     # a wide pen paints ~2x slower
        while True:
            level = self.levels[k]
            counts = [level.count(g, rect) * cost[g] for g in range(len(self.groups))]
            if counts[0] <= budget or k == 0:
                break
            k -= 1
        mask, total = 1, counts[0]
        for g in range(1, len(counts)):
            if not eligible >> g & 1 or total + counts[g] > budget:
                break
            mask, total = mask | 1 << g, total + counts[g]
        near = 0
        for g in range(len(counts)):
            if pinned >> g & 1 and not mask >> g & 1:
                if counts[g] <= budget // 20 and total + counts[g] <= budget:   # a few ferries
                    mask, total = mask | 1 << g, total + counts[g]
                else:
                    near |= 1 << g
        return level, mask | near, near

    def memory(self) -> dict[str, int]:
        """Bytes held per part (docs/memory.md: the window geometry), the KD-tree estimated
        from its arrays and node count (SciPy keeps its nodes in C++)."""
        t = self.tree
        return {"points": self.points.nbytes,
                "levels": sum(level.nbytes for level in self.levels),
                "kd-tree": t.data.nbytes + t.indices.nbytes + 72 * t.size,
                "groups": sum(x.nbytes for x in (self.arc_group, self.node_groups) if x is not None)}

    def nearest_node(self, x: float, y: float) -> int:
        return int(self.tree.query([x, y])[1])

    def nodes_in(self, rect) -> np.ndarray:
        """Sorted indices of the nodes in ``rect`` (a KD-tree box query, no scan of every node)."""
        xmin, ymin, xmax, ymax = rect
        centre = ((xmin + xmax) / 2, (ymin + ymax) / 2)
        near = np.asarray(self.tree.query_ball_point(centre, max(xmax - xmin, ymax - ymin) / 2,
                                                     p=np.inf, return_sorted=True), dtype=np.int64)
        xy = self.node_xy[near]
        return near[(xy[:, 0] >= xmin) & (xy[:, 0] <= xmax) & (xy[:, 1] >= ymin) & (xy[:, 1] <= ymax)]


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
    exact = _level(0.0, points, seg_a, seg_b, seg_group, len(groups), ends, bounds)
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
    bit = np.left_shift(np.uint32(1), arc_group.astype(np.uint32))
    np.bitwise_or.at(mask, graph.tail, bit)
    np.bitwise_or.at(mask, graph.head, bit)
    return mask


def _level(cell, points, seg_a, seg_b, seg_group, num_groups, ends, bounds) -> Level:
    """A level's segments sorted by (group, midpoint tile), with its grid and reaches."""
    seg_a, seg_b = seg_a.astype(np.int32), seg_b.astype(np.int32)
    xmin, ymin, xmax, ymax = bounds
    across = int(np.clip(np.sqrt(max(seg_a.size, 1) / SEGMENTS_PER_TILE), 1, MAX_TILES_ACROSS))
    size = max(xmax - xmin, ymax - ymin, 1.0) / across * (1 + 1e-9)
    cols = int((xmax - xmin) // size) + 1
    rows = int((ymax - ymin) // size) + 1
    pa, pb = points[seg_a], points[seg_b]
    half = np.abs(pb - pa) / 2
    mid = (pa + pb) / 2
    col = np.clip(((mid[:, 0] - xmin) // size).astype(np.int64), 0, cols - 1)
    row = np.clip(((mid[:, 1] - ymin) // size).astype(np.int64), 0, rows - 1)
    long = (half > size).any(axis=1)
    tile = np.where(long, LONG_TILE, row * cols + col)
    order = np.argsort(seg_group.astype(np.int64) << 32 | tile)      # by group, then tile
    first = np.zeros(num_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg_group, minlength=num_groups), out=first[1:])
    half = np.where(long[:, None], 0.0, half)[order]
    reach = np.zeros((num_groups, 2))
    for g in range(num_groups):     # the largest half-extent of a short segment, per group
        if first[g + 1] > first[g]:
            reach[g] = half[first[g]:first[g + 1]].max(axis=0)
    return Level(cell, points, seg_a[order], seg_b[order], first, ends[0][order], ends[1][order],
                 tile[order].astype(np.int32), (float(xmin), float(ymin), float(size), cols, rows), reach)


def _clustered_level(cell, points, bounds, seg_a, seg_b, seg_group, num_groups, ends) -> Level:
    """Vertex clustering per road group: the segment ends of a group snap to the mean of
    that group's ends in their grid cell (a main road is not pulled towards the side
    streets around it, which made it jagged), and segments that collapse or repeat are
    dropped; a kept segment keeps the road ends of the first segment it stands for."""
    ij = np.floor((points - np.asarray(bounds[:2])) / cell).astype(np.int64)
    cell_of_point = ij[:, 0] * (int(ij[:, 1].max()) + 1) + ij[:, 1]
    s = seg_a.size
    end_point = np.concatenate([seg_a, seg_b])
    key = np.tile(seg_group.astype(np.int64), 2) * (int(cell_of_point.max()) + 1) + cell_of_point[end_point]
    _, cluster = np.unique(key, return_inverse=True)
    cluster = cluster.ravel()
    count = np.bincount(cluster)
    centre = np.stack([np.bincount(cluster, points[end_point, 0]) / count,
                       np.bincount(cluster, points[end_point, 1]) / count], axis=1)
    ca, cb = cluster[:s], cluster[s:]
    keep = ca != cb
    ca, cb, g = ca[keep], cb[keep], seg_group[keep]
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    _, first = np.unique(lo * np.int64(count.size) + hi, return_index=True)    # clusters are per group
    kept_ends = (ends[0][keep][first], ends[1][keep][first])
    return _level(cell, centre, lo[first], hi[first], g[first], num_groups, kept_ends, bounds)
