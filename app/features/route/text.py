"""What the route summary says about turns and about a route's change after a metric
edit (no Qt: plain text for the side panel and the tests)."""
from __future__ import annotations

from engine.core.summary import route_summary
from engine.core.units import Unit, format_duration, format_length


def turn_cost_text(cost: int, unit: str) -> str:
    return Unit(unit).format(cost) if Unit(unit).kind else f"{cost:,} {unit or 'units'}"


def turns_text(turns: dict) -> str:
    """``turns``: engine.crp.query.router.path_turns. E.g. "turns: 3 left, 1 right · turn
    costs paid 0:25"."""
    taken = [f"{n} {name.replace('_', ' ')}" for name, n in turns["by_type"].items()
             if n and name != "straight"]
    return (f"turns: {', '.join(taken) or 'none'} · turn costs paid "
            f"{turn_cost_text(turns['cost'], turns['unit'])}")


def change_text(graph, before, after) -> str:
    """How ``after`` differs from ``before`` (ShownRoutes between the same endpoints):
    time and length by the graph's own columns, turns by type, turn costs paid."""
    if before.path.arcs.size == after.path.arcs.size and \
            (before.path.arcs == after.path.arcs).all():
        return "the same path as with the last metric"
    a, b = route_summary(graph, before.path), route_summary(graph, after.path)
    parts = []
    if a.travel_time_s is not None and b.travel_time_s is not None:
        delta = b.travel_time_s - a.travel_time_s
        sign = "+" if delta >= 0 else "−"
        parts.append(f"time {format_duration(a.travel_time_s)} → {format_duration(b.travel_time_s)} "
                     f"({sign}{format_duration(abs(delta))})")
    if a.length_m is not None and b.length_m is not None:
        delta = b.length_m - a.length_m
        parts.append(f"{format_length(a.length_m)} → {format_length(b.length_m)} "
                     f"({'+' if delta >= 0 else '−'}{format_length(abs(delta))})")
    if before.turns and after.turns:
        for name, n in after.turns["by_type"].items():
            m = before.turns["by_type"].get(name, 0)
            if n != m and name != "straight":
                parts.append(f"{name.replace('_', ' ')} turns {m} → {n}")
        if before.turns["unit"] == after.turns["unit"]:
            unit = after.turns["unit"]
            parts.append(f"turn costs {turn_cost_text(before.turns['cost'], unit)} → "
                         f"{turn_cost_text(after.turns['cost'], unit)}")
    return "changed from the last metric: " + ", ".join(parts or ["another path of equal length"])
