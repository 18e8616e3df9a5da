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


@contextmanager
def atomic_write(path, mode: str = "wb"):
    """``with atomic_write(path) as f: ...`` — ``path`` is replaced only on success."""
    path = Path(path)
    if not path.parent.is_dir():     # say so about the target, not about the temp file
        raise FileNotFoundError(errno.ENOENT, f"cannot write {path}: no folder {path.parent}")
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
