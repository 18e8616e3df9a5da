"""The CRP partition at scale (issue #37, part 3): time, time per level, boundary
arcs per level and peak memory on DIMACS NY and on generated networks.

    ROUTELAB_PARTITION_GRAPHS=NY,1M,4M,24M python scripts/bench.py --only partition_scale

The graphs are named by ROUTELAB_PARTITION_GRAPHS (default NY,1M): NY, or a node
count with an optional k/M suffix (a generated network, seed 1).
ROUTELAB_PARTITION_WORKERS sets the worker processes (default: the usable cores).
Needs numpy, scipy, numba and pymetis only (no Qt, shapely or osmium). The kernels
are compiled on a small graph first, untimed.
Former figures, for comparison (the METIS recursion with one sequential call per
cell, replaced by this partitioner): NY boundary arcs [88146, 22832, 5492, 1036];
generated 1 M [361917, 122851, 39329, 11835, 3045] in 12.5 s on 2 cores; 4 M 68 s
on the 16-core GPU host.
"""
from __future__ import annotations

import os
import resource
import time

from benchmarks.common import DATA

HEADER = ["graph", "workers", "partition", "per level (top first)", "boundary arcs per level",
          "cells per level", "peak RSS"]


def bench_partition_scale() -> tuple[list[str], list[list[str]]]:
    names = os.environ.get("ROUTELAB_PARTITION_GRAPHS", "NY,1M").split(",")
    workers = os.environ.get("ROUTELAB_PARTITION_WORKERS")
    _warm_up()
    rows = []
    for name in (n.strip() for n in names if n.strip()):
        g, label = _graph(name)
        if g is None:
            rows.append([name, "", "missing", "", "", "", "data file absent"])
            continue
        rows.append(_row(label, g, int(workers) if workers else None))
        print(" | ".join(rows[-1]), flush=True)      # progress, in case of a time limit
    return HEADER, rows


def _warm_up() -> None:
    """Compile (or load from Numba's cache) the partitioner's kernels, untimed."""
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.top_split import COARSE_MIN_NODES
    from engine.generate.network import generate_road_network
    partition_graph(generate_road_network(COARSE_MIN_NODES + 1000, seed=1), workers=1)


def _graph(name: str):
    if name.upper() == "NY":
        from engine.io import load
        path = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
        return (load([path]), "DIMACS NY (distance)") if path.exists() else (None, name)
    scale = {"K": 1_000, "M": 1_000_000}.get(name[-1].upper(), 1)
    n = int(float(name[:-1] if scale > 1 else name) * scale)
    from engine.generate.network import generate_road_network
    t0 = time.perf_counter()
    g = generate_road_network(n, seed=1)
    return g, f"generated (made in {time.perf_counter() - t0:.0f} s)"


def _row(label: str, g, workers) -> list[str]:
    from engine.crp.partition.workers import default_workers
    from engine.crp.partition.nested import partition_graph
    marks = []

    def progress(fraction, message):
        if not marks or marks[-1][1] != message:
            marks.append((time.perf_counter(), message))
    t0 = time.perf_counter()
    p = partition_graph(g, seed=0, workers=workers, progress=progress)
    seconds = time.perf_counter() - t0
    marks.append((time.perf_counter(), "end"))
    spans = list(zip(marks, marks[1:]))
    steps = [f"{b - a:.1f}" for (a, m), (b, _) in spans if m.startswith("partitioning level")]
    prep = ", ".join(f"{m.split(': ')[1]} {b - a:.1f}" for (a, m), (b, _) in spans
                     if m.startswith("preparing"))
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1e6
    cells = [p.num_cells(level) for level in range(p.num_levels)]
    return [f"{label}, {g.num_nodes:,} nodes", str(workers or default_workers()),
            f"{seconds:.1f} s (prepare: {prep} s)", " / ".join(steps) + " s",
            f"{p.boundary_arcs(g)} for 2^{list(p.cell_sizes_log2)}", str(cells),
            f"{peak:.1f} GB (largest process)"]


SECTIONS = {"partition_scale": ("CRP partition at scale: time, boundary arcs per level, memory",
                                bench_partition_scale)}
