"""What a cost-budgeted query answers (engine.csp.query.budgeted on the CPU,
engine.csp.query.gpu on the GPU): the result, its Pareto points, and the two ways a
query ends without a path."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.paths import Path, Unreachable
from engine.csp.labeling.cpu import HISTORY


class NoPathWithinBudget(Unreachable):
    """Every path costs more than the budget; ``least_cost`` is the cheapest."""

    def __init__(self, message: str, least_cost: int) -> None:
        super().__init__(message)
        self.least_cost = least_cost


class LabelMemoryExceeded(RuntimeError):
    """The search needed more labels than allowed (no answer is guessed)."""


@dataclass(frozen=True)
class ParetoPoint:
    length: int
    cost: int
    arcs: np.ndarray


@dataclass
class CspResult:
    source: int
    target: int
    budget: int
    length: int
    cost: int
    path: Path
    least_cost: int                 # the cheapest path's cost (the budget's floor)
    shortest_length: int            # the shortest path's length ...
    shortest_cost: int              # ... and cost (a budget at or above it changes nothing)
    answered_by: str                # "bounds", or "labeling" (and how its path ends)
    stats: dict = field(default_factory=dict)     # STATS counts
    ms: dict = field(default_factory=dict)        # bounds, labeling, total
    pareto: list[ParetoPoint] | None = None
    references: dict = field(default_factory=dict)   # "shortest", "least_cost": arc arrays
    history: np.ndarray | None = None   # int64 [k, len(history_columns)]: the labeling's course
    history_columns: tuple = HISTORY    # engine.csp.labeling.gpu.GPU_HISTORY on the GPU
    lagrangian: dict | None = None      # engine.csp.bounds.lagrangian.lagrangian_summary (None: unused)
    backend: str = "cpu"
