"""Resource bounds checked before allocating: a memory budget for what a file asks for.

The budget defaults to a fraction of the machine's memory and can be set with the
environment variable ROUTELAB_MEMORY_BUDGET (bytes, or with a K/M/G suffix). Loaders
compare the sizes a file announces (node and arc counts, array shapes, uncompressed
lengths) against it, and against the file's own size, before they allocate anything.
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


def check_allocation(nbytes: int, what: str, path=None) -> None:
    """Refuse, with the file and the reason, an allocation above the memory budget."""
    budget = memory_budget()
    if nbytes > budget:
        raise LoadError(path, f"{what} would need {nbytes / 2**30:.1f} GiB, more than the memory "
                              f"budget of {budget / 2**30:.1f} GiB (set {BUDGET_ENV} to change it)")


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
