"""Resource bounds checked before allocating: a memory budget for what a file asks for.

The budget defaults to a fraction of the machine's memory and can be set with the
environment variable ROUTELAB_MEMORY_BUDGET (bytes, or with a K/M/G suffix). Loaders
compare the sizes a file announces (node and arc counts, array shapes, uncompressed
lengths) against it, and against the file's own size, before they allocate anything;
so do the engine's large structures (CRP cell matrices, isochrone geometry). A refusal
says "needs X GiB, budget Y GiB" (``OverBudget``), also when the budget, not the
compression ratio, is what a compressed file expands past.
"""
from __future__ import annotations

import os

from engine.io.errors import LoadError

BUDGET_ENV = "ROUTELAB_MEMORY_BUDGET"
DEFAULT_FRACTION = 0.5          # of physical memory
FALLBACK_BYTES = 8 * 2**30      # when physical memory cannot be read
_SUFFIXES = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_budget() -> int:
    """Bytes one load may allocate."""
    text = os.environ.get(BUDGET_ENV, "").strip().upper()
    if text:
        scale = _SUFFIXES.get(text[-1:], 1)
        number = text[:-1] if text[-1:] in _SUFFIXES else text
        try:
            value = int(float(number) * scale)
        except ValueError:
            raise LoadError(None, f"{BUDGET_ENV}={text!r} is not a size (e.g. 4G)") from None
        if value <= 0:
            raise LoadError(None, f"{BUDGET_ENV} must be positive")
        return value
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * DEFAULT_FRACTION)
    except (ValueError, OSError, AttributeError):
        return FALLBACK_BYTES


class OverBudget(LoadError):
    """What the input asks for does not fit the memory budget (refused before allocating)."""


def gib(nbytes: float) -> str:
    """Bytes in GiB for a message: one decimal, or two significant digits below 0.1 GiB."""
    value = nbytes / 2**30
    return f"{value:,.1f}" if value >= 0.1 else f"{value:.2g}"


def over_budget(path, what: str, nbytes: int, budget: int, more: bool = False) -> OverBudget:
    """The refusal: "WHAT needs X GiB, budget Y GiB" (``more``: at least X)."""
    return OverBudget(path, f"{what} needs {'more than ' if more else ''}{gib(nbytes)} GiB, "
                            f"budget {gib(budget)} GiB (the memory budget; set {BUDGET_ENV} "
                            "to change it)")


def check_allocation(nbytes: int, what: str, path=None) -> None:
    """Refuse, with the file and the reason, an allocation above the memory budget."""
    budget = memory_budget()
    if nbytes > budget:
        raise over_budget(path, what, nbytes, budget)


def check_regular_file(path) -> None:
    """Only regular files are read: a FIFO would hang, a device could be endless."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise LoadError(path, "no such file") from None
    except OSError as e:
        raise LoadError(path, f"cannot read it ({e.strerror})") from None
    if stat.S_ISDIR(mode):
        raise LoadError(path, "is a directory, not a graph file")
    if not stat.S_ISREG(mode):
        raise LoadError(path, "is not a regular file (a pipe, socket or device cannot be loaded)")


# ------------------------------------------------------------ bounded text reading
RATIO_LIMIT = 100            # a .gz/.bz2 may expand to this many times its size ...
RATIO_FLOOR = 64 * 2**20     # ... or to this much, whichever is larger
CHUNK_BYTES = 4 * 2**20      # parsed per step: bounds the parser's working memory
MAX_LINE_BYTES = 2**20       # no DIMACS line is anywhere near this long


def expansion_limit(path, size: int) -> int:
    """The most bytes a file of ``size`` bytes may give when read (decompressed)."""
    name = os.fspath(path).lower()
    if not name.endswith((".gz", ".bz2")):
        return size
    return min(max(RATIO_LIMIT * size, RATIO_FLOOR), memory_budget())


def budget_binds(path, size: int) -> bool:
    """Whether the memory budget, not the compression ratio, sets ``expansion_limit``."""
    name = os.fspath(path).lower()
    return name.endswith((".gz", ".bz2")) and memory_budget() < max(RATIO_LIMIT * size, RATIO_FLOOR)


def open_regular(path):
    """Open a regular file for reading without ever blocking on a FIFO: (file, size)."""
    import stat
    check_regular_file(path)
    try:   # O_NONBLOCK: a file swapped for a FIFO after the check cannot hang us
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise LoadError(path, f"cannot read it ({e.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise LoadError(path, "is not a regular file (a pipe, socket or device cannot be loaded)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), info.st_size


def read_chunks(path, cancel=None, chunk: int = CHUNK_BYTES):
    """The (decompressed) bytes of a text file in blocks that end at a line end.

    Decompression is streamed and stops with a LoadError once the output passes
    ``expansion_limit`` (a compression bomb); ``cancel.check()`` runs every block.
    """
    import bz2
    import gzip
    import zlib
    raw, size = open_regular(path)
    limit = expansion_limit(path, size)
    name = os.fspath(path).lower()
    stream = gzip.GzipFile(fileobj=raw) if name.endswith(".gz") else \
        bz2.BZ2File(raw) if name.endswith(".bz2") else raw
    total, carry = 0, b""
    with raw, stream:
        while True:
            if cancel is not None:
                cancel.check()
            try:
                block = stream.read(chunk)
            except (OSError, EOFError, zlib.error, ValueError) as e:
                raise LoadError(path, f"truncated or corrupt compressed file ({e})") from None
            total += len(block)
            if total > limit and budget_binds(path, size):
                raise over_budget(path, "its decompressed text", total, limit, more=True)
            if total > limit:
                raise LoadError(path, f"expands to more than {limit:,} bytes ({RATIO_LIMIT}x its "
                                      "size or the memory budget): refused as a compression bomb")
            if not block:
                break
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                carry += block
                if len(carry) > MAX_LINE_BYTES:
                    raise LoadError(path, f"a line longer than {MAX_LINE_BYTES:,} bytes: "
                                          "not a text file of this format")
                continue
            yield carry + block[:cut]
            carry = block[cut:]
    if carry:
        yield carry
