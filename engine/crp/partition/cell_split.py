"""One level of the top-down recursion: every cell heavier than the target is split
by METIS into ceil(weight / target) parts, and the parts become the next level's
cells, numbered by (parent cell, part) so that the subcells of a parent keep
contiguous ids.

The cells of a level are ranges of a node order (``order``: rank -> node, ``rank``
its inverse): a split sorts each range by part, so the next level's cells are
ranges again and no level needs a global sort. Each cell's METIS call sees only
its induced subgraph, so the calls are independent and run on forked worker
processes (engine.crp.partition.workers). A call's result depends on its
subgraph, part count and seed alone, never on which worker ran it, so the cells
are bit-identical for any number of workers. The workers write their
parts into shared memory; only cell counts travel back.
"""
from __future__ import annotations

import mmap

import numba
import numpy as np

from engine.crp.partition.workers import Workers, shared

TASKS_PER_WORKER = 16        # enough tasks to balance uneven cells, few enough to be cheap


def shared_array(size: int, dtype) -> np.ndarray:
    """A zeroed array in anonymous shared memory: forked workers write, the parent reads."""
    dtype = np.dtype(dtype)
    buf = mmap.mmap(-1, max(1, size * dtype.itemsize))
    return np.frombuffer(buf, dtype=dtype, count=size)


class LevelGraph:
    """A graph whose cells are split: symmetric CSR with optional node and edge
    weights (None: all 1), its node order by cell and the cells as rank ranges."""

    def __init__(self, xadj, adj, vweight=None, eweight=None):
        n = xadj.size - 1
        self.xadj, self.adj, self.vweight, self.eweight = xadj, adj, vweight, eweight
        self.order = shared_array(n, np.int32)
        self.order[:] = np.arange(n, dtype=np.int32)
        self.rank = shared_array(n, np.int32)
        self.rank[:] = self.order
        self.part = shared_array(n, np.int32)
        self.first = np.array([0, n], dtype=np.int64)     # one cell: the whole graph

    @property
    def num_nodes(self) -> int:
        return self.xadj.size - 1

    def cell_weights(self) -> np.ndarray:
        if self.vweight is None:
            return np.diff(self.first)
        w = np.zeros(self.num_nodes + 1, dtype=np.int64)
        np.cumsum(self.vweight[self.order], out=w[1:])
        return w[self.first[1:]] - w[self.first[:-1]]

    def regroup(self) -> None:
        """Each cell's range sorted by part (stably); the non-empty parts become the cells."""
        self.first = _regroup(self.first, self.order, self.rank, self.part)

    def set_cells(self, cell: np.ndarray) -> None:
        """Start from the given dense cells (int32 per node), each a range in node order."""
        self.first = _order_by_cell(cell, self.order, self.rank)

    def cell_ids(self) -> np.ndarray:
        """The current cell of every node (int32)."""
        cell = np.empty(self.num_nodes, dtype=np.int32)
        cell[self.order] = np.repeat(np.arange(self.first.size - 1, dtype=np.int32),
                                     np.diff(self.first))
        return cell


def split_cells(workers: Workers, name: str, target: int, seed: int, report, cancel) -> None:
    """Split every cell of the graph ``name`` heavier than ``target`` and regroup."""
    graph = shared(name)
    nparts = -(-graph.cell_weights() // target)
    graph.part[:] = 0
    todo = np.flatnonzero(nparts > 1)
    tasks = _tasks(graph.first, todo, nparts, workers.count)
    sizes = np.cumsum([len(t) for t in tasks])
    report(0.0)
    workers.map(_run_task, [(name, t, seed) for t in tasks], cancel,
                lambda done: report(sizes[done - 1] / max(len(todo), 1)))
    graph.regroup()


def _tasks(first, todo, nparts, workers: int) -> list[np.ndarray]:
    """Cells to split as rows (start, end, parts), grouped into tasks of similar size."""
    rows = np.stack([first[todo], first[todo + 1], nparts[todo]], axis=1)
    if len(rows) <= 1:
        return [rows] if len(rows) else []
    sizes = np.cumsum(rows[:, 1] - rows[:, 0])
    per_task = max(1, sizes[-1] // (workers * TASKS_PER_WORKER))
    cuts = np.flatnonzero(np.diff(sizes // per_task)) + 1
    return np.split(rows, cuts)


def _run_task(job) -> int:
    import pymetis     # here, not at the top: loading a saved .rlp needs no METIS
    name, rows, seed = job
    g = shared(name)
    options = pymetis.Options(seed=seed)
    for a, b, k in rows.tolist():
        xadj, adj, ew = induced(g.xadj, g.adj, g.eweight, g.order, g.rank, a, b)
        vw = None if g.vweight is None else g.vweight[g.order[a:b]]
        _, parts = pymetis.part_graph(int(k), pymetis.CSRAdjacency(xadj, adj), vweights=vw,
                                      eweights=ew, options=options)
        g.part[a:b] = parts
    return len(rows)


def induced(xadj, adj, eweight, order, rank, a: int, b: int):
    """The subgraph induced by the ranks a..b-1, in local ids (rank - a): int32
    ``(xadj, adj, edge weights or None)``."""
    has_w = eweight is not None
    sx, sa, sw = _induced(xadj, adj, eweight if has_w else np.zeros(1, np.int32), order, rank,
                          a, b, has_w)
    return sx, sa, (sw if has_w else None)


@numba.njit(cache=True)
def _induced(xadj, adj, eweight, order, rank, a, b, has_w):
    m = 0
    for i in range(a, b):
        u = order[i]
        for e in range(xadj[u], xadj[u + 1]):
            if a <= rank[adj[e]] < b:
                m += 1
    sx = np.zeros(b - a + 1, dtype=np.int32)
    sa = np.empty(m, dtype=np.int32)
    sw = np.empty(m if has_w else 0, dtype=np.int32)
    m = 0
    for i in range(a, b):
        u = order[i]
        for e in range(xadj[u], xadj[u + 1]):
            r = rank[adj[e]]
            if a <= r < b:
                sa[m] = r - a
                if has_w:
                    sw[m] = eweight[e]
                m += 1
        sx[i - a + 1] = m
    return sx, sa, sw


def warm_up() -> None:
    """Compile (or load) the kernels the workers call, before they fork."""
    xadj, adj = np.array([0, 1, 2], np.int64), np.array([1, 0], np.int32)
    order, part = np.arange(2, dtype=np.int32), np.zeros(2, np.int32)
    induced(xadj, adj, None, order, order.copy(), 0, 2)
    induced(xadj, adj, np.ones(2, np.int32), order, order.copy(), 0, 2)
    _regroup(np.array([0, 2], np.int64), order, order.copy(), part)
    _order_by_cell(part, order, order.copy())


@numba.njit(cache=True)
def _order_by_cell(cell, order, rank):
    n = cell.size
    cells = 0
    for v in range(n):
        cells = max(cells, cell[v] + 1)
    first = np.zeros(cells + 1, dtype=np.int64)
    for v in range(n):
        first[cell[v] + 1] += 1
    for c in range(cells):
        first[c + 1] += first[c]
    fill = first[:-1].copy()
    for v in range(n):
        order[fill[cell[v]]] = v
        rank[v] = fill[cell[v]]
        fill[cell[v]] += 1
    return first


@numba.njit(cache=True)
def _regroup(first, order, rank, part):
    cells = first.size - 1
    n = order.size
    new_first = np.empty(n + 1, dtype=np.int64)
    new_first[0] = 0
    out = 0
    scratch = np.empty(n, dtype=np.int32)
    for c in range(cells):
        a, b = first[c], first[c + 1]
        k = 0
        for i in range(a, b):
            k = max(k, part[i] + 1)
        count = np.zeros(k + 1, dtype=np.int64)
        for i in range(a, b):
            count[part[i] + 1] += 1
        for p in range(k):
            if count[p + 1] > 0:            # an empty part makes no cell
                out += 1
                new_first[out] = a + count[p] + count[p + 1]
            count[p + 1] += count[p]
        for i in range(a, b):               # stable counting sort of the range by part
            scratch[a + count[part[i]]] = order[i]
            count[part[i]] += 1
    order[:] = scratch
    for i in range(n):
        rank[order[i]] = i
    return new_first[:out + 1].copy()
