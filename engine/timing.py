"""Per-step timing records: CUDA events on the GPU, perf_counter on the CPU.

``with timer.step("relax", level=3): ...`` records how long the enclosed work took
on the device. GPU times are read once, at ``records()``, so timing adds no host
synchronisation inside the work it measures.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class StepTime:
    step: str
    level: int | None
    ms: float


class Timer:
    def __init__(self, backend) -> None:
        self.gpu = backend.is_gpu
        self._pending: list[tuple[str, int | None, object, object]] = []

    @contextmanager
    def step(self, name: str, level: int | None = None):
        if self.gpu:
            import cupy
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            yield
            end.record()
        else:
            start = time.perf_counter()
            yield
            end = time.perf_counter()
        self._pending.append((name, level, start, end))

    def records(self) -> list[StepTime]:
        out = []
        for name, level, start, end in self._pending:
            if self.gpu:
                import cupy
                end.synchronize()
                ms = cupy.cuda.get_elapsed_time(start, end)
            else:
                ms = (end - start) * 1000.0
            out.append(StepTime(name, level, ms))
        return out

    def total_ms(self) -> float:
        return sum(r.ms for r in self.records())
