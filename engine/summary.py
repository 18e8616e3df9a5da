"""What a person reads about a route: length in km, travel time, arcs, cost."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.graph import RoadGraph, haversine_m
from engine.paths import Path

# Seconds per unit of a time metric, by the unit name a loader records.
TIME_UNIT_SECONDS = {"s": 1.0, "ds": 0.1, "ms": 0.001}


@dataclass(frozen=True)
class RouteSummary:
    metric: str
    cost: int                        # the path's cost in the routed metric
    num_arcs: int
    length_m: float | None           # None when the graph has no way to tell
    travel_time_s: float | None      # None when the graph has no time metric in known units
    travel_time_raw: int | None      # the time metric's own value when its unit is unknown

    def text(self, compute_ms: float | None = None) -> str:
        parts = []
        if self.length_m is not None:
            parts.append(f"{self.length_m / 1000:.2f} km")
        if self.travel_time_s is not None:
            parts.append(format_duration(self.travel_time_s))
        elif self.travel_time_raw is not None:
            parts.append(f"travel_time {self.travel_time_raw:,}")
        parts.append(f"{self.num_arcs:,} arcs")
        parts.append(f"{self.metric} {self.cost:,}")
        if compute_ms is not None:
            parts.append(f"computed in {compute_ms:.1f} ms")
        return " · ".join(parts)


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min {s:02d} s"


def path_length_m(graph: RoadGraph, arcs: np.ndarray) -> float | None:
    if "length_m" in graph.arc_attrs:
        return float(graph.arc_attrs["length_m"][arcs].astype(np.float64).sum())
    if graph.metric_units.get("distance") == "m":
        return float(graph.metrics["distance"][arcs].astype(np.int64).sum())
    if graph.has_coordinates:
        t, h = graph.tail[arcs], graph.head[arcs]
        return float(haversine_m(graph.lon[t], graph.lat[t], graph.lon[h], graph.lat[h]).sum())
    return None


def route_summary(graph: RoadGraph, path: Path) -> RouteSummary:
    time_s = time_raw = None
    if "travel_time" in graph.metrics:
        raw = int(graph.metrics["travel_time"][path.arcs].astype(np.int64).sum())
        unit = graph.metric_units.get("travel_time")
        if unit in TIME_UNIT_SECONDS:
            time_s = raw * TIME_UNIT_SECONDS[unit]
        else:
            time_raw = raw
    return RouteSummary(path.metric, path.distance, path.num_arcs,
                        path_length_m(graph, path.arcs), time_s, time_raw)
