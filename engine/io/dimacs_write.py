"""Writing DIMACS shortest-path files (``.gr`` arcs, ``.co`` coordinates) of a RoadGraph,
which engine.io.dimacs reads back.

Which files: ``NAME.gr`` gets the graph's first metric and ``NAME.co`` its coordinates.
A name of the DIMACS USA scheme (``PREFIX-d.REST.gr`` or ``PREFIX-t.REST.gr``, as
``USA-road-d.NY.gr``) gets both metrics, distance in the ``-d`` file and travel time in
the ``-t`` file, with the coordinates in ``PREFIX-d.REST.co``: the loader finds the
siblings of either file, so ``routelab info PREFIX-d.REST.gr`` has both metrics again.

Arcs are written in the graph's CSR order with 1-based node ids (the loader numbers
nodes 1..n, whatever the graph's own ids were), coordinates in micro-degrees (the
DIMACS precision: 1e-6 degrees, about 0.1 m) rounded to the nearest. Text is made in
blocks of ``BLOCK_ROWS`` rows (engine.io.text_rows), several at once in worker threads
while the one before is written, and each file is saved atomically,
so memory stays a few tens of MB at any size and a failed write leaves no file.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from engine.core.graph import RoadGraph
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.io.atomic import atomic_write
from engine.io.text_rows import Int, in_order, rows

BLOCK_ROWS = 1 << 17           # rows per block: ~4 MB of text, ~15 MB while it is made
_USA_NAME = re.compile(r"^(?P<pre>.*-)(?P<letter>[dt])(?P<post>\.[^/]*)\.gr$")
_LETTER_METRIC = {"d": "distance", "t": "travel_time"}


def dimacs_targets(out, graph_metrics) -> tuple[dict[str, Path], Path]:
    """({metric: .gr path}, .co path) that ``write_dimacs(graph, out)`` writes for a graph
    with ``graph_metrics`` (names, in order). ValueError when ``out`` is not a ``.gr``."""
    out = Path(out)
    if not out.name.lower().endswith(".gr"):
        raise ValueError(f"{out}: a DIMACS graph file ends with .gr")
    match = _USA_NAME.match(out.name)
    metrics = list(graph_metrics)
    if match and all(m in metrics for m in _LETTER_METRIC.values()):
        grs = {metric: out.with_name(f"{match['pre']}{letter}{match['post']}.gr")
               for letter, metric in _LETTER_METRIC.items()}
        return grs, out.with_name(f"{match['pre']}d{match['post']}.co")
    return {metrics[0]: out}, out.with_name(out.name[:-3] + ".co")


def write_dimacs(graph: RoadGraph, out, *, comment: str = "", progress: ProgressFn = no_progress,
                 cancel: CancelToken = NEVER_CANCELLED, inputs=()) -> list[Path]:
    """Write the files of ``dimacs_targets(out, graph.metrics)``; returns their paths (a graph
    without coordinates gets no ``.co``)."""
    grs, co = dimacs_targets(out, graph.metrics)
    steps = len(grs) + (graph.lon is not None)
    written = []
    for k, (metric, path) in enumerate(grs.items()):
        progress(k / steps, f"writing {path.name}")
        write_gr(graph, metric, path, comment=comment, cancel=cancel, inputs=inputs)
        written.append(path)
    if graph.lon is not None:
        progress(len(grs) / steps, f"writing {co.name}")
        write_co(graph, co, comment=comment, cancel=cancel, inputs=inputs)
        written.append(co)
    return written


def _comments(comment: str) -> bytes:
    return b"".join(b"c " + line.encode() + b"\n" for line in comment.splitlines() if line)


def write_gr(graph: RoadGraph, metric: str, path, *, comment: str = "",
             cancel: CancelToken = NEVER_CANCELLED, inputs=()) -> None:
    """``a tail head weight`` lines of one metric, in CSR order, 1-based ids."""
    n, m = graph.num_nodes, graph.num_arcs
    weight = graph.metrics[metric]

    def block(a0: int) -> bytes:
        a1 = min(m, a0 + BLOCK_ROWS)
        tail = np.searchsorted(graph.first_out, np.arange(a0, a1), side="right")  # 1-based
        return rows(b"a ", Int(tail), b" ", Int(graph.head[a0:a1].astype(np.int64) + 1),
                    b" ", Int(weight[a0:a1]), b"\n")

    with atomic_write(path, inputs=inputs) as f:
        f.write(_comments(comment) + f"c metric: {metric}\np sp {n} {m}\n".encode())
        for text in in_order(block, range(0, m, BLOCK_ROWS)):
            cancel.check()
            f.write(text)


def write_co(graph: RoadGraph, path, *, comment: str = "",
             cancel: CancelToken = NEVER_CANCELLED, inputs=()) -> None:
    """``v id lon lat`` lines in micro-degrees, 1-based ids."""
    n = graph.num_nodes

    def block(v0: int) -> bytes:
        v1 = min(n, v0 + BLOCK_ROWS)
        lon = np.rint(graph.lon[v0:v1] * 1e6).astype(np.int64)
        lat = np.rint(graph.lat[v0:v1] * 1e6).astype(np.int64)
        return rows(b"v ", Int(np.arange(v0 + 1, v1 + 1)), b" ", Int(lon), b" ", Int(lat), b"\n")

    with atomic_write(path, inputs=inputs) as f:
        f.write(_comments(comment) + f"p aux sp co {n}\n".encode())
        for text in in_order(block, range(0, n, BLOCK_ROWS)):
            cancel.check()
            f.write(text)
