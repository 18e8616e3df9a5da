"""What a job running in the engine sees: progress, cancellation, and a channel for
records produced while it runs (e.g. one per contraction level).

The window's engine thread and the command line build one per job; engine code only
calls it, so the same capability runs headless and in the window.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress


def _ignore(record) -> None:
    pass


@dataclass(frozen=True)
class JobContext:
    progress: ProgressFn = no_progress
    cancel: CancelToken = field(default=NEVER_CANCELLED)
    record: Callable[[object], None] = _ignore    # per-step records as they finish
    # called by a long job between its steps: the window's engine thread answers the
    # interactive jobs (routes, trees) waiting meanwhile, then the long job goes on
    pause: Callable[[], None] = lambda: None
