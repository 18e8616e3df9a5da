"""OpenStreetMap reader: the drivable car network of an .osm.pbf / .osm[.gz|.bz2] file.

Two readers, one result. ``.pbf`` files go to engine.io.osm_pbf: blocks decoded by
Numba on a thread pool, Python only per block and per distinct tag combination
(about a tenth of the CPU time, a third of the peak memory; scripts/benchmarks/
osm_scale.py measures both readers). XML files (.osm, .osm.gz, .osm.bz2), and PBF
files using what that reader leaves out (lz4/zstd blocks, history files, unpacked
fields, coordinates finer than 1e-7 degrees), go through pyosmium: one pass reads the car ways and the turn-restriction relations
while libosmium keeps every node location in its own (C++) index, so Python code runs
per candidate way (pre-filtered in C++ by key) and per used node. Both hand the same
flat arrays to engine.io.osm_graph; tests/engine/test_osm_pbf.py checks that they
agree on every shared extract.

What is kept
  * ways with highway = motorway, trunk, primary, secondary, tertiary (and their
    ``*_link``, stored as their class), unclassified, road (stored as unclassified),
    residential, living_street, service (parking aisles and driveways included);
  * unless cars are denied: the most specific of motorcar > motor_vehicle > vehicle >
    access decides, and no, private, agricultural, forestry, emergency, psv and bus
    deny (destination, delivery, customers, permissive, yes ... allow);
  * not area=yes, not oneway=reversible (its direction changes with the time of day);
  * ferries: route=ferry ways that carry cars (motorcar or motor_vehicle = yes/
    designated/permissive, or a car highway tag), class "ferry", speed from the
    ``duration`` tag when given, else FERRY_KMH.

Graph nodes are the OSM nodes where ways meet (used twice or more), way ends, and one
interior node of every closed way segment that would otherwise be a self loop
(roundabouts); the nodes between them become interior geometry of the arcs. Nodes
missing from the file (clipped extracts) cut their way in two.

Turn restrictions: type=restriction relations with restriction[:motorcar|
:motor_vehicle] = no_* / only_*, from way(s), one via *node*, to way(s). Via-way
restrictions, restrictions that exempt cars (``except``), and those that cannot be
resolved unambiguously (ways not kept, not meeting at the via node, or a two-way
from/to way passing through the via node, so that the turn direction is unknowable
without geometry) are skipped and counted in ``OsmReport``.

Modules: this one reads the file; engine.io.osm_tags interprets way tags,
engine.io.osm_graph builds the graph, engine.io.osm_restrictions handles turn
restrictions, and engine.io.osm_report counts what each kept and skipped.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from engine.core.graph import RoadGraph
from engine.io.errors import LoadError
from engine.io.limits import check_allocation, check_regular_file
from engine.io.osm_graph import INVALID_COORD, LICENSE, WaysRead, build_graph
from engine.io.osm_report import OsmReport
from engine.io.pbf_file import Damaged, Unsupported
from engine.io.osm_restrictions import read_restriction
from engine.io.osm_tags import (FERRY_KMH, HIGHWAYS, NO_LIMIT_KMH, parse_duration, parse_lanes,
                                parse_maxspeed, way_profile)
from engine.core.progress import NEVER_CANCELLED, CancelToken, Cancelled, ProgressFn, no_progress

__all__ = ["load_osm", "load_osm_report", "OsmReport", "parse_maxspeed", "parse_lanes",
           "parse_duration", "LICENSE", "HIGHWAYS", "FERRY_KMH", "NO_LIMIT_KMH"]


# --------------------------------------------------------------------------- reading
def _read(path: Path, report: OsmReport, cancel: CancelToken):
    """One pass: kept ways (ids, node refs, profiles), restrictions, node locations."""
    import osmium
    from osmium.filter import EntityFilter, KeyFilter, TagFilter
    from osmium.osm import RELATION, WAY

    # Nodes pass through the location index (C++) and are then filtered out, so
    # Python only ever sees candidate ways and restriction relations.
    fp = (osmium.FileProcessor(os.fspath(path)).with_locations("flex_mem")
          .with_filter(EntityFilter(WAY | RELATION))
          .with_filter(KeyFilter("highway", "route").enable_for(WAY))
          .with_filter(TagFilter(("type", "restriction")).enable_for(RELATION)))
    way_ids, lengths, refs, way_prof, restrictions = [], [], [], [], []
    profiles = {}   # distinct profile -> its row (way_profile's nan is one object)
    for count, obj in enumerate(fp):
        if not count & 0xFFF:
            cancel.check()
        if obj.is_way():
            prof = way_profile(obj.tags)
            if prof is None:
                report.ways_dropped += 1
                continue
            nodes = [n.ref for n in obj.nodes]
            if len(nodes) < 2:
                continue
            way_ids.append(obj.id)
            lengths.append(len(nodes))
            refs.extend(nodes)
            way_prof.append(profiles.setdefault(prof, len(profiles)))
        else:
            r = read_restriction(obj, report)
            if r is not None:
                restrictions.append(r)
    cancel.check()

    refs = np.array(refs, dtype=np.int64)
    unique_ids, ref_u = np.unique(refs, return_inverse=True)
    xy = _node_locations(path, fp.node_location_storage, unique_ids)
    table = np.array(list(profiles), dtype=np.float64).reshape(-1, 10)
    return WaysRead(np.array(way_ids, dtype=np.int64), np.array(lengths, dtype=np.int64),
                    ref_u.astype(np.int64), unique_ids, xy, table,
                    np.array(way_prof, dtype=np.int32), restrictions)


def _node_locations(path: Path, storage, unique_ids: np.ndarray) -> np.ndarray:
    """[k, 2] int64 fixed-point (x, y) of each node id; INVALID_COORD when missing."""
    import osmium
    from osmium.osm import NODE

    # libosmium's index holds non-negative ids only; negative ones (new objects of
    # an editor's unsaved file) are rare, so one more pass fetches them in Python.
    negative = {}
    if unique_ids.size and unique_ids[0] < 0:
        wanted = set(unique_ids[unique_ids < 0].tolist())
        for n in osmium.FileProcessor(os.fspath(path), NODE):
            if n.id in wanted:
                negative[n.id] = n.location.x, n.location.y
    get = storage.get
    xs, ys = [], []
    for nid in unique_ids.tolist():
        try:
            if nid < 0:
                x, y = negative[nid]
            else:
                loc = get(nid)
                x, y = loc.x, loc.y
        except KeyError:   # node not in the file
            x = y = INVALID_COORD
        xs.append(x)
        ys.append(y)
    return np.stack([np.array(xs, np.int64), np.array(ys, np.int64)], axis=1)


# Peak bytes of building the graph per node reference of the kept ways, the readers'
# arrays included (measured: 124 at 4 M generated nodes, 11.7 M refs; 1.63 GB peak RSS).
BUILD_BYTES_PER_REF = 128

_LINE = re.compile(r"at line (\d+)")   # libosmium's XML errors name the line


def _osmium_errors() -> tuple:
    """What libosmium raises for bad input (e.g. InvalidLocationError on lat="nan")."""
    import osmium
    return (RuntimeError, OSError, ValueError, osmium.InvalidLocationError)


def _read_file(path: Path, report: OsmReport, progress, cancel, fast: bool):
    """The reader's flat arrays: engine.io.osm_pbf where it can (``fast``), else
    libosmium; bad input becomes a LoadError."""
    if fast:
        from engine.io.osm_pbf import read_pbf
        size = max(1, path.stat().st_size)
        try:
            return read_pbf(path, report, cancel,
                            on_bytes=lambda at: progress(0.55 * at / size, f"reading {path.name}"))
        except Damaged as e:
            raise LoadError(path, f"not a readable OpenStreetMap file: {e}") from None
        except Unsupported:
            report.__init__()   # libosmium reads it from the start
    try:
        return _read(path, report, cancel)
    except Cancelled:
        raise
    except _osmium_errors() as e:   # libosmium reports bad input so
        m = _LINE.search(str(e))
        raise LoadError(path, f"not a readable OpenStreetMap file: {e}",
                        line=int(m.group(1)) if m else None) from None


def load_osm(path, progress: ProgressFn = no_progress,
             cancel: CancelToken = NEVER_CANCELLED) -> RoadGraph:
    """The drivable car network of an OSM file; raises LoadError for bad input."""
    return load_osm_report(path, progress, cancel)[0]


def load_osm_report(path, progress: ProgressFn = no_progress,
                    cancel: CancelToken = NEVER_CANCELLED) -> tuple[RoadGraph, OsmReport]:
    """``load_osm`` plus the report of what was kept and skipped."""
    return _load_report(Path(path), progress, cancel, fast=Path(path).name.lower().endswith(".pbf"))


def _load_report(path: Path, progress: ProgressFn = no_progress,
                 cancel: CancelToken = NEVER_CANCELLED, fast: bool = True):
    """load_osm_report with the reader chosen: ``fast=False`` reads through libosmium
    (the tests compare the two readers)."""
    check_regular_file(path)   # libosmium would block on a FIFO, read a device forever
    report = OsmReport()
    progress(0.0, f"reading {path.name}")
    read = _read_file(path, report, progress, cancel, fast)
    if not read.way_ids.size:
        raise LoadError(path, "no drivable roads in this file (no way with a car "
                              "highway tag such as primary or residential)")
    report.ways_kept = read.way_ids.size
    check_allocation(BUILD_BYTES_PER_REF * read.ref_u.size,
                     f"building the road graph of {read.ref_u.size:,} node references", path)
    progress(0.6, f"building the road graph from {read.way_ids.size} ways")
    cancel.check()
    graph = build_graph(path, read, report, progress, cancel)
    progress(1.0, report.summary())
    return graph, report
