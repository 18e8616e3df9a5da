"""OpenStreetMap reader: the drivable car network of an .osm.pbf / .osm[.gz|.bz2] file.

One pass through pyosmium reads the car ways and the turn-restriction relations;
libosmium keeps every node location in its own (C++) index on the way, so no Python
code runs per node of the file. Only the tags of candidate ways (pre-filtered in C++
by key) and the locations of the nodes those ways use are touched from Python;
everything after that is numpy on flat arrays.

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
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.graph import ROAD_CLASS_INDEX, RoadGraph, haversine_m
from engine.io.errors import LoadError
from engine.progress import NEVER_CANCELLED, CancelToken, Cancelled, ProgressFn, no_progress

__all__ = ["load_osm", "load_osm_report", "OsmReport", "parse_maxspeed", "parse_lanes",
           "parse_duration", "LICENSE"]

LICENSE = "© OpenStreetMap contributors"

# highway tag -> (road class, default speed km/h when maxspeed is absent or unparseable).
# Defaults are typical legal limits; links are slower than their road.
HIGHWAYS = {
    "motorway": ("motorway", 120), "motorway_link": ("motorway", 60),
    "trunk": ("trunk", 90), "trunk_link": ("trunk", 50),
    "primary": ("primary", 70), "primary_link": ("primary", 50),
    "secondary": ("secondary", 60), "secondary_link": ("secondary", 40),
    "tertiary": ("tertiary", 50), "tertiary_link": ("tertiary", 30),
    "unclassified": ("unclassified", 40), "road": ("unclassified", 40),
    "residential": ("residential", 30), "living_street": ("living_street", 10),
    "service": ("service", 20),
}
_WAY_CLASS = {hw: (ROAD_CLASS_INDEX[c], kmh) for hw, (c, kmh) in HIGHWAYS.items()}
FERRY_KMH = 10.0            # includes boarding; used when a ferry has no duration tag
NO_LIMIT_KMH = 130.0        # maxspeed=none: the German advisory speed
_DENY = frozenset({"no", "private", "agricultural", "forestry", "emergency", "psv", "bus"})
_ALLOW_FERRY = frozenset({"yes", "designated", "permissive"})
_ACCESS_KEYS = ("motorcar", "motor_vehicle", "vehicle", "access")  # most specific first
_IMPLIED_ONEWAY = frozenset({"motorway", "motorway_link"})
_CAR_MODES = frozenset({"motorcar", "motor_vehicle", "vehicle"})
INVALID_COORD = 2**31 - 1   # libosmium's undefined coordinate (missing node)


@dataclass
class OsmReport:
    """What the reader kept and skipped (for the log and the GUI's info panel)."""
    ways_kept: int = 0
    ways_dropped: int = 0            # highway/route ways that are not for cars
    missing_nodes: int = 0           # node references with no location in the file
    # type=restriction relations: used + via_way + unresolved + not_for_cars
    restrictions: int = 0
    restrictions_used: int = 0       # resolved into banned turns
    restrictions_via_way: int = 0    # skipped: via is a way (not supported)
    restrictions_unresolved: int = 0  # skipped: ways/nodes missing, ambiguous, malformed
    restrictions_not_for_cars: int = 0  # skipped: except=motorcar; hgv/bus/conditional only
    banned_turns: int = 0

    def summary(self) -> str:
        return (f"{self.ways_kept} ways; {self.restrictions_used} of {self.restrictions} "
                f"turn restrictions used ({self.restrictions_via_way} via-way and "
                f"{self.restrictions_unresolved} unresolved skipped)")


# --------------------------------------------------------------------------- tags
_MPH = 1.609344
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*(km/h|kmh|kph|mph|knots)?")
_UNIT_KMH = {None: 1.0, "km/h": 1.0, "kmh": 1.0, "kph": 1.0, "mph": _MPH, "knots": 1.852}
_ZONE = re.compile(r"[a-z]{2}(?:-[a-z]+)?:(?:zone:?)?(\d+)")   # DE:zone30, DE:zone:30
# COUNTRY:type zones (OSM wiki "Default speed limits"): a generic table by type,
# overridden for countries whose limits differ from it.
_ZONE_TYPE_KMH = {"urban": 50, "rural": 90, "trunk": 100, "motorway": 120,
                  "living_street": 20, "walk": 7, "school": 30, "bicycle_road": 30}
_ZONE_KMH = {
    "at:rural": 100, "at:motorway": 130, "be:rural": 70, "be:motorway": 120,
    "ch:rural": 80, "ch:motorway": 120, "cz:rural": 90, "cz:motorway": 130,
    "de:rural": 100, "de:motorway": NO_LIMIT_KMH, "de:living_street": 7,
    "dk:rural": 80, "dk:motorway": 130, "es:rural": 90, "es:motorway": 120,
    "fr:rural": 80, "fr:motorway": 130, "it:rural": 90, "it:motorway": 130,
    "nl:rural": 80, "nl:motorway": 130, "no:rural": 80, "no:motorway": 110,
    "pl:rural": 90, "pl:motorway": 140, "pt:rural": 90, "pt:motorway": 120,
    "ru:urban": 60, "ru:rural": 90, "ru:motorway": 110, "ru:living_street": 20,
    "gb:nsl_single": 60 * _MPH, "gb:nsl_dual": 70 * _MPH, "gb:motorway": 70 * _MPH,
    "uk:nsl_single": 60 * _MPH, "uk:nsl_dual": 70 * _MPH, "uk:motorway": 70 * _MPH,
    "us:urban": 25 * _MPH, "us:rural": 55 * _MPH, "us:motorway": 65 * _MPH,
}


@lru_cache(maxsize=4096)
def parse_maxspeed(value: str | None) -> float | None:
    """km/h of an OSM maxspeed value, or None when absent or not understood.

    "50", "50 km/h", "30 mph", "10 knots", "none", "walk", "RU:urban", "DE:zone30";
    of "50;30" the first part counts.
    """
    if not value:
        return None
    v = value.split(";")[0].strip().lower()
    if v == "none":
        return NO_LIMIT_KMH
    if v == "walk":
        return 7.0
    m = _NUMBER_UNIT.fullmatch(v)
    if m:
        kmh = float(m.group(1)) * _UNIT_KMH[m.group(2)]
    elif (m := _ZONE.fullmatch(v)):
        kmh = float(m.group(1))
    elif v in _ZONE_KMH:
        kmh = float(_ZONE_KMH[v])
    elif ":" in v and v.split(":", 1)[1] in _ZONE_TYPE_KMH:
        kmh = float(_ZONE_TYPE_KMH[v.split(":", 1)[1]])
    else:
        return None   # signals, variable, typos: the class default applies
    return kmh if 1.0 <= kmh <= 300.0 else None


@lru_cache(maxsize=256)
def parse_lanes(value: str | None) -> int | None:
    """Lane count of an OSM lanes value ("2", "2;3" -> 2), None when not understood."""
    if not value:
        return None
    v = value.split(";")[0].strip()
    return min(int(v), 127) if v.isdigit() and int(v) > 0 else None


def parse_duration(value: str | None) -> float | None:
    """Seconds of a ferry duration ("HH:MM", "HH:MM:SS", or minutes), None if not understood."""
    if not value:
        return None
    try:
        parts = [float(p) for p in value.strip().split(":")]
    except ValueError:
        return None
    if len(parts) == 1:
        s = parts[0] * 60
    elif len(parts) in (2, 3):
        s = parts[0] * 3600 + parts[1] * 60 + (parts[2] if len(parts) == 3 else 0)
    else:
        return None
    return s if s > 0 and math.isfinite(s) else None


def _denied(tags) -> bool:
    for key in _ACCESS_KEYS:
        v = tags.get(key)
        if v is not None:
            return v in _DENY
    return False


def _way_profile(tags):
    """Per-way attributes as a tuple of numbers, or None when cars cannot use the way.

    (class, forward, backward, speed_fwd, speed_bwd, lanes_fwd, lanes_bwd, toll,
    roundabout, ferry duration s or nan)
    """
    hw = tags.get("highway")
    duration = math.nan
    if tags.get("route") == "ferry":
        if not (hw in _WAY_CLASS or tags.get("motorcar") in _ALLOW_FERRY
                or tags.get("motor_vehicle") in _ALLOW_FERRY):
            return None
        cls, default_kmh = ROAD_CLASS_INDEX["ferry"], FERRY_KMH
        duration = parse_duration(tags.get("duration")) or math.nan
    elif hw in _WAY_CLASS:
        cls, default_kmh = _WAY_CLASS[hw]
    else:
        return None
    if tags.get("area") == "yes" or _denied(tags):
        return None

    junction = tags.get("junction")
    roundabout = junction == "roundabout" or junction == "circular"
    oneway = tags.get("oneway")
    if oneway in ("yes", "true", "1"):
        fwd, bwd = True, False
    elif oneway in ("-1", "reverse"):
        fwd, bwd = False, True
    elif oneway in ("no", "false", "0", "alternating"):
        fwd, bwd = True, True
    elif oneway == "reversible":
        return None
    else:
        fwd, bwd = True, not (roundabout or hw in _IMPLIED_ONEWAY)

    speed = parse_maxspeed(tags.get("maxspeed")) or default_kmh
    speed_f = parse_maxspeed(tags.get("maxspeed:forward")) or speed
    speed_b = parse_maxspeed(tags.get("maxspeed:backward")) or speed
    # lanes counts both directions: a two-way road gets half of them each way
    total = parse_lanes(tags.get("lanes")) or 0
    per_dir = total if fwd != bwd else (total + 1) // 2
    lanes_f = parse_lanes(tags.get("lanes:forward")) or per_dir
    lanes_b = parse_lanes(tags.get("lanes:backward")) or per_dir
    toll = tags.get("toll") == "yes" or tags.get("toll:motorcar") == "yes"
    return (cls, fwd, bwd, speed_f, speed_b, lanes_f, lanes_b, toll, roundabout, duration)


def _restriction(rel, report: OsmReport):
    """(only?, from way ids, via node id, to way ids) of a car restriction, else None."""
    tags = rel.tags
    value = (tags.get("restriction:motorcar") or tags.get("restriction:motor_vehicle")
             or tags.get("restriction"))
    report.restrictions += 1
    if value is None:
        if any(t.k.startswith("restriction:") for t in tags):  # hgv, bus, conditional
            report.restrictions_not_for_cars += 1
        else:
            report.restrictions_unresolved += 1
        return None
    if _CAR_MODES & {e.strip() for e in (tags.get("except") or "").split(";")}:
        report.restrictions_not_for_cars += 1
        return None
    if value.startswith("no_"):
        only = False
    elif value.startswith("only_"):
        only = True
    else:
        report.restrictions_unresolved += 1
        return None
    frm, via, to = [], [], []
    for m in rel.members:
        if m.role == "from" and m.type == "w":
            frm.append(m.ref)
        elif m.role == "to" and m.type == "w":
            to.append(m.ref)
        elif m.role == "via":
            via.append((m.type, m.ref))
    if any(t != "n" for t, _ in via):
        report.restrictions_via_way += 1
        return None
    if len(via) != 1 or not frm or not to:
        report.restrictions_unresolved += 1
        return None
    return only, frm, via[0][1], to


# --------------------------------------------------------------------------- reading
def _read(path: Path, report: OsmReport, cancel: CancelToken):
    """One pass: kept ways (ids, node refs, profiles), restrictions, node locations."""
    import osmium
    from osmium.filter import EntityFilter, KeyFilter, TagFilter
    from osmium.osm import NODE, RELATION, WAY

    # Nodes pass through the location index (C++) and are then filtered out, so
    # Python only ever sees candidate ways and restriction relations.
    fp = (osmium.FileProcessor(os.fspath(path)).with_locations("flex_mem")
          .with_filter(EntityFilter(WAY | RELATION))
          .with_filter(KeyFilter("highway", "route").enable_for(WAY))
          .with_filter(TagFilter(("type", "restriction")).enable_for(RELATION)))
    way_ids, lengths, refs, profiles, restrictions = [], [], [], [], []
    for count, obj in enumerate(fp):
        if not count & 0xFFF:
            cancel.check()
        if obj.is_way():
            prof = _way_profile(obj.tags)
            if prof is None:
                report.ways_dropped += 1
                continue
            nodes = [n.ref for n in obj.nodes]
            if len(nodes) < 2:
                continue
            way_ids.append(obj.id)
            lengths.append(len(nodes))
            refs.extend(nodes)
            profiles.append(prof)
        else:
            r = _restriction(obj, report)
            if r is not None:
                restrictions.append(r)
    cancel.check()

    refs = np.array(refs, dtype=np.int64)
    unique_ids, ref_u = np.unique(refs, return_inverse=True)
    # libosmium's index holds non-negative ids only; negative ones (new objects of
    # an editor's unsaved file) are rare, so one more pass fetches them in Python.
    negative = {}
    if unique_ids.size and unique_ids[0] < 0:
        wanted = set(unique_ids[unique_ids < 0].tolist())
        for n in osmium.FileProcessor(os.fspath(path), NODE):
            if n.id in wanted:
                negative[n.id] = n.location.x, n.location.y
    get = fp.node_location_storage.get
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
    xy = np.stack([np.array(xs, np.int64), np.array(ys, np.int64)], axis=1)
    return (np.array(way_ids, dtype=np.int64), np.array(lengths, dtype=np.int64),
            ref_u.astype(np.int64), unique_ids, xy, profiles, restrictions)


_LINE = re.compile(r"at line (\d+)")   # libosmium's XML errors name the line


def load_osm(path, progress: ProgressFn = no_progress,
             cancel: CancelToken = NEVER_CANCELLED) -> RoadGraph:
    """The drivable car network of an OSM file; raises LoadError for bad input."""
    return load_osm_report(path, progress, cancel)[0]


def load_osm_report(path, progress: ProgressFn = no_progress,
                    cancel: CancelToken = NEVER_CANCELLED) -> tuple[RoadGraph, OsmReport]:
    """``load_osm`` plus the report of what was kept and skipped."""
    path = Path(path)
    report = OsmReport()
    progress(0.0, f"reading {path.name}")
    try:
        way_ids, lengths, ref_u, unique_ids, xy, profiles, restrictions = \
            _read(path, report, cancel)
    except Cancelled:
        raise
    except (RuntimeError, OSError, ValueError) as e:   # libosmium reports bad input so
        m = _LINE.search(str(e))
        raise LoadError(path, f"not a readable OpenStreetMap file: {e}",
                        line=int(m.group(1)) if m else None) from None
    if not profiles:
        raise LoadError(path, "no drivable roads in this file (no way with a car "
                              "highway tag such as primary or residential)")
    report.ways_kept = len(profiles)
    progress(0.6, f"building the road graph from {len(profiles)} ways")
    cancel.check()
    graph = _build(path, way_ids, lengths, ref_u, unique_ids, xy, profiles,
                   restrictions, report, progress, cancel)
    progress(1.0, report.summary())
    return graph, report


# --------------------------------------------------------------------------- building
def _build(path, way_ids, lengths, ref_u, unique_ids, xy, profiles, restrictions,
           report, progress, cancel):
    prof = np.array(profiles, dtype=np.float64)
    way_of = np.repeat(np.arange(way_ids.size), lengths)
    way_start = np.zeros(ref_u.size, dtype=bool)
    way_start[np.cumsum(lengths)[:-1]] = True
    way_start[0] = True

    # A node missing from the file cuts its way: drop it and start a new piece after it.
    missing = (xy[ref_u] == INVALID_COORD).any(axis=1)
    report.missing_nodes = int(missing.sum())
    piece_start = way_start | np.r_[False, missing[:-1]]
    piece = np.cumsum(piece_start)[~missing]
    ref_u, way_of = ref_u[~missing], way_of[~missing]
    # Repeated consecutive refs (mapping errors) would make zero-length segments.
    first = np.r_[True, piece[1:] != piece[:-1]]
    keep = first | np.r_[True, ref_u[1:] != ref_u[:-1]]
    ref_u, way_of, piece = ref_u[keep], way_of[keep], piece[keep]
    # Pieces of one node carry no segment.
    keep = np.bincount(piece)[piece] >= 2
    ref_u, way_of, piece = ref_u[keep], way_of[keep], piece[keep]
    if ref_u.size == 0:
        raise LoadError(path, "no drivable roads in this file (the road ways have no "
                              "node locations)")
    first = np.r_[True, piece[1:] != piece[:-1]]
    last = np.r_[piece[1:] != piece[:-1], True]

    # Graph nodes: way ends and nodes used twice or more (by any ways, or one way twice).
    uses = np.bincount(ref_u, minlength=unique_ids.size)
    split = first | last | (uses[ref_u] >= 2)
    a, b = _segments(split, piece)
    # A closed segment (roundabout) would be a self loop: split it at its middle node,
    # which is used once only, so the two halves have distinct ends.
    loop = ref_u[a] == ref_u[b]
    if loop.any():
        split[(a[loop] + b[loop]) // 2] = True
        a, b = _segments(split, piece)
    cancel.check()

    node_u = np.unique(ref_u[split])
    node_of_u = np.full(unique_ids.size, -1, dtype=np.int64)
    node_of_u[node_u] = np.arange(node_u.size)
    lon_u = xy[:, 0] / 1e7   # libosmium fixed point; division rounds like osmium's lon
    lat_u = xy[:, 1] / 1e7
    lon_p, lat_p = lon_u[ref_u], lat_u[ref_u]

    # Edge lengths: along the polyline, via the running sum of segment lengths.
    seg = haversine_m(lon_p[:-1], lat_p[:-1], lon_p[1:], lat_p[1:])
    cum = np.r_[0.0, np.cumsum(seg)]
    edge_len = cum[b] - cum[a]
    edge_way = way_of[a]
    edge_tail, edge_head = node_of_u[ref_u[a]], node_of_u[ref_u[b]]

    speed_f, speed_b = prof[:, 3].copy(), prof[:, 4].copy()
    dur = prof[:, 9]
    timed = np.isfinite(dur)
    if timed.any():   # ferries with a duration: speed = whole route length / duration
        way_len = np.bincount(edge_way, weights=edge_len, minlength=way_ids.size)
        speed_f[timed] = speed_b[timed] = np.clip(way_len[timed] / dur[timed] * 3.6, 1, 300)

    # Arcs: the forward arc of every edge whose way allows it, then the backward ones.
    fwd = np.flatnonzero(prof[edge_way, 1] > 0)
    bwd = np.flatnonzero(prof[edge_way, 2] > 0)
    arc_edge = np.r_[fwd, bwd]
    is_fwd = np.r_[np.ones(fwd.size, bool), np.zeros(bwd.size, bool)]
    tail = np.where(is_fwd, edge_tail[arc_edge], edge_head[arc_edge])
    head = np.where(is_fwd, edge_head[arc_edge], edge_tail[arc_edge])
    arc_way = edge_way[arc_edge]
    length = edge_len[arc_edge]
    speed = np.where(is_fwd, speed_f[arc_way], speed_b[arc_way])
    lanes = np.where(is_fwd, prof[arc_way, 5], prof[arc_way, 6])

    # Interior points, tail to head: a+1..b-1 forwards, b-1..a+1 backwards.
    count = (b - a - 1)[arc_edge]
    g_first = np.zeros(arc_edge.size + 1, dtype=np.int64)
    np.cumsum(count, out=g_first[1:])
    start = np.where(is_fwd, a[arc_edge] + 1, b[arc_edge] - 1)
    step = np.where(is_fwd, 1, -1)
    offset = np.arange(g_first[-1]) - np.repeat(g_first[:-1], count)
    pts = np.repeat(start, count) + np.repeat(step, count) * offset
    geometry = np.stack([lon_p[pts], lat_p[pts]], axis=1)

    progress(0.85, f"resolving {len(restrictions)} turn restrictions")
    cancel.check()
    banned = _resolve_restrictions(restrictions, way_ids, unique_ids, node_of_u,
                                   tail, head, arc_way, arc_edge, report)

    distance = np.maximum(1, np.rint(length)).astype(np.int64)
    travel_time = np.maximum(1, np.rint(length / (speed / 3.6) * 10)).astype(np.int64)
    oneway = (prof[:, 1] > 0) != (prof[:, 2] > 0)
    graph = RoadGraph.from_arcs(
        node_u.size, tail, head,
        {"distance": distance, "travel_time": travel_time},
        unique_ids[node_u], lon=lon_u[node_u], lat=lat_u[node_u],
        arc_attrs={
            "length_m": length.astype(np.float32),
            "road_class": prof[arc_way, 0].astype(np.int8),
            "speed_kmh": speed.astype(np.float32),
            "lanes": lanes.astype(np.int8),
            "oneway": oneway[arc_way],
            "toll": prof[arc_way, 7] > 0,
            "roundabout": prof[arc_way, 8] > 0,
        },
        geometry_first=g_first, geometry_lonlat=geometry, banned_turns=banned,
        metric_units={"distance": "m", "travel_time": "ds"},
        source=path.name, data_license=LICENSE)
    report.banned_turns = len(graph.turn_restrictions)
    return graph


def _segments(split: np.ndarray, piece: np.ndarray):
    """(start, end) positions of consecutive graph nodes within one way piece."""
    s = np.flatnonzero(split)
    same = piece[s[:-1]] == piece[s[1:]]
    return s[:-1][same], s[1:][same]


def _resolve_restrictions(restrictions, way_ids, unique_ids, node_of_u, tail, head,
                          arc_way, arc_edge, report):
    """Banned (from_arc, to_arc) pairs, as indices into the arc list."""
    if not restrictions:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    way_index = dict(zip(way_ids.tolist(), range(way_ids.size)))
    via_ids = np.array([r[2] for r in restrictions], dtype=np.int64)
    pos = np.minimum(np.searchsorted(unique_ids, via_ids), unique_ids.size - 1)
    via_node = np.where(unique_ids[pos] == via_ids, node_of_u[pos], -1)

    # Arcs entering / leaving via nodes, keyed by (way, node); all arcs leaving them.
    vias = np.unique(via_node[via_node >= 0])
    entering, leaving, out_of = {}, {}, {}
    for arc in np.flatnonzero(np.isin(head, vias)).tolist():
        entering.setdefault((int(arc_way[arc]), int(head[arc])), []).append(arc)
    for arc in np.flatnonzero(np.isin(tail, vias)).tolist():
        leaving.setdefault((int(arc_way[arc]), int(tail[arc])), []).append(arc)
        out_of.setdefault(int(tail[arc]), []).append(arc)

    bans = []
    for (only, frm, _, to), v in zip(restrictions, via_node.tolist()):
        pairs = _restriction_pairs(only, frm, v, to, way_index, entering, leaving,
                                   out_of, arc_edge)
        if pairs is None:
            report.restrictions_unresolved += 1
        else:
            report.restrictions_used += 1
            bans.extend(pairs)
    bans = np.array(bans, dtype=np.int64).reshape(-1, 2)
    return bans[:, 0], bans[:, 1]


def _restriction_pairs(only, frm, v, to, way_index, entering, leaving, out_of, arc_edge):
    """Banned pairs of one restriction, or None when it cannot be resolved."""
    if v < 0 or any(w not in way_index for w in frm + to):
        return None

    def arcs_at(table, way):   # arcs of ``way`` at v in ``table``; None if it misses v
        key = (way_index[way], v)
        return table.get(key, []) if key in entering or key in leaving else None

    pairs = []
    for fw in frm:
        from_arcs = arcs_at(entering, fw)
        # two arcs entering: the way passes through v and the turn direction is unknowable
        if from_arcs is None or len(from_arcs) > 1:
            return None
        to_arcs = []
        for tw in to:
            cand = arcs_at(leaving, tw)
            if cand is None:
                return None
            if tw == fw:       # u-turn onto the same way: the reverse of the from arc
                cand = [t for t in cand if from_arcs and arc_edge[t] == arc_edge[from_arcs[0]]]
            if len(cand) > 1:
                return None
            to_arcs += cand
        # a from way that only leaves v (one-way) has no turn to ban
        for f in from_arcs:
            if only:
                if not to_arcs:    # the one allowed turn cannot be driven: bad data
                    return None
                pairs.extend((f, t) for t in out_of.get(v, []) if t not in to_arcs)
            else:
                pairs.extend((f, t) for t in to_arcs)
    return pairs
