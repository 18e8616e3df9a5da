"""Atomic saves: write beside the target, flush and fsync, then rename over it.

A failed write (full disk, file-size limit, an exception while serialising) leaves
the previous file intact and no temporary file behind.
"""
from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


_UMASK = os.umask(0o022)        # read once (setting it back at once), before any thread runs
os.umask(_UMASK)
_NEW_FILE_MODE = 0o666 & ~_UMASK


def check_writable(path) -> Path:
    """Raise (naming ``path``) unless a file can be written there: called before work
    whose result would go there, so that a wrong folder fails at once, not after it."""
    path = Path(path)
    if not path.parent.is_dir():     # say so about the target, not about a temp file
        raise FileNotFoundError(errno.ENOENT, f"cannot write {path}: no folder {path.parent}")
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"cannot write {path}: it is a folder")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"cannot write {path}: folder {path.parent} "
                              f"is not writable")
    return path


@contextmanager
def atomic_write(path, mode: str = "wb"):
    """``with atomic_write(path) as f: ...`` — ``path`` is replaced only on success."""
    path = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, mode) as f:
            os.chmod(tmp, _NEW_FILE_MODE)   # as open() would make it, not mkstemp's 0600
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
