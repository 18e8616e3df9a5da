"""OpenStreetMap tags of car ways: which ways cars may use, in which directions,
at what speed and with how many lanes (engine.io.osm reads the file).

``way_profile`` turns one way's tags into a tuple of numbers, so that everything
after reading is numpy on one float array; the ``parse_*`` helpers understand the
value syntaxes of the OSM wiki (maxspeed units and zones, lanes, ferry durations).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from engine.core.graph import ROAD_CLASS_INDEX

__all__ = ["way_profile", "parse_maxspeed", "parse_lanes", "parse_duration",
           "HIGHWAYS", "FERRY_KMH", "NO_LIMIT_KMH", "WAY_KEYS"]

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
# Every key way_profile reads (tests/engine/test_osm_pbf.py checks it): the fast PBF
# reader (engine.io.osm_pbf) looks up only these in each block's string table.
WAY_KEYS = ("highway", "route", "motorcar", "motor_vehicle", "vehicle", "access", "area",
            "junction", "oneway", "maxspeed", "maxspeed:forward", "maxspeed:backward",
            "lanes", "lanes:forward", "lanes:backward", "toll", "toll:motorcar", "duration")

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


def way_profile(tags):
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
