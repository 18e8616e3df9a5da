"""What the OpenStreetMap reader (engine.io.osm) kept and skipped, counted by each of
its steps (reading, building the graph, resolving turn restrictions)."""
from __future__ import annotations

from dataclasses import dataclass


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
