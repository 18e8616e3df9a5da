"""Building the RoadGraph of the car ways that engine.io.osm has read.

Input: the kept ways as flat arrays (way ids, node-ref counts, every node ref as an
index into the file's unique node ids), their tag profiles (engine.io.osm_tags: a
table of the distinct profiles and each way's row in it, so that a way costs 4 bytes,
not a row of 10 floats) and the node locations. Ways are cut at missing nodes, split into edges between graph
nodes (way ends, shared nodes, roundabout midpoints), then each edge becomes one or
two arcs with interior geometry; all of it is numpy on flat arrays.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from engine.core.graph import RoadGraph, haversine_m
from engine.io.errors import LoadError
from engine.io.osm_arcs import arc_attr_columns, arc_columns, arc_costs, arc_geometry, ref_lonlat
from engine.io.osm_report import OsmReport
from engine.io.osm_restrictions import resolve_restrictions

__all__ = ["build_graph", "WaysRead", "LICENSE", "INVALID_COORD"]

LICENSE = "© OpenStreetMap contributors"
INVALID_COORD = 2**31 - 1   # libosmium's undefined coordinate (missing node)

# Columns of a way profile (engine.io.osm_tags.way_profile).
_CLASS, _FWD, _BWD, _SPEED_F, _SPEED_B, _LANES_F, _LANES_B, _TOLL, _ROUNDABOUT, _DURATION = range(10)


@dataclass
class _Profiles:
    """Way profiles: distinct rows, and each way's row."""
    table: np.ndarray    # [k, 10] float64
    row: np.ndarray      # [ways] index into table

    def of(self, ways, column: int) -> np.ndarray:
        """One column of the profiles of ``ways`` (indices, or a slice)."""
        return self.table[:, column][self.row[ways]]


@dataclass
class _Edges:
    """Stretches of a way between consecutive graph nodes: ref positions a..b."""
    a: np.ndarray
    b: np.ndarray
    way: np.ndarray      # index of its way
    tail: np.ndarray     # graph node at a
    head: np.ndarray     # graph node at b
    length: np.ndarray   # metres along the polyline


@dataclass
class _Arcs:
    """Directed arcs, forward arcs of all edges first, then the backward ones."""
    edge: np.ndarray
    forward: np.ndarray   # runs along its way (a -> b)
    tail: np.ndarray
    head: np.ndarray
    way: np.ndarray
    length: np.ndarray
    speed: np.ndarray
    lanes: np.ndarray
    row: np.ndarray       # its way's profile row: per-arc columns are one gather each


@dataclass
class WaysRead:
    """What a reader (engine.io.osm, engine.io.osm_pbf) hands to build_graph, which
    drops each array once it has used it, so that the reader's arrays and the graph's
    are not all held at the peak."""
    way_ids: np.ndarray       # int64 [w], the kept ways in file order
    lengths: np.ndarray       # [w] node refs per way
    ref_u: np.ndarray         # [r] every node ref, as an index into unique_ids
    unique_ids: np.ndarray    # int64 [u], sorted
    xy: np.ndarray            # [u, 2] libosmium fixed point; INVALID_COORD when missing
    prof_table: np.ndarray    # [k, 10] distinct way profiles (osm_tags.way_profile)
    way_prof: np.ndarray      # [w] each way's row in prof_table
    restrictions: list        # osm_restrictions.read_restriction's tuples


def build_graph(path, read: WaysRead, report: OsmReport, progress, cancel) -> RoadGraph:
    """The road graph of the kept ways; fills the report's node and turn counts."""
    prof = _Profiles(np.asarray(read.prof_table, np.float64).reshape(-1, 10),
                     np.asarray(read.way_prof, np.int32))
    num_ways, unique_ids = read.way_ids.size, read.unique_ids
    ref_u, way_of, piece = _way_pieces(path, read, report)
    split, a, b = _graph_segments(ref_u, piece, unique_ids.size)
    del piece
    cancel.check()

    is_node = np.zeros(unique_ids.size, dtype=bool)   # np.unique hashes: slow at scale
    is_node[ref_u[split]] = True
    del split
    node_u = np.flatnonzero(is_node).astype(np.int32)   # graph nodes < 2^31
    del is_node
    node_of_u = np.full(unique_ids.size, -1, dtype=np.int32)   # graph nodes < 2^31
    node_of_u[node_u] = np.arange(node_u.size)
    xy, read.xy = read.xy, None
    # libosmium fixed point; the division rounds like osmium's lon
    lon_p, lat_p = ref_lonlat(xy, ref_u)
    edges = _edges(a, b, way_of, node_of_u[ref_u[a]], node_of_u[ref_u[b]], lon_p, lat_p)
    del a, b, way_of, ref_u
    # the arcs' interior points first: the refs' coordinates (16 bytes a ref) go before
    # the per-arc columns (33 bytes an arc) are made, which lowers the load's peak
    edge_row = prof.row[edges.way]
    arc_edge, is_fwd = _arc_selection(prof, edge_row)
    g_first, geometry = arc_geometry(edges.a, edges.b, arc_edge, is_fwd, lon_p, lat_p)
    del lon_p, lat_p
    edges.a = edges.b = None
    arcs = _arcs(prof, edges, num_ways, arc_edge, is_fwd, edge_row)
    del arc_edge, is_fwd, edge_row

    progress(0.85, f"resolving {len(read.restrictions)} turn restrictions")
    cancel.check()
    banned = resolve_restrictions(read.restrictions, read.way_ids, unique_ids, node_of_u,
                                  arcs.tail, arcs.head, arcs.way, arcs.edge, report)
    read.way_ids = read.restrictions = read.unique_ids = None
    del edges, node_of_u
    node_id, lon, lat = unique_ids[node_u], xy[node_u, 0] / 1e7, xy[node_u, 1] / 1e7
    del unique_ids, xy, node_u   # only the graph's arrays go into from_arcs' copies
    metrics, attrs = _metrics(arcs), _arc_attrs(prof, arcs)
    tail, head = arcs.tail, arcs.head
    del arcs
    graph = RoadGraph.from_arcs(
        node_id.size, tail, head, metrics, node_id, lon=lon, lat=lat, arc_attrs=attrs,
        geometry_first=g_first, geometry_lonlat=geometry, banned_turns=banned,
        metric_units={"distance": "m", "travel_time": "ds"},
        source=path.name, data_license=LICENSE)
    report.banned_turns = len(graph.turn_restrictions)
    return graph


def _way_pieces(path, read: WaysRead, report: OsmReport):
    """(ref_u, way_of, piece): the usable node refs, each with its way and way piece
    (int32: 4 bytes per ref each; drops read.ref_u and read.lengths).

    A node missing from the file cuts its way: it is dropped and a new piece starts
    after it. Repeated consecutive refs (mapping errors) would make zero-length
    segments: all but the first go. Pieces of one node carry no segment."""
    lengths, ref_u = read.lengths, read.ref_u
    read.lengths = read.ref_u = None
    missing_u = (read.xy == INVALID_COORD).any(axis=1)
    ref_u, way_of, piece, missing = _pieces(lengths, ref_u, missing_u)
    report.missing_nodes = int(missing)
    if ref_u.size == 0:
        raise LoadError(path, "no drivable roads in this file (the road ways have no "
                              "node locations)")
    return ref_u, way_of, piece


def _pieces(lengths, ref_u, missing_u):
    """_way_pieces in parallel over ways: each way's refs are cut, deduplicated and
    its one-ref pieces dropped on their own (a piece never spans two ways), so a first
    pass counts what each way keeps, a prefix sum places it, and a second pass writes
    it. Piece numbers count the pieces begun, as a cumulative sum of piece starts over
    the whole file would (a start at a missing ref included)."""
    ref_first = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=ref_first[1:])
    # per way (pieces begun, refs kept, refs missing): counted into rows 1.., then
    # summed in place into each way's starts (one array of them at the peak, not two)
    starts = np.zeros((lengths.size + 1, 3), np.int64)
    _way_piece_pass(ref_u, missing_u, ref_first, starts[1:], starts, False,
                    np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.int64))
    np.cumsum(starts, axis=0, out=starts)
    kept = int(starts[-1, 1])
    out_ref, out_way = np.empty(kept, np.int32), np.empty(kept, np.int32)
    out_piece = np.empty(kept, np.int64)
    _way_piece_pass(ref_u, missing_u, ref_first, starts, starts, True, out_ref, out_way,
                    out_piece)
    return out_ref, out_way, out_piece, int(starts[-1, 2])


@numba.njit(cache=True, nogil=True, parallel=True)
def _way_piece_pass(ref_u, missing_u, ref_first, counts, starts, write, out_ref, out_way,
                    out_piece):
    """One pass over every way (in parallel; each writes only its own slots): counts
    [w] = (pieces begun, refs kept, refs missing), or, with ``write``, its kept refs
    from starts[w, 1] on, numbered from starts[w, 0]. A missing ref is dropped and ends
    its piece; a ref equal to the one before in its piece is dropped; a piece's first
    ref is held back until a second comes, so a piece of one ref is never written."""
    for w in numba.prange(ref_first.size - 1):
        begun = missing = size = 0   # size: refs of the current piece
        pos = starts[w, 1] if write else 0
        last = held = -1
        after_missing = False
        for p in range(ref_first[w], ref_first[w + 1]):
            r = ref_u[p]
            if p == ref_first[w] or after_missing:
                begun += 1
                size = 0
            after_missing = missing_u[r]
            if after_missing:
                missing += 1
            elif size == 0 or last != r:
                if size == 0:
                    held = r
                elif write and size == 1:
                    out_ref[pos], out_way[pos], out_piece[pos] = held, w, starts[w, 0] + begun
                    out_ref[pos + 1], out_way[pos + 1] = r, w
                    out_piece[pos + 1] = starts[w, 0] + begun
                elif write:
                    out_ref[pos], out_way[pos], out_piece[pos] = r, w, starts[w, 0] + begun
                pos += 2 if size == 1 else (1 if size > 1 else 0)
                size += 1
                last = r
        if not write:
            counts[w, 0], counts[w, 1], counts[w, 2] = begun, pos, missing


def _graph_segments(ref_u, piece, num_unique: int):
    """(split, a, b): which refs are graph nodes, and the (start, end) ref positions of
    the segments between them. Graph nodes are way ends and nodes used twice or more
    (by any ways, or one way twice)."""
    first = np.r_[True, piece[1:] != piece[:-1]]
    last = np.r_[piece[1:] != piece[:-1], True]
    uses = np.bincount(ref_u, minlength=num_unique)
    split = first | last | (uses[ref_u] >= 2)
    a, b = _segments(split, piece)
    # A closed segment (roundabout) would be a self loop: split it at its middle node,
    # which is used once only, so the two halves have distinct ends.
    loop = ref_u[a] == ref_u[b]
    if loop.any():
        split[(a[loop] + b[loop]) // 2] = True
        a, b = _segments(split, piece)
    return split, a, b


def _segments(split: np.ndarray, piece: np.ndarray):
    """(start, end) positions of consecutive graph nodes within one way piece."""
    s = np.flatnonzero(split)
    if s.size and s[-1] < 2**30:   # (a + b) // 2 stays in int32
        s = s.astype(np.int32)   # positions of refs: 4 bytes per edge end
    same = piece[s[:-1]] == piece[s[1:]]
    return s[:-1][same], s[1:][same]


def _edges(a, b, way_of, tail, head, lon_p, lat_p) -> _Edges:
    """Edges between graph nodes (ref positions a -> b, graph nodes tail -> head);
    lengths along the polyline, via the running sum of segment lengths."""
    cum = np.empty(lon_p.size)
    cum[0] = 0.0
    np.cumsum(_consecutive_haversine(lon_p, lat_p), out=cum[1:])
    return _Edges(a, b, way_of[a], tail, head, cum[b] - cum[a])


def _consecutive_haversine(lon, lat, chunk: int = 1 << 18) -> np.ndarray:
    """haversine_m between consecutive points, in chunks of 256 k on threads
    (NumPy's loops release the GIL; each element is computed as in one call, so the
    result is the same)."""
    n = max(lon.size - 1, 0)
    if n <= chunk:
        return haversine_m(lon[:-1], lat[:-1], lon[1:], lat[1:])
    out = np.empty(n)

    def part(s: int) -> None:
        e = min(n, s + chunk)
        out[s:e] = haversine_m(lon[s:e], lat[s:e], lon[s + 1:e + 1], lat[s + 1:e + 1])
    with ThreadPoolExecutor(min(os.cpu_count() or 1, 16)) as pool:
        list(pool.map(part, range(0, n, chunk)))
    return out


def _way_speeds(prof, edges: _Edges, num_ways: int):
    """(forward, backward) km/h per way: the tagged speeds, except that ferries with a
    duration run at whole route length / duration."""
    every = slice(None)
    speed_f, speed_b = prof.of(every, _SPEED_F), prof.of(every, _SPEED_B)
    dur = prof.of(every, _DURATION)
    timed = np.isfinite(dur)
    if timed.any():
        way_len = np.bincount(edges.way, weights=edges.length, minlength=num_ways)
        speed_f[timed] = speed_b[timed] = np.clip(way_len[timed] / dur[timed] * 3.6, 1, 300)
    return speed_f, speed_b


def _arc_selection(prof, edge_row):
    """(arc_edge, forward): the forward arc of every edge whose way allows it, then the
    backward ones (edge indices int32); ``edge_row``: each edge's profile row."""
    fwd = np.flatnonzero((prof.table[:, _FWD] > 0)[edge_row]).astype(np.int32)
    bwd = np.flatnonzero((prof.table[:, _BWD] > 0)[edge_row]).astype(np.int32)
    return np.concatenate([fwd, bwd]), np.r_[np.ones(fwd.size, bool), np.zeros(bwd.size, bool)]


def _arcs(prof, edges: _Edges, num_ways: int, arc_edge, is_fwd, edge_row) -> _Arcs:
    """The columns of the selected arcs (node and way ids int32, lanes int8: the
    graph's dtypes, 34 bytes per arc)."""
    speed_f, speed_b = _way_speeds(prof, edges, num_ways)
    table = prof.table
    tail, head, way, length, speed, lanes, row = arc_columns(
        arc_edge, is_fwd, edges.tail, edges.head, edges.way, edges.length, edge_row,
        speed_f, speed_b, table[:, _LANES_F].astype(np.int8), table[:, _LANES_B].astype(np.int8))
    return _Arcs(edge=arc_edge, forward=is_fwd, tail=tail, head=head, way=way, length=length,
                 speed=speed, lanes=lanes, row=row)


def _metrics(arcs: _Arcs) -> dict[str, np.ndarray]:
    """distance (m) and travel_time (ds), both at least 1; int32 where they fit (the
    graph's dtype), else int64, which RoadGraph.from_arcs refuses with its message."""
    distance, travel_time = arc_costs(arcs.length, arcs.speed)   # in parallel
    top = np.iinfo(np.int32).max
    return {k: w.astype(np.int32) if w.size == 0 or w.max() <= top else w
            for k, w in (("distance", distance), ("travel_time", travel_time))}


def _arc_attrs(prof, arcs: _Arcs) -> dict[str, np.ndarray]:
    """Per-arc attributes: per-profile values (a few hundred rows) gathered once."""
    table = prof.table
    length, speed, cls, oneway, toll, roundabout = arc_attr_columns(   # in parallel
        arcs.length, arcs.speed, arcs.row, table[:, _CLASS].astype(np.int8),
        (table[:, _FWD] > 0) != (table[:, _BWD] > 0), table[:, _TOLL] > 0,
        table[:, _ROUNDABOUT] > 0)
    return {"length_m": length, "road_class": cls, "speed_kmh": speed, "lanes": arcs.lanes,
            "oneway": oneway, "toll": toll, "roundabout": roundabout}
