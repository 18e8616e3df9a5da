"""Units of a metric: what one raw weight is in metres or seconds, and how a person
reads a value (km and m, h:mm:ss), in one place for the CLI, the window and exports.

A graph records one unit symbol per metric (``RoadGraph.metric_units``): loaders that
know it say so (OSM and the generated graph: metres and deciseconds). DIMACS files do
not, so :func:`infer_units` works it out from the data:

* a length metric: the median ratio of arc weight to the straight line between the
  arc's end points is ~1 for metres, ~10 for decimetres (DIMACS NY: 9.99);
* a time metric: each candidate unit turns the arcs into speeds; the unit whose
  speeds look like roads (median 15-110 km/h, 95th percentile under 160 km/h) wins.
  DIMACS NY's travel times read as 10^-6 h: its arcs drive at 40, 60, 80 and 100 km/h.

A value whose unit cannot be established reads "N units", never a bare number.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

LENGTH_UNITS = {"mm": 0.001, "cm": 0.01, "dm": 0.1, "m": 1.0, "km": 1000.0}     # metres each
TIME_UNITS = {"ms": 0.001, "cs": 0.01, "ds": 0.1, "s": 1.0, "min": 60.0, "h": 3600.0,
              "µh": 0.0036}                                                      # seconds each
UNKNOWN = "units"
WORDS = {"mm": "millimetres", "cm": "centimetres", "dm": "decimetres", "m": "metres",
         "km": "kilometres", "ms": "milliseconds", "cs": "centiseconds", "ds": "deciseconds",
         "s": "seconds", "min": "minutes", "h": "hours", "µh": "microhours, 3.6 ms each"}

ROAD_SPEED_KMH = (15.0, 110.0)     # plausible median arc speed of a road network
MAX_P95_KMH = 160.0
DETOUR = (0.9, 1.6)                # arc length over the straight line, median
MIN_STRAIGHT_M = 20.0              # shorter arcs: coordinate rounding dominates


@dataclass(frozen=True)
class Unit:
    """One raw unit of a metric: ``symbol`` as recorded ("m", "ds", ""), its kind and
    its size in metres (length) or seconds (time)."""
    symbol: str

    @property
    def kind(self) -> str:
        """"length", "time" or "" (unknown)."""
        return "length" if self.symbol in LENGTH_UNITS else "time" if self.symbol in TIME_UNITS else ""

    @property
    def size(self) -> float:
        """Metres or seconds per raw unit; 1 when unknown."""
        return LENGTH_UNITS.get(self.symbol) or TIME_UNITS.get(self.symbol) or 1.0

    @property
    def name(self) -> str:
        """The symbol, or "units" when unknown (for JSON and labels)."""
        return self.symbol or UNKNOWN

    @property
    def words(self) -> str:
        """What one raw unit is, for people: "decimetres", "unit not known"."""
        return WORDS.get(self.symbol, self.symbol or "unit not known")

    def format(self, raw: float) -> str:
        """``raw`` in its display form: "850 m", "12.34 km", "14:05 min", "1:02:05 h",
        "1,809,843 units"."""
        if self.kind == "length":
            return format_length(raw * self.size)
        if self.kind == "time":
            return format_duration(raw * self.size)
        return f"{raw:,.0f} {UNKNOWN}" if float(raw).is_integer() else f"{raw:,.2f} {UNKNOWN}"

    def with_raw(self, raw: int) -> str:
        """The display form with the raw value beside it where that adds information:
        "6.55 km (65,470 dm)", "20:43 min (12,428 ds)"; "745 m", "45 s" (the same
        value twice would say nothing); "1,809,843 units" (no unit to convert to)."""
        shown, exact = self.format(raw), f"{raw:,} {self.symbol}"
        return shown if not self.kind or shown == exact else f"{shown} ({exact})"

    def axis(self) -> tuple[float, str]:
        """(factor, suffix) for charts and legends: km for lengths, min for times."""
        if self.kind == "length":
            return self.size / 1000, "km"
        if self.kind == "time":
            return self.size / 60, "min"
        return 1.0, UNKNOWN

    def to_raw(self, amount: float, written: str = "") -> float:
        """``amount`` of the unit ``written`` ("min", "km"; "" for seconds or metres,
        or raw units when this unit is unknown) in raw units of this metric."""
        if not written:
            return amount / self.size if self.kind else amount
        table = LENGTH_UNITS if self.kind == "length" else TIME_UNITS if self.kind == "time" else {}
        if written not in table:
            kind = self.kind or "unknown"
            raise ValueError(f"'{written}' is not a unit of this metric ({kind}; "
                             f"use {', '.join(table) or 'plain numbers'})")
        return amount * table[written] / self.size


def unit_of(metric_units: dict, metric: str) -> Unit:
    return Unit(metric_units.get(metric, ""))


def format_length(metres: float) -> str:
    """"850 m", "12.34 km", "123.5 km"; a non-zero length under a metre keeps two
    significant digits ("0.1 m", never "0 m")."""
    if 0 < abs(metres) < 0.995:
        return f"{metres:.2g} m"
    if abs(metres) < 999.5:
        return f"{metres:,.0f} m"
    km = abs(metres) / 1000        # the digits by the rounded size: 99.999 km is "100.0 km"
    digits = 2 if km < 99.995 else 1 if km < 999.95 else 0
    return f"{metres / 1000:,.{digits}f} km"


def format_duration(seconds: float) -> str:
    """h:mm:ss with the unit of the largest part: "45 s", "14:05 min", "1:02:05 h"; a
    non-zero time under a second keeps two significant digits ("0.1 s", "3.6 ms")."""
    sign = "−" if seconds < 0 else ""
    if 0 < abs(seconds) < 0.995:
        small = abs(seconds)
        return f"{sign}{small * 1000:.2g} ms" if small < 0.0995 else f"{sign}{small:.2g} s"
    total = int(round(abs(seconds)))
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{sign}{h}:{m:02d}:{s:02d} h"
    if m:
        return f"{sign}{m}:{s:02d} min"
    return f"{sign}{s} s"


_AMOUNT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zµ]*)\s*$")


def parse_amounts(text: str, unit: Unit) -> list[float]:
    """Comma-separated amounts ("300,600,900", "5min,10min", "1.5km") in raw units of
    ``unit``, increasing. A plain number is seconds or metres (raw units when the
    metric's unit is unknown)."""
    values = []
    for part in text.split(","):
        match = _AMOUNT.match(part)
        if not match:
            raise ValueError(f"{part.strip()!r} is not an amount (e.g. 300, 5min, 2km)")
        amount = float(match[1])
        if not math.isfinite(amount) or amount <= 0:
            raise ValueError(f"{part.strip()!r}: amounts must be positive")
        values.append(unit.to_raw(amount, match[2]))
    if values != sorted(set(values)):
        raise ValueError(f"{text!r}: amounts must increase")
    return values


# ------------------------------------------------------------------ inference
def infer_units(graph) -> dict[str, str]:
    """Units for the graph's metrics that it does not record, from the data (see the
    module docstring); metrics it cannot place are left out."""
    if not graph.has_coordinates or graph.num_arcs == 0:
        return {}
    from engine.core.graph import haversine_m
    straight = haversine_m(graph.lon[graph.tail], graph.lat[graph.tail],
                           graph.lon[graph.head], graph.lat[graph.head])
    units = dict(graph.metric_units)
    # lengths first: a time metric is best judged against the arcs' own lengths
    for name in sorted(graph.metrics, key=lambda m: m != "distance"):
        if name in units:
            continue
        weights = graph.metrics[name].astype(np.float64)
        symbol = "" if name == "travel_time" else _length_unit(weights, straight)
        if not symbol and name != "distance":
            symbol = _time_unit(weights, _arc_metres(graph, units, straight))
        if symbol:
            units[name] = symbol
    return {k: v for k, v in units.items() if k not in graph.metric_units}


def _length_unit(weights: np.ndarray, straight: np.ndarray) -> str:
    ok = (straight >= MIN_STRAIGHT_M) & (weights > 0)
    if ok.sum() < 10:
        return ""
    ratio = float(np.median(weights[ok] / straight[ok]))     # raw units per metre
    for symbol, size in LENGTH_UNITS.items():
        if DETOUR[0] <= ratio * size <= DETOUR[1]:
            return symbol
    return ""


def _arc_metres(graph, units: dict, straight: np.ndarray) -> np.ndarray:
    for name, symbol in units.items():
        if symbol in LENGTH_UNITS and name in graph.metrics:
            return graph.metrics[name].astype(np.float64) * LENGTH_UNITS[symbol]
    return straight


def _time_unit(weights: np.ndarray, metres: np.ndarray) -> str:
    ok = (metres >= MIN_STRAIGHT_M) & (weights > 0)
    if ok.sum() < 10:
        return ""
    per_unit = metres[ok] / weights[ok]                      # metres per raw unit
    best, best_gap = "", math.inf
    for symbol, size in TIME_UNITS.items():
        kmh = per_unit / size * 3.6
        median, p95 = np.percentile(kmh, [50, 95])
        if ROAD_SPEED_KMH[0] <= median <= ROAD_SPEED_KMH[1] and p95 <= MAX_P95_KMH:
            gap = abs(math.log(median / 45.0))
            if gap < best_gap:
                best, best_gap = symbol, gap
    return best
