"""What a person reads about a route: length in km, travel time, arcs, cost."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.graph import RoadGraph, haversine_m
from engine.core.paths import Path
from engine.core.units import Unit, format_duration, format_length, unit_of


@dataclass(frozen=True)
class RouteSummary:
    metric: str
    cost: int                        # the path's cost in the routed metric
    num_arcs: int
    length_m: float | None           # None when the graph has no way to tell
    travel_time_s: float | None      # None when the graph has no time metric in known units
    travel_time_raw: int | None      # the time metric's own value when its unit is unknown
    unit: Unit = Unit("")            # the routed metric's unit

    def text(self, compute_ms: float | None = None, cost: bool = True) -> str:
        """"2.35 km · 2:24 min · 31 arcs · travel_time 2:50 min"; ``cost`` False leaves
        the path's cost out (its caller says it already)."""
        parts = []
        if self.length_m is not None:
            parts.append(format_length(self.length_m))
        if self.travel_time_s is not None:
            parts.append(format_duration(self.travel_time_s))
        elif self.travel_time_raw is not None:
            parts.append(f"travel_time {Unit('').format(self.travel_time_raw)}")
        parts.append(f"{self.num_arcs:,} arcs")
        if cost:       # said once when it is the length or the time above; else (a
            shown = self.unit.format(self.cost)      # decoder's, turn costs paid) beside them
            parts.append(f"minimizing {self.metric}" if shown in parts else f"{self.metric} {shown}")
        if compute_ms is not None:
            parts.append(f"computed in {compute_ms:.2f} ms")
        return " · ".join(parts)


def path_length_m(graph: RoadGraph, arcs: np.ndarray) -> float | None:
    if "length_m" in graph.arc_attrs:
        return float(graph.arc_attrs["length_m"][arcs].astype(np.float64).sum())
    unit = unit_of(graph.metric_units, "distance")
    if "distance" in graph.metrics and unit.kind == "length":
        return float(graph.metrics["distance"][arcs].astype(np.int64).sum()) * unit.size
    if graph.has_coordinates:
        t, h = graph.tail[arcs], graph.head[arcs]
        return float(haversine_m(graph.lon[t], graph.lat[t], graph.lon[h], graph.lat[h]).sum())
    return None


def route_summary(graph: RoadGraph, path: Path, cost_unit: Unit | None = None) -> RouteSummary:
    """``cost_unit``: the unit of the path's cost when its metric is not one of the graph's
    (a CRP decoder's); by default the graph's unit of ``path.metric``."""
    time_s = time_raw = None
    if "travel_time" in graph.metrics:
        raw = int(graph.metrics["travel_time"][path.arcs].astype(np.int64).sum())
        unit = unit_of(graph.metric_units, "travel_time")
        if unit.kind == "time":
            time_s = raw * unit.size
        else:
            time_raw = raw
    return RouteSummary(path.metric, path.distance, path.num_arcs,
                        path_length_m(graph, path.arcs), time_s, time_raw,
                        cost_unit or unit_of(graph.metric_units, path.metric))
