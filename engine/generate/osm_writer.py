"""The generated road network as an OpenStreetMap file (``.osm.pbf``), written through
pyosmium's writer, which engine.io.osm reads back to the same network.

What is written
  * every node as an OSM node with id ``index + 1`` (so the reader's node order is the
    graph's), then the bend points of the arcs as nodes of their own (ids above n);
  * one way per street: a one-way arc is a way tagged ``oneway=yes``; the two arcs of a
    two-way street are one way from its lower to its higher node (``oneway=no`` on
    motorways, which OSM otherwise takes as one-way); nodes: tail, the bend point if
    any, head. Tags: ``highway`` (the road class), ``maxspeed`` (km/h), ``lanes`` (both
    directions: twice the per-direction lanes of a two-way street), ``toll=yes``, and a
    ``name`` ("Road 17": the way's id);
  * one ``type=restriction`` relation per banned turn: ``restriction=no_left_turn``
    (the generator bans left turns), from the way of the arc in, via its head node, to
    the way of the arc out.
Every object carries version 1 and a fixed timestamp, changeset and user, as the
extracts people download do (so the file is as large per object as a real one, and
the same run gives the same bytes). Every way has two graph nodes at its ends, so the reader splits nothing and joins
nothing: the same nodes, arcs (lengths to the rounding of 1e-7 degrees) and banned turns.

How: the text of a block of objects is made with NumPy in OSM's OPL format
(engine.io.text_rows) and handed to libosmium (``osmium.io.FileBuffer``), which
parses it and writes PBF blocks in C++ while the next blocks are formatted in worker
threads; no Python runs per object, memory stays a few blocks, and the file is saved atomically (engine.io.atomic). Needs the ``osmium``
package (pyosmium), like the OSM reader.
"""
from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import numpy as np

from engine.core.graph import ROAD_CLASSES, RoadGraph
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.io.atomic import atomic_write
from engine.io.text_rows import Int, Table, fixed, in_order, rows

BLOCK_ROWS = 1 << 16           # objects per block: ~10 MB of OPL, ~40 MB while it is made
META = b" v1 dV c1 t2020-01-01T00:00:00Z i1 uRouteLab"   # OPL: version ... user
NEEDED_ATTRS = ("road_class", "speed_kmh", "lanes", "oneway")


def check_writable_graph(graph: RoadGraph) -> None:
    """ValueError unless ``graph`` is a network this writer can write: coordinates, the
    road attributes, at most one bend point per arc, two-way streets as arc pairs."""
    missing = [a for a in NEEDED_ATTRS if a not in graph.arc_attrs]
    if graph.lon is None or missing:
        raise ValueError("an OSM file needs node coordinates and the arc attributes "
                         f"{', '.join(NEEDED_ATTRS)} (the generated network has them)")
    if graph.geometry_first is not None and np.diff(graph.geometry_first).max(initial=0) > 1:
        raise ValueError("this writer writes at most one bend point per arc")


def write_osm_pbf(graph: RoadGraph, path, *, progress: ProgressFn = no_progress,
                  cancel: CancelToken = NEVER_CANCELLED, inputs=()) -> Path:
    """Write ``graph`` (the generated network, or one like it) to ``path`` (.osm.pbf)."""
    import osmium
    check_writable_graph(graph)
    streets = _Streets(graph)
    header = osmium.io.Header()
    header.set("generator", "RouteLab generate")
    with atomic_write(path, inputs=inputs) as f:
        # libosmium opens the file by name: the temporary file's descriptor, by /dev/fd
        target = osmium.io.File(f"/dev/fd/{f.fileno()}", "pbf")
        writer = osmium.SimpleWriter(target, header=header, overwrite=True)
        try:
            made = in_order(lambda job: (job[0], job[1]()), _blocks(graph, streets))
            for fraction, text in made:
                cancel.check()
                progress(fraction, f"writing {Path(path).name}")
                osmium.apply(osmium.io.FileBuffer(text, "opl"), writer)
        finally:
            writer.close()
        os.fsync(f.fileno())
    return Path(path)


class _Streets:
    """One way per street: ``arc`` (a one-way arc, or the lower-to-higher arc of a
    two-way street), and ``way_of_arc`` (each arc's way id)."""

    def __init__(self, graph: RoadGraph) -> None:
        tail, head = graph.tail, graph.head
        oneway = graph.arc_attrs["oneway"].astype(bool)
        two = np.flatnonzero(~oneway)
        lo = np.minimum(tail[two], head[two]).astype(np.int64)
        key = lo * graph.num_nodes + np.maximum(tail[two], head[two])
        order = two[np.argsort(key, kind="stable")]
        first, second = order[0::2], order[1::2]
        if order.size % 2 or np.any(tail[first] != head[second]) or \
                np.any(head[first] != tail[second]):
            raise ValueError("this writer needs every two-way street as one pair of arcs "
                             "(the generated network's are)")
        up = tail[first] < head[first]
        rep = np.where(up, first, second)
        self.arc = np.sort(np.concatenate([np.flatnonzero(oneway), rep]))
        self.way_of_arc = np.empty(graph.num_arcs, dtype=np.int64)
        self.way_of_arc[self.arc] = np.arange(1, self.arc.size + 1)
        other = np.where(up, second, first)
        self.way_of_arc[other] = self.way_of_arc[rep]


def _blocks(graph: RoadGraph, streets: _Streets):
    """(fraction done, a function making the OPL text) of every block: nodes, bend
    nodes, ways, relations (engine.io.text_rows.in_order makes them in threads)."""
    n = graph.num_nodes
    bends = _bend_points(graph, streets.arc)
    total = n + bends.size + streets.arc.size + 1
    for v0 in range(0, n, BLOCK_ROWS):
        v = np.arange(v0, min(n, v0 + BLOCK_ROWS))
        yield v0 / total, partial(_nodes, v + 1, graph.lon[v], graph.lat[v])
    for b0 in range(0, bends.size, BLOCK_ROWS):
        b = bends[b0:b0 + BLOCK_ROWS]
        lonlat = graph.geometry_lonlat[b]
        yield (n + b0) / total, partial(_nodes, n + 1 + b, lonlat[:, 0], lonlat[:, 1])
    done = n + bends.size
    for s0 in range(0, streets.arc.size, BLOCK_ROWS):
        yield (done + s0) / total, partial(_ways, graph, streets.arc[s0:s0 + BLOCK_ROWS], s0 + 1)
    if graph.turn_restrictions is not None and len(graph.turn_restrictions):
        yield (total - 1) / total, partial(_restrictions, graph, streets.way_of_arc)


def _bend_points(graph: RoadGraph, arcs: np.ndarray) -> np.ndarray:
    """Indices into geometry_lonlat of the bend points of ``arcs``, ascending."""
    if graph.geometry_first is None:
        return np.zeros(0, dtype=np.int64)
    first = graph.geometry_first
    return first[arcs][first[arcs + 1] > first[arcs]]


def _nodes(ids, lon, lat) -> bytes:
    """``n<id> ... x<lon> y<lat>`` lines, degrees to 7 decimals (OSM's precision)."""
    return rows(b"n", Int(ids), META, b" T x", fixed(np.rint(lon * 1e7).astype(np.int64), 7),
                b" y", fixed(np.rint(lat * 1e7).astype(np.int64), 7), b"\n")


def _ways(graph: RoadGraph, arcs: np.ndarray, first_id: int) -> bytes:
    """``w<id> ... T<tags> Nn<tail>[,n<bend>],n<head>`` lines of the streets of ``arcs``."""
    n = graph.num_nodes
    tail = np.searchsorted(graph.first_out, arcs, side="right") - 1
    codes, tags = _way_tags(graph, arcs)
    if graph.geometry_first is None:
        has_bend, bend = np.zeros(arcs.size, bool), np.zeros(arcs.size, np.int64)
    else:
        first = graph.geometry_first
        has_bend, bend = first[arcs + 1] > first[arcs], first[arcs]
    ids = np.arange(first_id, first_id + arcs.size)
    return rows(b"w", Int(ids), META, b" T", Table(codes, tags), b",name=Road%20%", Int(ids),
                b" Nn", Int(tail + 1), Table(has_bend.astype(np.int8), (b"", b",n")),
                Int(n + 1 + bend, present=has_bend), b",n",
                Int(graph.head[arcs].astype(np.int64) + 1), b"\n")


def _way_tags(graph: RoadGraph, arcs: np.ndarray) -> tuple[np.ndarray, tuple[bytes, ...]]:
    """(code per street, tag text per code): the few distinct tag sets of a block."""
    a = graph.arc_attrs
    cls = a["road_class"][arcs].astype(np.int64)
    speed = np.clip(np.rint(a["speed_kmh"][arcs]), 1, 2**15 - 1).astype(np.int64)
    oneway = a["oneway"][arcs].astype(bool)
    lanes = np.clip(a["lanes"][arcs].astype(np.int64), 0, 127) * np.where(oneway, 1, 2)
    toll = a["toll"][arcs].astype(np.int64) if "toll" in a else np.zeros(arcs.size, np.int64)
    # one integer key per tag set (np.unique over rows sorts far slower than over ints)
    key = (((cls * 2**15 + speed) * 2**8 + lanes) * 2 + oneway) * 2 + toll
    unique, codes = np.unique(key, return_inverse=True)
    sets = [(k >> 25, k >> 10 & 2**15 - 1, k >> 2 & 255, k >> 1 & 1, k & 1)
            for k in unique.tolist()]
    return codes.reshape(-1), tuple(_tag_text(*tags) for tags in sets)


def _tag_text(cls: int, speed: int, lanes: int, oneway: int, toll: int) -> bytes:
    highway = ROAD_CLASSES[cls]
    if highway == "ferry":
        raise ValueError("this writer does not write ferries")
    tags = [f"highway={highway}", f"maxspeed={speed}", f"lanes={lanes}"]
    if oneway:
        tags.append("oneway=yes")
    elif highway == "motorway":         # OSM takes a motorway as one-way unless told
        tags.append("oneway=no")
    if toll:
        tags.append("toll=yes")
    return ",".join(tags).encode()


def _restrictions(graph: RoadGraph, way_of_arc: np.ndarray) -> bytes:
    """One ``no_left_turn`` relation per banned turn: from way, via node, to way."""
    tr = graph.turn_restrictions
    via = graph.head[tr.from_arc].astype(np.int64) + 1
    return rows(b"r", Int(np.arange(1, len(tr) + 1)), META,
                b" Ttype=restriction,restriction=no_left_turn Mw", Int(way_of_arc[tr.from_arc]),
                b"@from,n", Int(via), b"@via,w", Int(way_of_arc[tr.to_arc]), b"@to\n")
