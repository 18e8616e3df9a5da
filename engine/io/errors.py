"""The one error every loader raises for bad input."""
from __future__ import annotations

import os


class LoadError(Exception):
    """A file could not be loaded: names the file, the line where known, and why."""

    def __init__(self, path, reason: str, line: int | None = None) -> None:
        self.path = os.fspath(path) if path is not None else ""
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {reason}" if where else reason)
