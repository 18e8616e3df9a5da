"""Files that proved themselves: a hierarchy's witness check (engine.ch.proof,
engine.csp.hierarchy.proof) runs once per file, not on every load.

When a file passes on load, a marker is kept in the user's cache folder,
named by the file's real path and its identity on disk (device, inode, size,
modification and change times) and the check's version. A later load of the same,
untouched file skips the check; writing the file in any way gives it a new change
time (no user can set that one), and the check runs again. ``routelab check`` always
runs it (``always_prove``). A cache folder that cannot be written only costs the
check's time.
"""
from __future__ import annotations

import hashlib
import os
import threading
from contextlib import contextmanager
from pathlib import Path

VERSION = 1          # raise it when a witness check changes what it proves
_forced = threading.local()


class Remembered:
    """The proof of a file that passed before and has not changed since."""
    ms = 0.0

    def text(self) -> str:
        return "proved when this file was first opened (unchanged since)"


def folder() -> Path:
    """ROUTELAB_CACHE_DIR, else $XDG_CACHE_HOME/routelab, else ~/.cache/routelab."""
    root = os.environ.get("ROUTELAB_CACHE_DIR")
    if root:
        return Path(root) / "proven"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "routelab" / "proven"


def _marker(path, kind: str) -> Path | None:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    key = (f"{real}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|"
           f"{kind}|{VERSION}")
    return folder() / hashlib.sha256(key.encode()).hexdigest()


def known(path, kind: str) -> bool:
    """Whether ``path`` passed the ``kind`` check before and is untouched since."""
    if getattr(_forced, "on", False):
        return False
    marker = _marker(path, kind)
    return marker is not None and marker.exists()


def remember(path, kind: str) -> None:
    """``path`` passed the ``kind`` check."""
    marker = _marker(path, kind)
    if marker is None:
        return
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:              # a read-only home: the next load checks again
        pass


@contextmanager
def always_prove():
    """Loads inside run the witness checks whatever was proved before."""
    before = getattr(_forced, "on", False)
    _forced.on = True
    try:
        yield
    finally:
        _forced.on = before
