"""PHAST-like shortest-path trees on a contraction hierarchy (CU-CH's query).

Upward sweep level 0..top over arcs to higher levels, the core's complete graph,
then the downward sweep top..0; every level is one parallel step (on the GPU a
thread per arc and atomicMin: a thread per node pulling over its arcs, with no
atomics, measured slower at 24 M nodes, its arc reads no longer coalesced). On the
GPU the whole query is a captured CUDA graph of one kernel per level
(engine.ch.phast_gpu); the CPU twin runs the same sweeps in Numba. The GPU numbers its
distance rows by level (core and top first, as PHAST does) and gathers them back to
node order once per tree. A tree's rows are 32-bit (half the bytes of the memory-bound
sweep); a query whose distances pass 32 bits raises a flag and is redone with 64-bit
rows, so trees stay exact. Parents come from the final distances
(engine/sssp/parents.py), so a PHAST tree equals the direct SSSP tree arc for arc;
they are made when a path or the whole tree is first read.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

import numba
import numpy as np

from engine.core import backend as backends
from engine.ch import phast_gpu
from engine.ch.hierarchy import Hierarchy
from engine.ch.phast_tree import PhastTree
from engine.core.paths import Path, ShortestPathTree, check_node, path_from_tree
from engine.sssp.parents import parent_arcs
from engine.sssp.prepared import prepare
from engine.core.timing import Timer

INF64 = np.iinfo(np.int64).max
U64_INF = np.iinfo(np.uint64).max


@dataclass(frozen=True)
class PhastResult:
    tree: ShortestPathTree
    compute_ms: float
    total_ms: float
    level_ms: dict | None = None   # {"up": [...], "core": x, "down": [...]} when asked for


class _Index:
    """The hierarchy's sweep arrays on one backend, grouped by level."""

    def __init__(self, h: Hierarchy, backend) -> None:
        xp = backend.xp
        self.backend = backend
        up, down = h.up_harc, h.down_harc
        self.up_first = h.up_first.astype(np.int64)
        self.down_first = h.down_first.astype(np.int64)
        self.levels = h.num_levels
        self.n = h.num_nodes
        self.k = int(h.core_nodes.size)
        self.narrow = False
        host = {"up_tail": h.arc_tail[up], "up_head": h.arc_head[up], "up_w": h.arc_weight[up],
                "down_tail": h.arc_tail[down], "down_head": h.arc_head[down],
                "down_w": h.arc_weight[down], "core": h.core_nodes.astype(np.int64),
                "core_dist": np.ascontiguousarray(h.core_dist)}
        self.rank = None
        if backend.is_gpu:
            node_level = _renumber_by_level(h, host)
            self.rank = xp.asarray(host.pop("rank").astype(np.int32))
            host.update(_search_arrays(node_level, h.num_levels, host["up_tail"], host["core"]))
            # the downward sweep reads 12 bytes an arc where costs fit 32 bits
            self.narrow = host["down_w"].size == 0 or int(host["down_w"].max()) < 2**32
            if self.narrow:
                host.update(down_tail=host["down_tail"].astype(np.int32),
                            down_head=host["down_head"].astype(np.int32),
                            down_w=host["down_w"].astype(np.uint32))
        for name, values in host.items():
            setattr(self, name, xp.asarray(values))
        self.graphs = {}         # GPU: (batch size, bits) -> phast_gpu.GpuQuery
        self.buffers = {}        # GPU: batch size -> what both widths share
        self.overflowed = False  # GPU: a 32-bit query overflowed; use 64 bits from now on


def _renumber_by_level(h: Hierarchy, host: dict) -> np.ndarray:
    """Number the GPU's distance rows by level, the core and top level first (PHAST's
    reordering): a level's heads are one contiguous run and the levels above it, whose
    tails it reads, are packed before it, so the small upper levels stay in the L2
    cache. The order within a level is the graph's own, so the gather back to node
    order reads each level as a stream. Rewrites ``host``'s node ids in place (adds
    ``rank``: node -> row) and returns the levels by row."""
    order = np.argsort(-h.node_level.astype(np.int64), kind="stable")
    rank = np.empty(h.num_nodes, dtype=np.int64)
    rank[order] = np.arange(h.num_nodes, dtype=np.int64)
    for name in ("up_tail", "up_head", "down_tail", "down_head", "core"):
        host[name] = rank[host[name]]
    host["rank"] = rank
    return h.node_level[order]


def _search_arrays(node_level, levels: int, up_tail, core):
    """What the GPU's one-kernel upward search needs: each node's up arcs (they are
    contiguous: all in its own level, sorted by tail), levels, bucket offsets."""
    n, arcs = node_level.size, np.arange(up_tail.size, dtype=np.int64)
    up_begin, up_end = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    up_begin[up_tail[::-1]] = arcs[::-1]           # the last write is the first arc
    up_end[up_tail] = arcs + 1
    level_size = np.bincount(node_level, minlength=levels + 1)
    core_index = np.full(n, -1, dtype=np.int32)
    core_index[core] = np.arange(core.size, dtype=np.int32)
    return {"up_begin": up_begin, "up_end": up_end,
            "node_level": node_level.astype(np.int32),
            "level_start": np.concatenate([[0], np.cumsum(level_size)]).astype(np.int64),
            "core_index": core_index}


class PhastQuery:
    """PHAST trees on one hierarchy and backend. Owns what repeated queries reuse: the
    sweep arrays on the backend, the graph prepared for parent arcs, and the GPU
    buffers and captured launches per batch size. Made once per hierarchy and
    backend by whoever queries; dropping it frees the device memory."""

    def __init__(self, h: Hierarchy, backend=None) -> None:
        if h.graph is None:
            raise ValueError("the hierarchy is not attached to its graph (Hierarchy.attach)")
        self.hierarchy = h
        self.backend = backend or backends.current()
        self.index = _Index(h, self.backend)
        self.prepared = prepare(h.graph, h.metric, self.backend)
        self.last_bits = None        # the last device_tree's row width (64 on the CPU)

    def tree(self, source: int, per_level: bool = False) -> PhastResult:
        """Shortest-path tree from internal node ``source``, the whole of it on the host
        (``device_tree`` keeps it where it was computed and copies only what is read)."""
        t0 = time.perf_counter()
        kept = self.device_tree(source, per_level)
        tree = kept.to_host()
        total_ms = (time.perf_counter() - t0) * 1000
        return PhastResult(tree, kept.compute_ms, total_ms, kept.level_ms)

    def device_tree(self, source: int, per_level: bool = False) -> PhastTree:
        """The tree from internal node ``source`` left on the backend
        (engine.ch.phast_tree: a distance, a path or the colour bins are read from it).
        On the GPU with 32-bit rows unless they overflow (``last_bits`` says which)."""
        h, backend, source = self.hierarchy, self.backend, int(source)
        check_node(h.graph, source)
        timer, q = Timer(backend), None
        with timer.step("distances"):
            if backend.is_gpu:
                bits = 64 if self.index.overflowed else 32
                dist, level_ms, q = self._gpu_tree(source, bits, per_level)
            else:
                dist, level_ms = _cpu_distances(self.index, source, per_level)
                dist[dist == INF64] = -1
        # the flag is read after the step's end mark: its host wait is not timed
        if q is not None and phast_gpu.overflowed(self.index, q):
            with timer.step("distances"):          # exact again, with 64-bit rows
                dist, level_ms, q = self._gpu_tree(source, 64, per_level)
        self.last_bits = q.bits if q is not None else 64
        step_ms = {}
        for r in timer.records():                  # a fallback counts both sweeps
            step_ms[r.step] = step_ms.get(r.step, 0.0) + r.ms
        # parents wait until a path or the whole tree is read: the window's colours
        # and a distance need none (24 M nodes: a pass over every arc, about 1 ms)
        parents = partial(self._parents, dist, source)
        return PhastTree(h.graph, h.metric, source, dist, parents, self.prepared.tail,
                         backend, sum(step_ms.values()), level_ms, step_ms)

    def _gpu_tree(self, source: int, bits: int, per_level: bool):
        """(distances int64 in node order, -1 unreached; level timings; the query) of
        one GPU sweep with ``bits``-bit rows, queued (the caller checks the overflow)."""
        q, level_ms = self._gpu_sweep([source], bits, per_level)
        return phast_gpu.node_order(self.index, q), level_ms, q

    def _gpu_sweep(self, sources: list[int], bits: int, per_level: bool):
        """Queue the GPU query from ``sources``: (its phast_gpu.GpuQuery, level timings
        when ``per_level``, else None)."""
        q = phast_gpu.query(self.index, sources, bits)
        if not per_level:
            q.launch()
            return q, None
        return q, _timed_steps(self.backend, q.steps)

    def _parents(self, dist, source: int):
        """parent_arc of the tree with distances ``dist`` (int64, -1 unreached), on the
        backend (zero-cost arcs: made on the host, then moved). The GPU's kernel reads
        uint64 with 2^64-1 unreached: -1 viewed as uint64, whatever the rows' width."""
        d = dist.view(np.uint64) if self.backend.is_gpu else dist
        unreached = int(U64_INF) if self.backend.is_gpu else -1
        parent_arc = parent_arcs(self.prepared, d, unreached, source, on_device=True)
        return self.backend.xp.asarray(parent_arc)

    def sweep_into(self, source: int, out) -> None:
        """GPU only: queue the sweep from internal node ``source`` and gather its
        distances (uint64, node order, 2^64-1 unreached) into ``out``, a device buffer
        that captured work may read; no host wait (the cost-budgeted bounds), so its
        rows are 64-bit: a 32-bit sweep's overflow flag would need one."""
        q, _ = self._gpu_sweep([int(source)], 64, False)
        with self.backend.active():
            self.backend.xp.take(q.d[0], self.index.rank, out=out)

    def distances(self, sources) -> np.ndarray:
        """Distances (int64 [len(sources), n], -1 unreachable) from many sources at once.

        On the GPU every level's kernel serves all sources together, so the arcs of a
        level are read once per batch rather than once per source.
        """
        sources = [int(s) for s in sources]
        for s in sources:
            check_node(self.hierarchy.graph, s)
        if self.backend.is_gpu:          # 64-bit rows: the copy of b x n to the host dominates
            q, _ = self._gpu_sweep(sources, 64, False)
            d = self.backend.to_host(q.d[:, self.index.rank])
            out = d.astype(np.int64)
            out[d == U64_INF] = -1
            return out
        n = self.hierarchy.num_nodes
        out = np.stack([_cpu_distances(self.index, s)[0] for s in sources]) if sources else \
            np.zeros((0, n), dtype=np.int64)
        out[out == INF64] = -1
        return out

    def path(self, tree: ShortestPathTree | PhastTree, target: int) -> Path:
        """The path to ``target`` as original arcs (raises engine.core.paths.Unreachable)."""
        if isinstance(tree, PhastTree):
            return tree.path(target)
        return path_from_tree(self.hierarchy.graph, tree, target)


# ------------------------------------------------------------------ timing
def _timed_steps(backend, steps) -> dict:
    """Run ``steps`` one by one, each between two marks (per-level timing):
    {"up": [ms per level], "down": [...], other step names: ms}."""
    marks = []
    for name, step in steps:
        start = backend.mark()
        step()
        marks.append((name, start, backend.mark()))
    timings = {"up": [], "down": []}
    for name, start, end in marks:
        ms = backend.elapsed_ms(start, end)
        if name in ("up", "down"):
            timings[name].append(ms)
        else:
            timings[name] = timings.get(name, 0.0) + ms
    return timings


# ------------------------------------------------------------------ CPU
def _cpu_distances(index: _Index, source: int, per_level: bool = False):
    """The same sweeps, one Numba call per level (about a microsecond each)."""
    d = np.full(index.n, INF64, dtype=np.int64)
    d[source] = 0
    steps = []
    for lv in range(index.levels):
        begin, end = index.up_first[lv], index.up_first[lv + 1]
        if end > begin:
            steps.append(("up", partial(_relax, index.up_tail, index.up_head, index.up_w,
                                        begin, end, d)))
    if index.k:
        steps.append(("core", partial(_core, d, index.core, index.core_dist)))
    for lv in range(index.levels - 1, -1, -1):
        begin, end = index.down_first[lv], index.down_first[lv + 1]
        if end > begin:
            steps.append(("down", partial(_relax, index.down_tail, index.down_head,
                                          index.down_w, begin, end, d)))
    if per_level:
        return d, _timed_steps(index.backend, steps)
    for _, run in steps:
        run()
    return d, None


@numba.njit(cache=True)
def _relax(tail, head, w, begin, end, d):
    for a in range(begin, end):
        du = d[tail[a]]
        if du != INF64 and du + w[a] < d[head[a]]:
            d[head[a]] = du + w[a]


@numba.njit(cache=True)
def _core(d, core, core_dist):
    k = core.size
    core_d = np.empty(k, dtype=np.int64)
    for i in range(k):
        core_d[i] = d[core[i]]
    for j in range(k):
        best = core_d[j]
        for i in range(k):
            if core_d[i] != INF64 and core_dist[i, j] != INF64 and core_d[i] + core_dist[i, j] < best:
                best = core_d[i] + core_dist[i, j]
        d[core[j]] = best
