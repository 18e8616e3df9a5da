"""The budget slider's scale: slider steps to integer budgets and back (no Qt)."""
from __future__ import annotations

MAX_STEPS = 1000         # a wider budget range is mapped linearly onto this many slider steps


class BudgetScale:
    """Slider value -> budget: -1 is one unit below the least cost (no path), 0..steps
    span [least, shortest] in integer budget units (linearly when wider than MAX_STEPS)."""

    def __init__(self, least: int, shortest: int) -> None:
        self.least, self.shortest = least, max(shortest, least)
        self.steps = min(self.shortest - self.least, MAX_STEPS)

    def budget(self, value: int) -> int:
        if value < 0:
            return self.least - 1
        if self.steps == 0:
            return self.least
        return self.least + round(value * (self.shortest - self.least) / self.steps)

    def value(self, budget: int) -> int:
        if budget < self.least:
            return -1
        span = self.shortest - self.least
        return self.steps if span == 0 else round(min(budget - self.least, span) * self.steps / span)
