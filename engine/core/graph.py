"""RoadGraph: a directed road network as flat arrays (RoutingKit naming).

Arcs are stored sorted by tail in a forward CSR (``first_out``, ``head``).
Every per-arc array (metrics, attributes, geometry) follows that order.
Parallel arcs are legal and kept; self loops are dropped on construction.
Node ids of the input file are kept in ``node_id`` so that everything the
user sees speaks the file's language, never internal indices.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

EARTH_RADIUS_M = 6_371_008.8

# Road classes, fastest first. Index = value stored in the ``road_class`` attribute.
ROAD_CLASSES = (
    "motorway", "trunk", "primary", "secondary", "tertiary",
    "unclassified", "residential", "living_street", "service", "ferry",
)
ROAD_CLASS_INDEX = {name: i for i, name in enumerate(ROAD_CLASSES)}


class GraphError(ValueError):
    """An inconsistent graph was about to be built."""


@dataclass(frozen=True)
class BackwardGraph:
    """Reverse CSR: the arcs entering each node. ``in_arc`` maps to forward arc ids."""
    first_in: np.ndarray   # int32 [n+1]
    tail: np.ndarray       # int32 [m] tail of each entering arc
    in_arc: np.ndarray     # int32 [m] forward arc id


@dataclass(frozen=True)
class TurnRestrictions:
    """Banned turns as pairs of arc ids (from_arc enters the via node, to_arc leaves it).

    ``only_*`` restrictions are stored in this same form: every other turn out of the
    via node from that arc is banned.
    """
    from_arc: np.ndarray   # int32 [r]
    to_arc: np.ndarray     # int32 [r]

    def __len__(self) -> int:
        return int(self.from_arc.size)


@dataclass(frozen=True, eq=False)
class RoadGraph:
    first_out: np.ndarray                   # int32 [n+1]
    head: np.ndarray                        # int32 [m]
    metrics: dict[str, np.ndarray]          # name -> int32 [m], non-negative integral costs
    node_id: np.ndarray                     # int64 [n], the input file's ids
    lon: np.ndarray | None = None           # float64 [n], degrees
    lat: np.ndarray | None = None           # float64 [n], degrees
    arc_attrs: dict[str, np.ndarray] = field(default_factory=dict)
    geometry_first: np.ndarray | None = None   # int64 [m+1] into geometry_lonlat
    geometry_lonlat: np.ndarray | None = None  # float64 [k, 2] interior points per arc
    turn_restrictions: TurnRestrictions | None = None
    metric_units: dict[str, str] = field(default_factory=dict)  # e.g. distance -> "m"
    source: str = ""                        # where it came from, for titles and info
    data_license: str = ""                  # e.g. "© OpenStreetMap contributors"

    # ---------------------------------------------------------------- sizes
    @property
    def num_nodes(self) -> int:
        return int(self.first_out.size - 1)

    @property
    def num_arcs(self) -> int:
        return int(self.head.size)

    @property
    def has_coordinates(self) -> bool:
        return self.lon is not None

    @property
    def metric_names(self) -> list[str]:
        return list(self.metrics)

    @property
    def default_metric(self) -> str:
        return next(iter(self.metrics))

    # ------------------------------------------------------------- derived
    @cached_property
    def tail(self) -> np.ndarray:
        counts = np.diff(self.first_out)
        return np.repeat(np.arange(self.num_nodes, dtype=np.int32), counts)

    @cached_property
    def backward(self) -> BackwardGraph:
        order = np.argsort(self.head, kind="stable").astype(np.int32)
        counts = np.bincount(self.head, minlength=self.num_nodes)
        first_in = np.zeros(self.num_nodes + 1, dtype=np.int32)
        np.cumsum(counts, out=first_in[1:])
        return BackwardGraph(first_in, self.tail[order], order)

    @cached_property
    def xy(self) -> np.ndarray | None:
        """Projected coordinates in metres (equirectangular about the centre), [n, 2]."""
        if self.lon is None:
            return None
        return project_lonlat(self.lon, self.lat)

    @cached_property
    def projection(self) -> LocalProjection | None:
        """The projection of ``xy``, both ways (None without coordinates or nodes)."""
        return None if self.lon is None or self.lon.size == 0 else LocalProjection(self.lon, self.lat)

    @cached_property
    def _id_index(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.node_id, kind="stable")
        return self.node_id[order], order

    def index_of(self, node_ids) -> np.ndarray:
        """Internal indices of file node ids; raises KeyError naming an unknown id."""
        ids = np.atleast_1d(np.asarray(node_ids, dtype=np.int64))
        sorted_ids, order = self._id_index
        pos = np.searchsorted(sorted_ids, ids)
        pos_clipped = np.minimum(pos, sorted_ids.size - 1)
        bad = (pos >= sorted_ids.size) | (sorted_ids[pos_clipped] != ids)
        if bad.any():
            raise KeyError(f"unknown node id {int(ids[bad][0])} (the graph's ids run "
                           f"{int(sorted_ids[0])}..{int(sorted_ids[-1])})")
        return order[pos_clipped].astype(np.int32)

    def metric_of(self, name: str | None = None):
        """The metric ``name`` as an engine.core.metric.Metric (weights, unit, content hash);
        one object per name, so its hash is computed once."""
        from engine.core.metric import Metric
        name = name or self.default_metric
        if name not in self._metric_objects:
            self._metric_objects[name] = Metric.of(self, name)
        return self._metric_objects[name]

    @cached_property
    def _metric_objects(self) -> dict:
        return {}

    def metric(self, name: str | None = None) -> np.ndarray:
        name = name or self.default_metric
        try:
            return self.metrics[name]
        except KeyError:
            raise KeyError(f"unknown metric {name!r}; this graph has "
                           f"{', '.join(self.metrics)}") from None

    def distance_dtype(self, metric: str | None = None) -> np.dtype:
        """Smallest integer dtype that holds every shortest-path length of ``metric``.

        The bound (n-1) * max arc cost covers any simple path; int64 always suffices
        because construction rejects graphs whose bound overflows it.
        """
        bound = path_cost_bound(self.num_nodes, self.metric(metric))
        return np.dtype(np.int32) if bound < np.iinfo(np.int32).max else np.dtype(np.int64)

    def arc_geometry(self, arc: int) -> np.ndarray:
        """Polyline (lon, lat) of an arc from its tail to its head, [k, 2]."""
        pts = [(self.lon[self.tail[arc]], self.lat[self.tail[arc]])]
        if self.geometry_first is not None:
            a, b = self.geometry_first[arc], self.geometry_first[arc + 1]
            pts.extend(map(tuple, self.geometry_lonlat[a:b]))
        pts.append((self.lon[self.head[arc]], self.lat[self.head[arc]]))
        return np.asarray(pts, dtype=np.float64)

    # ---------------------------------------------------------- construction
    @classmethod
    def from_arcs(cls, num_nodes: int, tail, head, metrics: dict, node_id=None, *,
                  lon=None, lat=None, arc_attrs=None, geometry_first=None,
                  geometry_lonlat=None, banned_turns=None, metric_units=None,
                  source: str = "", data_license: str = "") -> "RoadGraph":
        """Build a validated graph from arc lists in any order.

        ``banned_turns`` is a pair (from_arc, to_arc) of indices into the given arc
        list. Self loops are dropped (with any restriction or geometry on them).
        """
        tail, head = _checked_arcs(num_nodes, tail, head)
        metrics = _checked_metrics(num_nodes, tail.size, metrics)
        arc_order = _arc_order(tail.size)
        # a counting sort by tail (engine.core.arc_order); None: already in order
        order, first_out = arc_order.tail_order(tail, head, num_nodes)
        attrs = _reordered_attrs(arc_attrs, tail.size, order, arc_order)
        new_head = arc_order.gather(head, order, np.int32)
        g_first = g_pts = None
        if geometry_first is not None:
            g_first, g_pts = arc_order.gather_ragged(
                np.asarray(geometry_first, dtype=np.int64),
                np.asarray(geometry_lonlat, dtype=np.float64), order)
        restrictions = None
        if banned_turns is not None:
            restrictions = _renumbered_restrictions(
                banned_turns, arc_order.new_of_old(order, tail.size), new_head, first_out)
        node_id = _checked_node_ids(num_nodes, node_id, arc_order)
        lon, lat = _checked_coordinates(num_nodes, lon, lat)
        return cls(
            first_out=first_out,
            head=new_head,
            metrics={k: arc_order.gather(w, order, np.int32) for k, w in metrics.items()},
            node_id=node_id, lon=lon, lat=lat, arc_attrs=attrs,
            geometry_first=g_first, geometry_lonlat=g_pts,
            turn_restrictions=restrictions,
            metric_units=dict(metric_units or {}),
            source=source, data_license=data_license,
        )


# ------------------------------------------------- construction steps (from_arcs)
def _arc_order(m: int):
    """The module that orders ``m`` arcs: NumPy below SMALL_ARCS (no Numba import, no
    compilation for small files), engine.core.arc_order's parallel Numba above."""
    from engine.core import arc_order_small
    if m < arc_order_small.SMALL_ARCS:
        return arc_order_small
    from engine.core import arc_order
    return arc_order


# The checks run in this order so that a bad input always names the same problem.
def _checked_arcs(num_nodes: int, tail, head) -> tuple[np.ndarray, np.ndarray]:
    """tail and head as integer arrays, after checking their lengths and node ids."""
    tail = np.asarray(tail)
    head = np.asarray(head)
    m = tail.size
    if head.size != m:
        raise GraphError("tail and head differ in length")
    for name, ids in (("tail", tail), ("head", head)):
        if m and not np.issubdtype(ids.dtype, np.integer):
            raise GraphError(f"arc {name} ids are not integers ({ids.dtype})")
    if not m:                                   # np.array([]) is float64: no ids to check
        tail, head = tail.astype(np.int32), head.astype(np.int32)
    if num_nodes < 0 or num_nodes >= np.iinfo(np.int32).max:
        raise GraphError(f"node count {num_nodes} out of range")
    for name, ids in (("tail", tail), ("head", head)):
        if m and (ids.min() < 0 or ids.max() >= num_nodes):
            raise GraphError(f"arc {name} id out of range 0..{num_nodes - 1}")
    return tail, head


def _checked_metrics(num_nodes: int, m: int, metrics: dict) -> dict[str, np.ndarray]:
    """Metrics as arrays: one non-negative integer per arc, path costs within int64."""
    if not metrics:
        raise GraphError("a graph needs at least one metric")
    metrics = {k: np.asarray(v) for k, v in metrics.items()}
    for name, w in metrics.items():
        if w.shape != (m,):
            raise GraphError(f"metric {name!r} has {w.size} values for {m} arcs")
        if not np.issubdtype(w.dtype, np.integer):
            raise GraphError(f"metric {name!r} is not integral")
        if m and w.min() < 0:
            raise GraphError(f"metric {name!r} has a negative cost")
        if m and w.max() > np.iinfo(np.int32).max:
            raise GraphError(f"metric {name!r} has a cost above 2^31-1")
        path_cost_bound(num_nodes, w)  # raises on int64 overflow
    return metrics


def csr_offsets(rows: np.ndarray, num_rows: int, dtype=np.int32) -> np.ndarray:
    """CSR offsets [num_rows + 1] of entries grouped by row, ``rows`` giving each
    entry's row (e.g. the forward offsets ``first_out`` of arcs sorted by tail)."""
    first = np.zeros(num_rows + 1, dtype=dtype)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=first[1:])
    return first


def _reordered_attrs(arc_attrs, m: int, order: np.ndarray, arc_order) -> dict[str, np.ndarray]:
    """Arc attributes in the new arc order, after checking one value per given arc."""
    attrs = {}
    for name, values in (arc_attrs or {}).items():
        values = np.asarray(values)
        if values.shape[0] != m:
            raise GraphError(f"arc attribute {name!r} has {values.shape[0]} values for {m} arcs")
        attrs[name] = arc_order.gather(values, order)
    return attrs


def _renumbered_restrictions(banned_turns, new_of_old: np.ndarray, sorted_head: np.ndarray,
                             first_out: np.ndarray) -> TurnRestrictions:
    """Banned (from_arc, to_arc) pairs in new arc ids, unique and sorted; pairs that
    touch a dropped self loop go with it. (A to_arc's tail: the node whose arcs
    first_out brackets it, found by a binary search.)"""
    f = new_of_old[np.asarray(banned_turns[0], dtype=np.int64)]
    to = new_of_old[np.asarray(banned_turns[1], dtype=np.int64)]
    ok = (f >= 0) & (to >= 0)
    f, to = f[ok].astype(np.int32), to[ok].astype(np.int32)
    to_tail = np.searchsorted(first_out, to, side="right") - 1
    if np.any(sorted_head[f] != to_tail):
        raise GraphError("a turn restriction joins arcs that do not meet")
    pairs = np.unique(np.stack([f, to], axis=1), axis=0) if f.size else np.zeros((0, 2), np.int32)
    return TurnRestrictions(pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32))


def _checked_node_ids(num_nodes: int, node_id, arc_order) -> np.ndarray:
    """int64 file ids, one per node and unique (0..n-1 when none are given)."""
    if node_id is None:
        node_id = np.arange(num_nodes, dtype=np.int64)
    node_id = np.asarray(node_id, dtype=np.int64)
    if node_id.shape != (num_nodes,):
        raise GraphError("node_id must have one entry per node")
    if node_id.size > 1 and not arc_order.strictly_increasing(node_id):   # else unique
        sorted_ids = np.sort(node_id)
        if np.any(sorted_ids[1:] == sorted_ids[:-1]):
            raise GraphError("node ids are not unique")
    return node_id


def _checked_coordinates(num_nodes: int, lon, lat):
    """(lon, lat) as float64, one finite pair per node, or (None, None)."""
    if (lon is None) != (lat is None):
        raise GraphError("give both lon and lat or neither")
    if lon is None:
        return None, None
    lon = np.asarray(lon, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    if lon.shape != (num_nodes,) or lat.shape != (num_nodes,):
        raise GraphError("coordinates must have one entry per node")
    if not (np.isfinite(lon).all() and np.isfinite(lat).all()):
        raise GraphError("coordinates must be finite")
    return lon, lat


def path_cost_bound(num_nodes: int, weights: np.ndarray) -> int:
    """(n-1) * max cost, as a Python int; raises GraphError when it overflows int64."""
    max_w = int(weights.max()) if weights.size else 0
    bound = max(num_nodes - 1, 0) * max_w
    if bound >= np.iinfo(np.int64).max:
        raise GraphError("path costs could overflow 64-bit integers")
    return bound


class LocalProjection:
    """Equirectangular metres about the centre of the bounding box of ``lon``/``lat``
    (the nodes'), both ways: ``RoadGraph.xy``, the map, isochrones and exports share it.

    Road networks we draw span at most a few hundred km, where this keeps lengths
    within a fraction of a percent and keeps the map's x/y aspect honest.
    """

    def __init__(self, lon: np.ndarray, lat: np.ndarray) -> None:
        self.lon0 = 0.5 * (float(np.min(lon)) + float(np.max(lon)))
        self.lat0 = 0.5 * (float(np.min(lat)) + float(np.max(lat)))   # x is true to scale here
        self.ky = np.pi / 180.0 * EARTH_RADIUS_M           # metres per degree
        self.kx = self.ky * np.cos(np.radians(self.lat0))

    def project(self, lon, lat) -> np.ndarray:
        """[k, 2] metres of the points (lon[i], lat[i])."""
        x = (np.asarray(lon, dtype=np.float64) - self.lon0) * self.kx
        y = (np.asarray(lat, dtype=np.float64) - self.lat0) * self.ky
        return np.stack([x, y], axis=1)

    def to_xy(self, lonlat) -> np.ndarray:
        """[k, 2] lon/lat points in metres."""
        lonlat = np.asarray(lonlat, dtype=np.float64).reshape(-1, 2)
        return self.project(lonlat[:, 0], lonlat[:, 1])

    def to_lonlat(self, xy) -> np.ndarray:
        """The inverse of ``to_xy``."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        return np.stack([xy[:, 0] / self.kx + self.lon0, xy[:, 1] / self.ky + self.lat0], axis=1)


def project_lonlat(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Equirectangular projection in metres about the bounding-box centre (LocalProjection)."""
    if lon.size == 0:
        return np.zeros((0, 2))
    return LocalProjection(lon, lat).project(lon, lat)


def haversine_m(lon1, lat1, lon2, lat2) -> np.ndarray:
    """Great-circle distance in metres."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp = p2 - p1
    dl = np.radians(np.asarray(lon2) - np.asarray(lon1))
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))
