"""How the witness checks of hierarchy files run (engine/ch/proof.py,
engine/csp/hierarchy/proof.py): chunks of nodes handed to threads as they come free,
a scratch set per thread within a memory budget, and bounds on the work a crafted
file can ask for.

The kernels are Numba functions without the GIL, run from a thread pool rather than
``numba.prange``: the work per node is very uneven (NY: a few nodes near the core
hold most of the searches), so chunks go to whichever thread is free, and a prange
kernel took seconds longer to compile on a first run.
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from engine.io.errors import LoadError

SCRATCH_BUDGET = 256 << 20       # bytes of per-thread scratch; fewer threads beyond it
CHUNKS_PER_THREAD = 32          # handed out as threads come free: the work is uneven
PAIRS_PER_ARC = 64               # valley pairs a file may have per listed arc (NY: 2-3)
WORK_PER_ARC = 256               # labels a chunk's searches may set per node and arc


def in_chunks(kernel, g, nodes, scratch: list, budget: int):
    """``kernel(g, nodes, lo, hi, *scratch[i], budget) -> (counts, failure)`` over chunks
    of ``nodes`` on one thread per scratch set (Numba code without the GIL, chunks
    handed out as threads come free, each with a free scratch set): (summed counts, the
    failure of the first chunk that has one, else the kernel's "none": its first
    entry -1). Once a chunk fails, the chunks not started are skipped."""
    parts = max(1, min(nodes.size, len(scratch) * CHUNKS_PER_THREAD))
    bounds = np.linspace(0, nodes.size, parts + 1).astype(np.int64)
    free, failed = queue.SimpleQueue(), threading.Event()
    for s in scratch:
        free.put(s)

    def run(c: int):
        if failed.is_set():
            return None
        s = free.get()
        try:
            out = kernel(g, nodes, bounds[c], bounds[c + 1], *s, budget)
        finally:
            free.put(s)
        if out[1][0] >= 0:
            failed.set()
        return out

    if len(scratch) == 1:
        results = [run(c) for c in range(parts)]
    else:
        with ThreadPoolExecutor(len(scratch), thread_name_prefix="proof") as pool:
            results = list(pool.map(run, range(parts)))
    done = [r for r in results if r is not None]
    stats = np.sum([r[0] for r in done], axis=0)
    fail = next((r[1] for r in done if r[1][0] >= 0), done[0][1])
    return stats, fail


def effort(path, pairs: int, n: int, arcs: int) -> int:
    """Refuse a file with far more valley pairs than contraction makes (NY: ~2-3 per
    listed arc; a crafted node of huge degree could make the check run for hours), and
    return the search budget: how many labels one chunk's searches may set."""
    if pairs > PAIRS_PER_ARC * arcs + (1 << 20):
        raise LoadError(path, f"{pairs:,} pairs of arcs around contracted nodes for {arcs:,} "
                              "arcs: far more than contraction makes; not proved")
    return WORK_PER_ARC * (n + arcs) + (1 << 20)


def gave_up(v: int, budget: int) -> str:
    return (f"the witness check gave up near node {v}: its searches set more than "
            f"{budget:,} labels, far more than a hierarchy from contraction needs; not proved")


def workers(n: int, threads: int | None, per_node: int = 16) -> int:
    """Threads for a witness check: Numba's (or ``threads``), fewer when their scratch
    (``per_node`` bytes per node each) would pass SCRATCH_BUDGET."""
    want = numba.get_num_threads() if threads is None else max(1, int(threads))
    cap = SCRATCH_BUDGET // max(per_node * n, 1)
    return max(1, min(want, numba.config.NUMBA_NUM_THREADS, cap))
