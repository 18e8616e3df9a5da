"""The GPU half of PHAST (engine.ch.phast): per batch size and distance width, the
buffers and the captured launches of one query, and the gather back to node order.

Rows are uint32 where the distances fit (``bits`` 32): the downward sweep is bound
by memory, and half-width rows halve its random reads and atomics, the
initialisation and the gather. A 32-bit step adds in 64 bits and drops a candidate
that does not fit; where that could change the answer it sets the query's overflow
flag (engine/kernels/phast.cu), and the caller redoes the query with uint64 rows,
captured the first time it is needed. So the result is always exact, and a
hierarchy that overflowed once goes straight to 64 bits (``_Index.overflowed``).
"""
from __future__ import annotations

import numpy as np

BLOCK = 256
UP_THREADS = 1024        # PHAST_UP_THREADS in phast.cu: one block per source


class GpuQuery:
    """Buffers and the captured launch sequence for batches of ``b`` sources with
    ``bits``-bit rows (32: uint32, 2^32-1 unreached, and an ``overflow`` flag; 64:
    uint64, 2^64-1 unreached). ``steps`` are (name, launch) for per-level timing,
    ``launch`` replays them all as one CUDA graph."""

    def __init__(self, index, b: int, bits: int, buffers: tuple) -> None:
        backend = index.backend
        n, k = index.n, index.k
        self.bits = bits
        self.sources, scratch, bucket_size = buffers
        self.d = backend.xp.empty((b, n), dtype=np.uint32 if bits == 32 else np.uint64)
        flag, suffix = (), ""
        if bits == 32:
            self.overflow = backend.xp.zeros(1, dtype=np.int32)
            self.overflow_host = backend.host_empty(1, np.int32)
            flag, suffix = (self.overflow,), "_32"

        def step(kernel, grid, block, *args):
            backend.kernel("phast", kernel + suffix)      # loaded before the capture
            return lambda: backend.launch("phast", kernel + suffix, args + flag, grid=grid,
                                          block=block)

        levels = np.int32(index.levels)
        steps = [("init", step("phast_init", (_blocks(n), b), BLOCK, self.d, np.int32(n),
                               self.sources)),
                 ("up", step("phast_up_search", (1, b), UP_THREADS, index.up_begin, index.up_end,
                             index.up_head, index.up_w, index.node_level, levels,
                             index.level_start, np.int32(n), self.sources, self.d, scratch,
                             bucket_size))]
        if k:
            core_start = np.int64(int(index.level_start[index.levels]))
            steps.append(("core", step("phast_core_reached", (_blocks(k), b), BLOCK, self.d,
                                       np.int32(n), index.core, np.int32(k), index.core_index,
                                       scratch, core_start, bucket_size, levels,
                                       index.core_dist)))
        relax = "phast_relax_narrow" if index.narrow else "phast_relax"
        for lv in range(index.levels - 1, -1, -1):
            begin, end = int(index.down_first[lv]), int(index.down_first[lv + 1])
            if end > begin:
                steps.append(("down", step(relax, (_blocks(end - begin), b), BLOCK,
                                           index.down_tail, index.down_head, index.down_w,
                                           np.int32(begin), np.int32(end), self.d, np.int32(n))))
        self.steps = steps

        def run_all():
            for _, launch in steps:
                launch()

        self.launch = backend.capture(run_all)


def _blocks(threads: int) -> int:
    return (threads + BLOCK - 1) // BLOCK


def query(index, sources: list[int], bits: int) -> GpuQuery:
    """The query for ``len(sources)`` sources with ``bits``-bit rows (made and captured
    on first use), its sources set (as rows). Both widths of a batch size share the
    sources and the upward search's scratch: they run one after the other."""
    b, xp = len(sources), index.backend.xp
    if (b, bits) not in index.graphs:
        if b not in index.buffers:
            with index.backend.active():
                index.buffers[b] = (xp.zeros(b, dtype=np.int32),
                                    xp.empty((b, index.n), dtype=np.int32),   # reached, by level
                                    xp.zeros((b, index.levels + 1), dtype=np.int32))
        with index.backend.active():
            index.graphs[b, bits] = GpuQuery(index, b, bits, index.buffers[b])
    q = index.graphs[b, bits]
    with index.backend.active():
        xp.take(index.rank, xp.asarray(sources, dtype=np.int64), out=q.sources)
    return q


def node_order(index, q: GpuQuery):
    """Row 0's distances in node order as int64, -1 unreached: a new array (the captured
    launches write the same rows every query). 32 bits: one kernel gathers and widens."""
    backend = index.backend
    with backend.active():
        if q.bits == 64:
            return q.d[0][index.rank].view(np.int64)      # 2^64-1 as int64 is -1
        out = backend.xp.empty(index.n, dtype=np.int64)
        backend.launch("phast", "phast_gather_32", (q.d, index.rank, np.int32(index.n), out),
                       threads=index.n, block=BLOCK)
        return out


def overflowed(index, q: GpuQuery) -> bool:
    """Whether the 32-bit query just queued dropped a distance that did not fit (a
    4-byte copy and a host wait); remembered on ``index``. Always False at 64 bits."""
    if q.bits == 64:
        return False
    backend = index.backend
    backend.to_host_async(q.overflow, q.overflow_host)
    backend.synchronize()
    if q.overflow_host[0]:
        index.overflowed = True
    return bool(q.overflow_host[0])
