"""The metric-independent nested partition of CRP (Delling, Kobitzsch, Werneck):
level l splits the nodes into cells of at most about 2^cell_sizes_log2[l] nodes,
each cell inside one cell of the level above.

``partition_graph`` runs top-down on the simple undirected graph
(engine.crp.partition.undirected). The top level splits the whole graph into
ceil(n / 2^top) cells: on a large graph through its cluster graph, the best of
several METIS tries, refined node by node (engine.crp.partition.top_split); on a
small one by METIS directly. Every level below splits each cell's induced subgraph
into ceil(size / 2^next) parts with METIS, the cells in parallel on forked workers
(engine.crp.partition.cell_split). Mezzanine levels (``query_level`` False) are
used by customization only. Cells are numbered by (parent, part), so the subcells
of a parent have contiguous ids, which the overlay relies on.

Issue #37: the former all-METIS recursion, one sequential METIS call per cell, took
12.5 s at 1 M nodes on 2 cores and 68 s at 4 M on 16; its top split alone grows to
most of a minute at 24 M. The cells of NY: see docs/benchmarks.md, section
partition_scale (scripts/benchmarks/partition_scale.py).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.io.atomic import atomic_write
from engine.io.errors import LoadError
from engine.io.npz import read_meta, read_npz
from engine.io.partition_file import (MAX_LOG2, PARTITION_KEYS, check_meta, check_partition,
                                      graph_key, max_log2)
from engine.core.progress import no_progress
from engine.crp.partition.cell_split import LevelGraph, split_cells, warm_up
from engine.crp.partition.workers import Workers, check_cancel, default_workers
from engine.crp.partition.top_split import COARSE_MIN_NODES, cluster_graph, split_top
from engine.crp.partition.undirected import undirected_csr

FORMAT = "routelab-partition"
VERSION = 1
QUERY_SIZES = (8, 11, 14, 17)     # cells of 256 .. 131072 nodes
MEZZANINE = 5                     # cells of 32 nodes, below the lowest query level
MAX_SEED = 2**31 - 1              # METIS seeds its generator from a C int: 2^32 gives seed 0's cells
POOL_MIN_NODES = 200_000          # smaller graphs split in this process (a fork costs more)
_ARRAYS = ("cell_sizes_log2", "query_level", "cell_of")


@dataclass(frozen=True, eq=False)
class Partition:
    cell_sizes_log2: tuple[int, ...]   # strictly ascending, one per level
    query_level: np.ndarray            # bool [L]; False: a mezzanine level
    cell_of: np.ndarray                # int32 [L, n] dense cell ids per level, nested
    seed: int = 0
    graph_key: str = ""                # engine.io.partition_file.graph_key of its graph
    partition_ms: float = 0.0
    source: str = ""                   # the file it was loaded from ("": made here)

    @property
    def num_levels(self) -> int:
        return len(self.cell_sizes_log2)

    @property
    def num_nodes(self) -> int:
        return int(self.cell_of.shape[1])

    def num_cells(self, level: int) -> int:
        cell = self.cell_of[level]
        return int(cell.max()) + 1 if cell.size else 0

    def boundary_arcs(self, graph) -> list[int]:
        """Per level, the arcs whose tail and head lie in different cells."""
        tail, head = graph.tail, graph.head
        return [int(np.count_nonzero(c[tail] != c[head])) for c in self.cell_of]

    def matches(self, graph) -> bool:
        return graph.num_nodes == self.num_nodes and graph_key(graph) == self.graph_key

    def summary(self, graph=None) -> dict:
        """Levels, sizes, cells, mezzanine flags and time; boundary arcs given the graph."""
        s = {"levels": self.num_levels, "cell_sizes_log2": list(self.cell_sizes_log2),
             "cells": [self.num_cells(level) for level in range(self.num_levels)],
             "mezzanine": [not q for q in self.query_level.tolist()],
             "seed": self.seed, "partition_ms": round(self.partition_ms, 2)}
        if graph is not None:
            s["boundary_arcs"] = self.boundary_arcs(graph)
        return s

    # ----------------------------------------------------------- saving
    def save(self, path) -> Path:
        path = Path(path)
        meta = {"format": FORMAT, "version": VERSION, "num_nodes": self.num_nodes,
                "graph_key": self.graph_key, "seed": self.seed, "partition_ms": self.partition_ms}
        arrays = {"cell_sizes_log2": np.asarray(self.cell_sizes_log2, dtype=np.int32),
                  "query_level": self.query_level, "cell_of": self.cell_of,
                  "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
        with atomic_write(path) as f:   # the old file stays if the write fails
            np.savez(f, **arrays)
        return path

    @classmethod
    def load(cls, path, graph) -> "Partition":
        """A saved partition of ``graph``, refused (LoadError naming the file) unless it
        passes engine.io.partition_file; never unpickles."""
        path = Path(path)
        what = "RouteLab partition"
        arrays = read_npz(path, what)
        meta = read_meta(path, arrays, FORMAT, VERSION, what, PARTITION_KEYS)
        missing = [name for name in _ARRAYS if name not in arrays]
        if missing:
            raise LoadError(path, f"damaged partition: {missing[0]} is missing")
        check_meta(path, meta, graph)
        check_partition(path, num_nodes=graph.num_nodes, **{k: arrays[k] for k in _ARRAYS})
        return _frozen(arrays["cell_sizes_log2"].tolist(), arrays["query_level"],
                       arrays["cell_of"], meta["seed"], meta["graph_key"],
                       float(meta["partition_ms"]), source=str(path))


def _frozen(sizes, flags, cell_of, seed, key, ms, source: str = "") -> Partition:
    flags, cell_of = np.array(flags, dtype=bool), np.ascontiguousarray(cell_of, dtype=np.int32)
    flags.setflags(write=False)
    cell_of.setflags(write=False)
    return Partition(tuple(int(k) for k in sizes), flags, cell_of, int(seed), key, ms, source)


def partition_report(graph, partition: Partition) -> dict:
    """What ``info`` shows of a partition: its summary with boundary arcs per level."""
    if not partition.matches(graph):
        raise ValueError("the partition belongs to another graph; partition this one again")
    return partition.summary(graph)


# ------------------------------------------------------------------ levels
def default_levels(n: int) -> tuple[int, ...]:
    """Query levels for ``n`` nodes: the sizes of QUERY_SIZES with at least 4 cells,
    or one level below n for small graphs."""
    keep = tuple(k for k in QUERY_SIZES if (4 << k) <= n)
    if keep:
        return keep
    return (max(1, min(QUERY_SIZES[0] - 1, int(math.floor(math.log2(n / 4))) if n >= 8 else 1)),)


def default_mezzanine(n: int, levels) -> tuple[int, ...]:
    return (MEZZANINE,) if MEZZANINE < min(levels) and (4 << MEZZANINE) <= n else ()


def merge_levels(n: int, levels=None, mezzanine=None) -> tuple[tuple[int, ...], np.ndarray]:
    """Query levels and mezzanine levels as one ascending list with query flags;
    ValueError names what is wrong with either."""
    levels = default_levels(n) if levels is None else tuple(levels)
    if mezzanine is None:
        mezzanine = default_mezzanine(n, levels) if levels else ()
    mezzanine = tuple(mezzanine)
    if not levels:
        raise ValueError("a partition needs at least one query level")
    top = max_log2(n)
    for what, sizes in (("levels", levels), ("mezzanine", mezzanine)):
        for k in sizes:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_LOG2:
                raise ValueError(f"{what}: {k!r} is not a cell size log2 in 1..{MAX_LOG2}")
            if k > top:
                raise ValueError(f"{what}: cells of 2^{k} = {1 << k:,} nodes exceed the graph "
                                 f"({n:,} nodes); the largest allowed is {top}")
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError(f"{what} {list(sizes)} must be strictly ascending")
    if set(levels) & set(mezzanine):
        raise ValueError(f"{sorted(set(levels) & set(mezzanine))} is both a query and a "
                         "mezzanine level")
    if mezzanine and max(mezzanine) > max(levels):
        raise ValueError("a mezzanine level must lie below the top query level")
    merged = sorted(set(levels) | set(mezzanine))
    return tuple(int(k) for k in merged), np.array([k in levels for k in merged], dtype=bool)


# ------------------------------------------------------------------ top-down
def partition_graph(graph, levels=None, mezzanine=None, seed: int = 0, progress=None,
                    cancel=None, workers: int | None = None) -> Partition:
    """Nested partition of ``graph`` (see the module docstring); the same graph and
    seed give bit-identical cells, for any ``workers`` (processes splitting cells in
    parallel; default: the usable cores from POOL_MIN_NODES nodes on, else 1).
    ``cancel`` is a CancelToken (or a callable that returns True to cancel);
    cancellation raises engine.core.progress.Cancelled."""
    start = time.perf_counter()
    seed = checked_seed(seed)
    n = graph.num_nodes
    sizes, flags = merge_levels(n, levels, mezzanine)
    progress = progress or no_progress
    if workers is None:
        workers = default_workers() if n >= POOL_MIN_NODES else 1
    check_cancel(cancel)
    progress(0.0, "preparing: undirected graph")
    xadj, adj = undirected_csr(graph)
    fine = LevelGraph(xadj, adj)
    top_parts = -(-n // (1 << sizes[-1]))
    coarse = top_parts > 1 and n >= COARSE_MIN_NODES
    if coarse:
        progress(0.03, "preparing: clusters for the top level")
    cluster_of, shared = (cluster_graph(xadj, adj, sizes[-1]) if coarse else (None, None))
    check_cancel(cancel)
    progress(0.09, f"preparing: kernels, {workers} worker processes" if workers > 1 else
             "preparing: kernels")
    warm_up()                                    # compile before the workers fork
    share = 0.9 / len(sizes)
    cell_of = np.empty((len(sizes), n), dtype=np.int32)
    with Workers(int(workers), {"fine": fine, "coarse": shared}) as pool:
        for i, level in enumerate(range(len(sizes) - 1, -1, -1)):
            def report(f, i=i, level=level):
                progress(0.1 + (i + f) * share, f"partitioning level {level} (cells of "
                                                f"2^{sizes[level]} nodes)")
            if coarse and i == 0:
                fine.part[:] = split_top(pool, xadj, adj, cluster_of, top_parts, seed, report,
                                         cancel)
                fine.regroup()                   # the order is still the identity
            else:
                split_cells(pool, "fine", 1 << sizes[level], seed, report, cancel)
            cell_of[level] = fine.cell_ids()
    progress(1.0, "partitioned")
    ms = (time.perf_counter() - start) * 1000.0
    return _frozen(sizes, flags, cell_of, seed, graph_key(graph), ms)


def checked_seed(seed) -> int:
    """``seed`` as an int in METIS's range 0..MAX_SEED; ValueError otherwise (a larger
    one would silently wrap to another seed's cells)."""
    value = None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        value = int(seed)
    elif isinstance(seed, (float, np.floating)) and math.isfinite(seed) and float(seed).is_integer():
        value = int(seed)
    if value is None or not 0 <= value <= MAX_SEED:
        try:
            shown = f"{float(seed):.6g}" if abs(float(seed)) >= 1e15 else str(seed)
        except (TypeError, ValueError, OverflowError):
            shown = repr(seed)
        raise ValueError(f"the seed must be a whole number in 0..{MAX_SEED:,} (METIS's range), "
                         f"got {shown}")
    return value
