"""What a person reads when something fails (DESIGN principle 9), for the command line
and the window alike; Qt-free, so the headless commands can use it.

Errors of the input (a bad file, an unknown node id, a parameter out of range, a
path that does not exist) are shown as their own message. Anything else is a bug:
it is named as an internal error with its type, and the traceback goes to the
terminal (the window) or appears with ``--debug`` (the command line).
"""
from __future__ import annotations

import re
import sys
import traceback

MAX_MESSAGE = 300       # a message longer than this is cut: one line, not a dump of an array
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")     # Numba colours its errors


def input_error_types() -> tuple[type, ...]:
    """Exceptions that mean "the input is wrong", not "the program is wrong"."""
    from engine.core.backend import BackendError
    from engine.io.errors import LoadError
    from engine.core.paths import Unreachable
    return (LoadError, BackendError, Unreachable, ValueError, KeyError, OSError, OverflowError)


def is_input_error(exc: BaseException) -> bool:
    return isinstance(exc, input_error_types()) and not _bare_key_error(exc)


def _bare_key_error(exc: BaseException) -> bool:
    """KeyError('metric') from a dict lookup, as opposed to one the engine raised with a
    sentence ("unknown node id 9 ...")."""
    if not isinstance(exc, KeyError) or len(exc.args) != 1:
        return isinstance(exc, KeyError)
    key = exc.args[0]
    return not (isinstance(key, str) and " " in key)


def where(exc: BaseException) -> str:
    """The innermost frame of RouteLab's own code (else the innermost of all) as
    "function (file:line)"; "" without a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if any(f"{sep}{pkg}{sep}" in f.filename
                                     for pkg in ("app", "engine") for sep in "/\\")]
    if not frames:
        return ""
    f = (ours or frames)[-1]
    return f"{f.name} ({f.filename.replace(chr(92), '/').rsplit('/', 1)[-1]}:{f.lineno})"


def one_line(text: str) -> str:
    text = " ".join(ANSI.sub("", str(text)).split())
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


def describe(exc: BaseException, located: bool = True) -> str:
    """The exception as one readable line; a missing key says where it was missed
    unless ``located`` is False (the caller names the place)."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, KeyError):
        if _bare_key_error(exc):
            key = exc.args[0] if exc.args else "?"
            at = where(exc) if located else ""
            return one_line(f"missing key {key!r}" + (f" in {at}" if at else ""))
        return one_line(exc.args[0])
    if isinstance(exc, OverflowError) and not type(exc).__module__.startswith("engine."):
        return one_line(f"a number is out of range ({exc})")
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return one_line(f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}")
    if is_input_error(exc):
        return one_line(str(exc) or exc.__class__.__name__)
    text = str(exc)
    return one_line(f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__)


def internal(exc: BaseException, what: str = "") -> str:
    """A bug's message in the window: readable, with where to find the details."""
    what = what or where(exc)
    return f"Internal error{f' in {what}' if what else ''}: {describe(exc, located=False)} — see the terminal for details"


def for_window(exc: BaseException, what: str = "") -> str:
    """Bad input as its own message; anything else as an internal error."""
    return describe(exc) if is_input_error(exc) else internal(exc, what)


class SlotErrors:
    """``sys.excepthook`` while a window is open. PySide reports an exception that
    escapes a slot through ``sys.excepthook``; this keeps printing it (the terminal has
    the traceback) and hands a readable message to ``report`` (the window's banner)."""

    def __init__(self, report) -> None:
        self.report = report
        self.previous = None

    def install(self) -> "SlotErrors":
        self.previous = sys.excepthook
        sys.excepthook = self.hook
        return self

    def uninstall(self) -> None:
        if sys.excepthook == self.hook:       # another window may have chained after us
            sys.excepthook = self.previous or sys.__excepthook__

    def hook(self, exc_type, exc, tb) -> None:
        (self.previous or sys.__excepthook__)(exc_type, exc, tb)
        if exc is None or issubclass(exc_type, KeyboardInterrupt):
            return
        try:
            self.report(for_window(exc))
        except Exception:  # noqa: BLE001 - a hook that raises would hide the first error
            traceback.print_exc()
