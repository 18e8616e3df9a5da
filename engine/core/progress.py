"""Progress reporting and cooperative cancellation for long engine work.

Long steps call ``progress(fraction, message)`` and ``cancel.check()`` between
chunks of work; the GUI's engine thread passes its own callback and token.
"""
from __future__ import annotations

import threading
from typing import Callable

ProgressFn = Callable[[float, str], None]


class Cancelled(Exception):
    """The user cancelled the running job."""


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled("cancelled")


def no_progress(fraction: float, message: str) -> None:
    pass


NEVER_CANCELLED = CancelToken()
