"""Vine's parallel labeling on the GPU (engine/kernels/csp.cu), with the bounds.

One cooperative kernel runs the iterations; between two grid barriers block 0 runs
the control step. An iteration:

1. **K_t frontier expansion**: every frontier label whose key l + lb_l(v) is at most
   the threshold is expanded (the threshold is read off a key histogram of the
   frontier so that about K_t labels pass it); the others stay for later.
2. **Pruning**, counted apart: the cost bound (c + lb_c(w) > budget), the length bound
   (l + lb_l(w) >= the incumbent; with a Lagrangian bound also its test,
   engine/csp/bounds/lagrangian.py), the block's hash-pruning table in shared memory,
   then the vertex's non-dominated label list in global memory, updated lazily
   (labels a new one dominates are marked dead in place and skipped later).
3. **Completions** (with bounds, not in Pareto mode): a new label whose shortest
   completion fits the budget lowers the incumbent and is not expanded; its
   least-cost completion lowers the incumbent too.
4. **Frontier assembly** by warp prefix sums into the other frontier buffer.
5. **Adaptive K_t**: Vine's bound (engine/csp/labeling/parallelism.py) with the growth and
   pruning ratios forecast by an AR(6) model.

Labels, lists and frontiers live on the device; running out of them stops the run
with a clear error (LabelMemoryExceeded), never a guess. The stored label that
realises the final incumbent is found by ``csp_witness``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.csp.labeling.cpu import label_arcs

CTL = ("status", "near", "cur", "count", "incumbent", "threshold", "k_t", "iterations",
       "next_near", "far", "fcur", "mode", "fbase", "fwidth", "pool", "witness", "src_lb_l",
       "src_lb_c", "src_cost_along", "src_length_along", "far_max", "next_far", "splits")
AT = {name: i for i, name in enumerate(CTL)}
IT, TOTAL, CTL_SIZE = 24, 40, 56
GPU_STATS = ("expanded", "created", "pruned_cost_bound", "pruned_length_bound", "pruned_hash",
             "pruned_list", "dead", "dropped", "pruned_lagrangian")
STATUS = ("running", "done", "out of labels", "out of list memory", "unreachable",
          "over budget", "answered by the bounds", "iteration limit")
RUNNING, DONE, OUT_OF_LABELS, OUT_OF_LISTS = 0, 1, 2, 3
UNREACHABLE, OVER_BUDGET, BY_BOUNDS = 4, 5, 6
COMPLETE, PARETO, ADAPTIVE = 1, 2, 4
GPU_HISTORY = ("iteration", "frontier", "k_t", "expanded", "created", "pruned_cost_bound",
               "pruned_length_bound", "pruned_hash", "pruned_list", "dead", "split", "ns")
INF = np.iinfo(np.int64).max
NBINS, AR_RING = 2048, 64
BYTES_PER_LABEL = 32 + 16 + 25    # the label, its four frontier slots, its list entry (+ chunks)
START_LABELS = 50_000_000         # allocated at first (3.7 GB); a query that needs more grows them
GROWTH = 4                        # ... by this factor at a time (and back after that query)
MEMORY_SHARE = 0.4                # of the device memory free (theirs included) labels may take
K_MIN, K_MAX = 64, 1 << 16
CHAIN = 16                        # hops a warp goes on within a pass (engine/kernels/csp.cu expand)
RUN_ARCS = 32                     # ... after a hop of at most this many arcs
HISTORY_ROWS = 1 << 16
ITERATIONS_PER_LAUNCH = 1 << 20


@dataclass
class GpuRun:
    """What a labeling run left: the control block on the host and, when it ended
    with an answer, the witness label's arcs and how its path ends."""
    status: int
    ctl: np.ndarray
    arcs: np.ndarray | None          # the witness label's arcs, source first
    node: int                         # the witness label's node
    completion: int                   # 0 at the target, 1 shortest tail, 2 least-cost tail
    pareto: list | None               # [(length, cost, arcs)] of the alive target labels
    history: np.ndarray               # int64 [iterations, len(GPU_HISTORY)]
    capacity: int = 0                 # the labels it had room for
    reruns: int = 0                   # runs before it that ran out of labels (search_gpu)

    @property
    def stats(self) -> dict:
        return dict(zip(GPU_STATS, self.ctl[TOTAL:TOTAL + len(GPU_STATS)].tolist()))


class GpuLabeling:
    """Device buffers for one graph, reused by every query."""

    def __init__(self, graph, length: np.ndarray, cost: np.ndarray, backend,
                 max_labels: int | None, blocks: int | None = None, threads: int = 512,
                 k_min: int = K_MIN, k_max: int = K_MAX, adaptive: bool = True,
                 chain: int = CHAIN, run_arcs: int = RUN_ARCS) -> None:
        xp = self.xp = backend.xp
        if threads % 32 or not 64 <= threads <= 512:
            raise ValueError("threads per block must be a multiple of 32 from 64 to 512 "
                             "(the control step uses two warps; the kernel is built for 512)")
        self.backend, self.n = backend, graph.num_nodes
        self.max_labels = max_labels             # None: as many as the device memory holds
        self.base = self._allocate(min(START_LABELS, max_labels or START_LABELS))
        self.vhead, self.lock = xp.full(self.n, -1, np.int32), xp.zeros(self.n, np.int32)
        self.ctl = xp.zeros(CTL_SIZE, np.int64)
        self.hist = xp.zeros(NBINS, np.int32)
        self.ratios = xp.zeros(2 * AR_RING, np.float64)
        self.history = xp.zeros((HISTORY_ROWS, len(GPU_HISTORY)), np.int64)
        if max(int(length.max(initial=0)), int(cost.max(initial=0))) > np.iinfo(np.int32).max:
            raise ValueError("the GPU labeling stores arc weights as int32; an arc's length "
                             "or cost is larger")
        self.graph_arrays = (xp.asarray(graph.first_out), xp.asarray(graph.head),
                             xp.asarray(length.astype(np.int32)), xp.asarray(cost.astype(np.int32)))
        self.mean_len = float(length.mean()) if length.size else 1.0
        self.by_arc = xp.empty((4, max(1, graph.head.size)), np.int64)   # the bounds at each arc's head
        self.threads, self.k_min, self.k_max = threads, k_min, k_max
        self.adaptive, self.chain, self.run_arcs = adaptive, chain, run_arcs
        # one block per multiprocessor (the kernel is cooperative: all must be resident)
        self.blocks = blocks or xp.cuda.Device().attributes["MultiProcessorCount"]
        self.ctl_host = backend.host_empty(CTL_SIZE, np.int64)

    def _allocate(self, wanted: int) -> int:
        """(Re)allocates the label buffers for ``wanted`` labels, or as many as
        MEMORY_SHARE of the free device memory holds (at least 1024); returns how many."""
        xp = self.xp
        self._release()
        pool = xp.get_default_memory_pool()
        free = xp.cuda.runtime.memGetInfo()[0] + pool.free_bytes()
        cap = self.capacity = int(max(1024, min(wanted, MEMORY_SHARE * free // BYTES_PER_LABEL)))
        # list chunks: chunk v is vertex v's first; a later one is added only when the
        # chunks before it are full, so at most one per 8 labels follows
        self.pool = self.n + cap // 8 + 1
        self.lab_node, self.lab_l, self.lab_c = (xp.empty(cap, np.int32), xp.empty(cap, np.int64),
                                                 xp.empty(cap, np.int64))
        self.lab_parent, self.lab_arc = xp.empty(cap, np.int32), xp.empty(cap, np.int32)
        self.lab_dead = xp.empty(cap, np.int32)
        self.slots, self.chunk_next = xp.empty(self.pool * 8, np.int32), xp.empty(self.pool, np.int32)
        self.slot_l, self.slot_c = xp.empty(self.pool * 8, np.int64), xp.empty(self.pool * 8, np.int64)
        self.frontier = [xp.empty(cap, np.int32) for _ in range(4)]   # near x 2, far x 2
        return cap

    def _release(self) -> None:
        self.lab_node = self.lab_l = self.lab_c = self.lab_parent = self.lab_arc = None
        self.lab_dead = self.slots = self.chunk_next = self.slot_l = self.slot_c = None
        self.frontier = []

    def grow(self) -> bool:
        """More label memory for a query that ran out (GROWTH times as much, up to
        ``max_labels`` or the device memory); False when there can be no more. The
        query then runs again: labels are exact, so a run is never resumed."""
        old = self.capacity
        wanted = old * GROWTH if self.max_labels is None else min(old * GROWTH, self.max_labels)
        if wanted <= old:
            return False
        try:
            if self._allocate(wanted) > old:
                return True
        except MemoryError:                   # cupy's OutOfMemoryError: keep what we had
            self._release()
            self.xp.get_default_memory_pool().free_all_blocks()
        self._allocate(old)
        return False

    def shrink(self) -> None:
        """Back to the first allocation after a query that grew the labels (so one hard
        query does not keep gigabytes of device memory)."""
        if self.capacity > self.base:
            self._allocate(self.base)
            self.xp.get_default_memory_pool().free_all_blocks()

    def solve(self, source: int, target: int, budget: int, prune, exact, flags: int,
              lagrange=None, label_limit: int | None = None, meanwhile=None) -> GpuRun:
        """``exact``: the device arrays (lb_l, lb_c, cost_along, length_along) of the
        bounds, which decide reachability, the least cost and the shortest path's fit;
        ``prune``: the same four that the labeling prunes with (zeros and INF for
        Vine-style); ``lagrange``: a LagrangianBound (device ``d``) to prune with too;
        ``label_limit``: stop (out of labels) after this many labels, not capacity;
        ``meanwhile()``: host work done while the first launch runs."""
        b = self.backend
        lb_l, lb_c, cost_along, length_along = prune
        i64 = np.int64
        lag = (lagrange.d, i64(lagrange.p), i64(lagrange.q), i64(lagrange.cut)) if lagrange \
            else (lb_l, i64(0), i64(0), i64(0))
        limit = min(label_limit or self.capacity, self.capacity)
        flags |= ADAPTIVE if self.adaptive else 0
        i32 = np.int32
        self.vhead.fill(-1)
        head = self.graph_arrays[1]
        for k, per_node in enumerate(prune):
            self.xp.take(per_node, head, out=self.by_arc[k, :head.size])
        b.launch("csp", "csp_start", (i32(self.n), i32(source), i32(target), i64(budget), i32(flags),
                                      *exact, lb_l,
                                      self.lab_node, self.lab_l, self.lab_c, self.lab_parent,
                                      self.lab_arc, self.lab_dead, self.vhead, self.slots,
                                      self.slot_l, self.slot_c, self.chunk_next, self.frontier[0], self.ctl, i64(self.k_min),
                                      np.float64(self.mean_len)),
                 grid=1, block=1)
        g = self.graph_arrays
        started = b.mark()
        while True:
            b.launch("csp", "csp_labeling",
                     (*g, lb_l, *lag, self.by_arc, i64(self.by_arc.shape[1]), self.lab_node,
                      self.lab_l, self.lab_c, self.lab_parent, self.lab_arc, self.lab_dead, i32(self.capacity),
                      i32(limit), self.vhead, self.lock, self.slots, self.slot_l, self.slot_c,
                      self.chunk_next, i32(self.pool),
                      *self.frontier, self.ctl, self.hist, self.ratios,
                      self.history, i32(HISTORY_ROWS), i32(target), i64(budget), i32(flags),
                      i64(self.k_min), i64(self.k_max), np.float64(self.mean_len),
                      i32(self.chain), i32(self.run_arcs), i32(ITERATIONS_PER_LAUNCH)),
                     grid=self.blocks, block=self.threads, cooperative=True)
            b.launch("csp", "csp_witness", (self.lab_node, self.lab_l, self.lab_c, lb_l, lb_c,
                                            cost_along, length_along, i32(target), i64(budget),
                                            i32(flags), self.ctl), grid=264, block=256)
            if meanwhile is not None:
                meanwhile()
                meanwhile = None
            ctl = b.to_host(self.ctl, out=self.ctl_host).copy()
            if ctl[AT["status"]] != RUNNING:
                break
        self.kernel_ms = b.elapsed_ms(started, b.mark())
        return self._outcome(ctl, target, flags)

    def _outcome(self, ctl: np.ndarray, target: int, flags: int) -> GpuRun:
        status, count = int(ctl[AT["status"]]), int(ctl[AT["count"]])
        rows = min(int(ctl[AT["iterations"]]), HISTORY_ROWS)
        history = self.backend.to_host(self.history[:rows]) if rows else \
            np.zeros((0, len(GPU_HISTORY)), np.int64)
        run = GpuRun(status, ctl, None, -1, -1, None, history, self.capacity)
        if status != DONE or count == 0:
            self.hist.fill(0)                     # a run that stopped early leaves it dirty
            return run
        witness = int(ctl[AT["witness"]])
        ids = None
        if flags & PARETO:
            alive = self.xp.flatnonzero((self.lab_node[:count] == target) &
                                        (self.lab_dead[:count] == 0))
            ids = self.backend.to_host(alive)
        # a label's ancestors have smaller ids (a label exists before it is expanded),
        # so the labels up to the last one wanted hold every path
        wanted = ([witness & ((1 << 40) - 1)] if witness != INF else []) + \
            ([int(ids.max())] if ids is not None and ids.size else [])
        last = max(wanted, default=0)
        parent = self.backend.to_host(self.lab_parent[:last + 1])
        arc = self.backend.to_host(self.lab_arc[:last + 1])
        if flags & PARETO:
            ls, cs = self.backend.to_host(self.lab_l[alive]), self.backend.to_host(self.lab_c[alive])
            run.pareto = sorted(((int(l), int(c), label_arcs(parent, arc, int(x)))
                                 for l, c, x in zip(ls, cs, ids)), key=lambda p: p[:2])
        if witness != INF:
            x = witness & ((1 << 40) - 1)
            run.completion = witness >> 40
            run.arcs = label_arcs(parent, arc, x)
            run.node = int(self.backend.to_host(self.lab_node[x:x + 1])[0])
        return run
