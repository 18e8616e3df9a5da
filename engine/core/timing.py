"""Per-step timing records: CUDA events on the GPU, perf_counter on the CPU.

``with timer.step("relax", level=3): ...`` records how long the enclosed work took
on the device (``Backend.mark`` / ``Backend.elapsed_ms``). GPU times are read once,
at ``records()``, so timing adds no host synchronisation inside the work it measures.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class StepTime:
    step: str
    level: int | None
    ms: float


class Timer:
    def __init__(self, backend) -> None:
        self.backend = backend
        self._pending: list[tuple[str, int | None, object, object]] = []

    @contextmanager
    def step(self, name: str, level: int | None = None):
        start = self.backend.mark()
        yield
        self._pending.append((name, level, start, self.backend.mark()))

    def records(self) -> list[StepTime]:
        return [StepTime(name, level, self.backend.elapsed_ms(start, end))
                for name, level, start, end in self._pending]

    def total_ms(self) -> float:
        return sum(r.ms for r in self.records())
