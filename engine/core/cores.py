"""The CPU cores this process may use (its affinity on Linux, where a container or
``taskset`` can give it fewer than the machine has), the thread that runs a CRP
query's backward search beside its forward one, and the threads that unpack its path."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

_SIDE: list = []
_WORKERS: dict = {}


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


def side_thread() -> ThreadPoolExecutor | None:
    """One thread for Numba code (nogil) that runs beside the calling thread, shared by
    every query; None with one usable core."""
    if not _SIDE:
        _SIDE.append(ThreadPoolExecutor(1, thread_name_prefix="query-side")
                     if usable_cores() > 1 else None)
    return _SIDE[0]


def worker_threads(count: int) -> ThreadPoolExecutor:
    """``count`` threads for Numba code (nogil), shared by every query that asks for
    as many (CRP path unpacking: engine.crp.query.lanes)."""
    if count not in _WORKERS:
        _WORKERS[count] = ThreadPoolExecutor(count, thread_name_prefix="query-lane")
    return _WORKERS[count]
