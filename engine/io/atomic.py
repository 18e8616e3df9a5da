"""Atomic saves: write beside the target, flush and fsync, then rename over it.

A failed write (full disk, file-size limit, an exception while serialising) leaves
the previous file intact and no temporary file behind. Writes never destroy: only a
regular file or a new path is written (a symlink is followed to the file it names;
a device, FIFO, socket or folder is refused), never a file the command reads
(``check_writable(path, inputs)``, called before the work), and every error names
the target, never the temporary file. A temporary file is named
``.NAME.routelab-PID-HOST.RANDOM.tmp``; one that a killed save left is removed when
the next save to that target starts, once its process is gone.
"""
from __future__ import annotations

import errno
import os
import re
import socket
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


_UMASK = os.umask(0o022)        # read once (setting it back at once), before any thread runs
os.umask(_UMASK)
_NEW_FILE_MODE = 0o666 & ~_UMASK
TEMP_TAG = "routelab"
HOST = re.sub(r"[^A-Za-z0-9-]", "", socket.gethostname())[:32]
OLD_TEMP_AGE_S = 3600           # a temp file of an earlier version (no process id) this old is left over
_STEM_CHARS = 120               # of the target's name in a temp file's name (NAME_MAX is 255)
_NEW_STYLE = re.compile(rf"{TEMP_TAG}-(?P<pid>\d+)-(?P<host>[A-Za-z0-9-]*)\.[A-Za-z0-9_]+")
_OLD_STYLE = re.compile(r"[a-z0-9_]{8}")     # tempfile.mkstemp's names, as versions before wrote them


class UnsafeTarget(OSError):
    """A save refused before anything was written: the target is a file the command
    reads, or not a regular file (a device, FIFO, socket or folder)."""

    def __init__(self, path, reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, os.fspath(path))

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode) else
            "a block device" if stat.S_ISBLK(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def _labelled(inputs) -> list[tuple[str, str]]:
    """``inputs`` as (label, path) pairs: each is a path or a (label, path) pair."""
    return [(item[0], os.fspath(item[1])) if isinstance(item, tuple) else ("the input", os.fspath(item))
            for item in inputs]


def same_file(a, b) -> bool:
    """Do two paths name one file: the same real path (symlinks, ./ and ../ resolved) or,
    where both exist, the same inode (hard links, bind mounts)?"""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_writable(path, inputs=()) -> Path:
    """The file a save to ``path`` writes (a symlink followed), after refusing, naming
    ``path``, a target that is one of ``inputs`` (paths or (label, path) pairs: the
    files the command reads), that exists but is not a regular file, or whose folder is
    missing or not writable. Called before work whose result would go there, so that a
    wrong target fails at once, not after it; ``atomic_write`` calls it again."""
    given = os.fspath(path)
    real = Path(os.path.realpath(given))
    for label, source in _labelled(inputs):
        if same_file(given, source):
            raise UnsafeTarget(given, f"it is {label} {source}, an input (inputs are never "
                                      f"written): choose another file", errno.EEXIST)
    try:
        st = os.stat(given)          # the kernel follows every link (a pipe behind /dev/stdout too)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise named(e, given) from None
    mode = None if st is None else st.st_mode
    if st is not None and (stream := _standard_stream(st)):
        raise UnsafeTarget(given, f"it is this program's standard {stream} ({real}): "
                                  f"choose a file", errno.EEXIST)
    if mode is not None and not stat.S_ISREG(mode):
        via = "" if str(real) == os.path.abspath(given) else f" (it leads to {real})"
        raise UnsafeTarget(given, f"it is {_kind(mode)}{via}; only a regular file or a new "
                                  f"path is written", errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL)
    if not real.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"no folder {real.parent}", given)
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"folder {real.parent} is not writable", given)
    return real


def _standard_stream(st: os.stat_result) -> str:
    """"output" when ``st`` is the file this process's standard output goes to (as
    ``--out /dev/stdout >> log`` would replace the log), "error", "input"; else ""."""
    for fd, name in ((1, "output"), (2, "error"), (0, "input")):
        try:
            s = os.fstat(fd)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino) and stat.S_ISREG(s.st_mode):
            return name
    return ""


def named(e: OSError, target, doing: str = "") -> OSError:
    """``e`` (its class and errno kept) saying it is about ``target``, not a temporary
    file: ``target: what failed``."""
    reason = e.strerror or str(e) or type(e).__name__
    if doing:
        reason = f"{doing} ({reason[:1].lower()}{reason[1:]})"
    code = e.errno if e.errno is not None else errno.EIO
    try:
        return type(e)(code, reason, os.fspath(target))
    except Exception:  # noqa: BLE001 - a subclass with another signature
        return OSError(code, reason, os.fspath(target))


def _stem(name: str) -> str:
    return name[:_STEM_CHARS]


def _alive(pid: int) -> bool:
    if pid <= 0 or os.name == "nt":      # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                      # another user's: alive
        return True
    return True


def leftover_temp_files(path) -> list[Path]:
    """The temporary files of saves to ``path`` that were interrupted (kill -9, a power
    cut): those of a process of this host that is gone (on Windows: an hour old), and
    those of earlier versions (``.NAME.XXXXXXXX.tmp``) an hour old. Never a live save's."""
    path = Path(path)
    start, now = f".{_stem(path.name)}.", time.time()
    found = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith(start) and name.endswith(".tmp")):
            continue
        middle = name[len(start):-len(".tmp")]
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            old = entry.stat(follow_symlinks=False).st_mtime < now - OLD_TEMP_AGE_S
        except OSError:
            continue
        new = _NEW_STYLE.fullmatch(middle)
        if new and new["host"] == HOST and (not _alive(int(new["pid"])) or (os.name == "nt" and old)):
            found.append(Path(entry.path))
        elif not new and _OLD_STYLE.fullmatch(middle) and old:
            found.append(Path(entry.path))
    return found


def remove_leftovers(path) -> list[Path]:
    """Remove ``leftover_temp_files(path)``; returns those removed."""
    removed = []
    for tmp in leftover_temp_files(path):
        try:
            os.unlink(tmp)
            removed.append(tmp)
        except OSError:
            pass
    return removed


@contextmanager
def atomic_write(path, mode: str = "wb", inputs=(), encoding: str | None = None):
    """``with atomic_write(path) as f: ...`` — ``path`` is replaced only on success.

    ``check_writable(path, inputs)`` first (a symlink is written through, to the file it
    names), then the leftovers of interrupted saves to it are removed. An OSError
    raised while saving names ``path``, with its class and errno kept."""
    real = check_writable(path, inputs)
    remove_leftovers(real)
    try:
        existing = os.stat(real).st_mode & 0o7777
    except OSError:
        existing = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{_stem(real.name)}.{TEMP_TAG}-{os.getpid()}-{HOST}.",
                                   suffix=".tmp", dir=real.parent)
    except OSError as e:
        raise named(e, path, f"cannot make a file in {real.parent}") from None
    try:
        try:
            with os.fdopen(fd, mode, encoding=encoding) as f:
                os.chmod(tmp, _NEW_FILE_MODE if existing is None else existing)
                yield f
                f.flush()
                os.fsync(f.fileno())
            check_writable(path, inputs)    # still a regular file or a new path
            os.replace(tmp, real)
        except UnsafeTarget:
            raise
        except OSError as e:
            if {str(e.filename), str(e.filename2)} - {"None", tmp, str(real)}:
                raise                       # about another file the serialiser read
            raise named(e, path) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
