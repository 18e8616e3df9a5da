"""DIMACS shortest-path files: ``.gr`` arcs (``a u v w``) and ``.co`` coordinates.

Files are streamed in blocks (engine.io.dimacs_text), so parsing memory is bounded
by the block size and cancel acts within a block. The counts a problem line
announces are checked against what the file can hold and against the memory budget
before anything of that size is allocated. Several ``.gr`` files with the same arcs
become one graph with several metrics; siblings of the DIMACS USA naming scheme
(``-d``/``-t`` metrics, the ``.co``) are used only when they match, and announced.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from engine.core.graph import GraphError, RoadGraph
from engine.io.dimacs_text import PARSE_THREADS, RecordStream, problem_numbers
from engine.io.errors import LoadError
from engine.io.limits import (CHUNK_BYTES, budget_binds, check_allocation, expansion_limit,
                              open_regular)
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from engine.core.units import infer_units

# Metric names by the DIMACS USA naming scheme (USA-road-d.NY.gr = distance).
_METRIC_BY_LETTER = {"d": "distance", "t": "travel_time"}
_USA_NAME = re.compile(r"^(?P<pre>.*-)(?P<letter>[dt])(?P<post>\..*)$")
MIN_RECORD_LINE = 8          # "a 1 2 3\n", "v 1 2 3\n": no record line is shorter
ISOLATED_NODES = 2**20       # nodes a .gr may declare beyond the 2 per arc its arcs can touch
BYTES_PER_ARC = 64           # parse blocks, the sort by tail, CSR arrays, one metric
BYTES_PER_NODE = 48          # first_out, node ids, coordinates
PARSE_BYTES_PER_BYTE = 12    # a block's line, token and number arrays, parsed or waiting
INT32_MAX = int(np.iinfo(np.int32).max)
SIBLING = " (sibling)"       # marks a sibling file in RoadGraph.source


class SiblingWarning(UserWarning):
    """A file beside the named one was not used because it does not match."""


def _max_records(path: Path) -> tuple[int, bool]:
    """How many record lines the file can hold, from its (bounded expanded) size, and
    whether the memory budget is what bounds it."""
    f, size = open_regular(path)
    f.close()
    return expansion_limit(path, size) // MIN_RECORD_LINE, budget_binds(path, size)


def _check_gr_counts(path: Path, n: int, m: int, line: int) -> None:
    most, by_budget = _max_records(path)
    if m > most and by_budget:            # the budget's message, not "the file cannot hold"
        check_allocation(max(n, 0) * BYTES_PER_NODE + m * BYTES_PER_ARC,
                         f"a graph of {n:,} nodes and {m:,} arcs", path)
    if m > most:
        raise LoadError(path, f"the problem line announces {m:,} arcs, but the file can hold "
                              f"at most {most:,}", line=line)
    if n > 2 * m + ISOLATED_NODES or n >= INT32_MAX:
        raise LoadError(path, f"the problem line announces {n:,} nodes for {m:,} arcs: at most "
                              f"{2 * m + ISOLATED_NODES:,} (2 per arc + {ISOLATED_NODES:,} "
                              "isolated) are accepted", line=line)
    check_allocation(n * BYTES_PER_NODE + m * BYTES_PER_ARC + _parse_bytes(path),
                     f"a graph of {n:,} nodes and {m:,} arcs", path)


def _parse_bytes(path: Path) -> int:
    """What the parser's blocks in flight take at most (2 x PARSE_THREADS blocks, never
    more than the file): about 0.8 GB with 8 threads, whatever the graph's size."""
    f, size = open_regular(path)
    f.close()
    return PARSE_BYTES_PER_BYTE * min(expansion_limit(path, size), 2 * PARSE_THREADS * CHUNK_BYTES)


def parse_gr(path: Path, cancel: CancelToken = NEVER_CANCELLED):
    """Parse a ``.gr`` file: returns (num_nodes, tail, head, weight) with 0-based ids.

    The arrays are allocated once from the problem line's count (checked against the
    file and the budget first) and filled block by block: no list of blocks joined at
    the end, which would hold every arc twice at the peak."""
    size: dict = {}
    out: list[np.ndarray] = []

    def on_problem(lines, index, words):
        size["n"], size["m"] = problem_numbers(lines, index, words, ["sp"], 2)
        _check_gr_counts(path, size["n"], size["m"], lines.number(index))
        out.extend(np.empty(size["m"], np.int32) for _ in range(3))

    def on_block(lines, rec_lines, recs):
        n, m = size["n"], size["m"]
        if stream.count > m:
            first_extra = rec_lines[recs.shape[0] - (stream.count - m)]
            raise LoadError(path, f"the problem line announces {m} arcs, the file has more "
                                  f"(line {lines.number(first_extra)})",
                            line=stream.p_line)
        _first_bad(lines, rec_lines, (recs[:, :2] < 1) | (recs[:, :2] > n),
                   f"node id out of range 1..{n}")
        _first_bad(lines, rec_lines, recs[:, 2] < 0, "negative weight")
        _first_bad(lines, rec_lines, recs[:, 2] > INT32_MAX, "weight above 2^31-1")
        at = slice(stream.count - recs.shape[0], stream.count)
        np.subtract(recs[:, 0], 1, out=out[0][at], casting="unsafe")
        np.subtract(recs[:, 1], 1, out=out[1][at], casting="unsafe")
        out[2][at] = recs[:, 2]

    stream = RecordStream(path, "a", "p sp", 3, True, on_problem, on_block)
    stream.run(cancel)
    if stream.count != size["m"]:
        raise LoadError(path, f"the problem line announces {size['m']} arcs, "
                              f"the file has {stream.count}", line=stream.p_line)
    tail, head, weight = out
    return size["n"], tail, head, weight


def _first_bad(lines, rec_lines, bad: np.ndarray, reason: str) -> None:
    if bad.any():
        r = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
        raise lines.error(rec_lines[r], f"{reason}: {lines.text(rec_lines[r])!r}")


def parse_co(path: Path, num_nodes: int, cancel: CancelToken = NEVER_CANCELLED):
    """Parse a ``.co`` file for a graph of ``num_nodes``: returns (lon, lat) in degrees.
    Each block goes straight to its nodes' places; a node that gets no line or two is
    found by counting."""
    out_lon, out_lat = np.empty(num_nodes), np.empty(num_nodes)
    seen = np.zeros(num_nodes, np.int32)

    def on_problem(lines, index, words):
        (n,) = problem_numbers(lines, index, words, ["aux", "sp", "co"], 1)
        if n != num_nodes:
            raise lines.error(index, f"coordinates for {n} nodes, but the graph has {num_nodes}")

    def on_block(lines, rec_lines, recs):
        if stream.count > num_nodes:
            raise LoadError(path, f"the problem line announces {num_nodes} nodes, the file "
                                  "has more 'v' lines", line=stream.p_line)
        _first_bad(lines, rec_lines, (recs[:, 0] < 1) | (recs[:, 0] > num_nodes),
                   f"node id out of range 1..{num_nodes}")
        # DIMACS coordinates are micro-degrees
        _first_bad(lines, rec_lines, (np.abs(recs[:, 1]) > 180_000_000) |
                   (np.abs(recs[:, 2]) > 90_000_000),
                   "coordinates outside lon -180..180 / lat -90..90 (expected micro-degrees)")
        node = recs[:, 0] - 1
        np.add.at(seen, node, 1)
        out_lon[node] = recs[:, 1] / 1e6
        out_lat[node] = recs[:, 2] / 1e6

    stream = RecordStream(path, "v", "p aux sp co", 3, True, on_problem, on_block)
    stream.run(cancel)
    if stream.count != num_nodes:
        raise LoadError(path, f"the problem line announces {num_nodes} nodes, "
                              f"the file has {stream.count} 'v' lines", line=stream.p_line)
    if np.any(seen != 1):
        k = int(np.argmax(seen != 1))
        raise LoadError(path, f"node {k + 1} has {int(seen[k])} coordinate lines "
                              "(expected exactly one)")
    return out_lon, out_lat


def metric_name(path: Path) -> str:
    match = _USA_NAME.match(path.name)
    return _METRIC_BY_LETTER[match["letter"]] if match else "weight"


def companions(gr: Path) -> tuple[list[Path], Path | None]:
    """Files beside a ``.gr`` that may belong to it: other metrics (``-d``/``-t``), the ``.co``."""
    def existing(name: str) -> Path | None:
        for candidate in (gr.with_name(name), gr.with_name(name + ".gz")):
            if candidate.exists():
                return candidate
        return None

    base = re.sub(r"\.gr(\.gz)?$", "", gr.name)
    siblings, co = [], existing(base + ".co")
    match = _USA_NAME.match(base)
    if match:
        for letter in _METRIC_BY_LETTER:
            if letter != match["letter"]:
                sibling = existing(f"{match['pre']}{letter}{match['post']}.gr")
                if sibling:
                    siblings.append(sibling)
        # Coordinates are published once, under the distance file's name.
        co = co or existing(f"{match['pre']}d{match['post']}.co")
    return siblings, co


def _skip(path: Path, reason: str) -> None:
    warnings.warn(SiblingWarning(f"{path}: sibling file not used: {reason}"), stacklevel=4)


def _sibling_metric(gr: Path, n: int, tail, head, cancel) -> np.ndarray | None:
    """A sibling ``.gr``'s weights when it has exactly the named file's arcs, else None."""
    try:
        n_k, t_k, h_k, w_k = parse_gr(gr, cancel)
    except LoadError as e:
        _skip(gr, e.reason if e.line is None else f"line {e.line}: {e.reason}")
        return None
    if n_k != n or not (np.array_equal(t_k, tail) and np.array_equal(h_k, head)):
        _skip(gr, "its arcs differ from those of the named file")
        return None
    return w_k


def _sibling_coordinates(co: Path, n: int, cancel):
    try:
        return parse_co(co, n, cancel)
    except LoadError as e:
        _skip(co, e.reason if e.line is None else f"line {e.line}: {e.reason}")
        return None


def _add_metric(metrics: dict, gr: Path, weights: np.ndarray) -> None:
    name = metric_name(gr)
    while name in metrics:
        name += "_2"
    metrics[name] = weights


def load_dimacs(paths, progress: ProgressFn = no_progress,
                cancel: CancelToken = NEVER_CANCELLED, siblings: bool = True) -> RoadGraph:
    """One graph from ``.gr`` files with the same arcs (one metric each) and a ``.co``.

    Named files win and must all be valid. With ``siblings``, the other metric and
    the ``.co`` beside the first ``.gr`` are added when they match the graph; one
    that does not is skipped with a ``SiblingWarning``. ``graph.source`` lists the
    files used, siblings marked " (sibling)".
    """
    paths = [Path(p) for p in paths]
    grs = [p for p in paths if re.search(r"\.gr(\.gz)?$", p.name.lower())]
    cos = [p for p in paths if re.search(r"\.co(\.gz)?$", p.name.lower())]
    if not grs:
        raise LoadError(paths[0], "coordinates alone are not a graph: give a .gr file too")
    if len(cos) > 1:
        raise LoadError(cos[1], "more than one .co file given")
    extra_grs, extra_co = companions(grs[0]) if siblings else ([], None)
    named = {g.resolve() for g in grs}
    extra_grs = [s for s in extra_grs if s.resolve() not in named]
    extra_co = None if cos else extra_co
    steps = len(grs) + len(extra_grs) + 1
    metrics: dict[str, np.ndarray] = {}
    used = []
    n = tail = head = None
    for k, gr in enumerate(grs + extra_grs):
        progress(k / steps, f"reading {gr.name}")
        if tail is None:
            n, tail, head, w = parse_gr(gr, cancel)
        elif k < len(grs):
            n_k, t_k, h_k, w = parse_gr(gr, cancel)
            if n_k != n or not (np.array_equal(t_k, tail) and np.array_equal(h_k, head)):
                raise LoadError(gr, f"its arcs differ from those of {grs[0].name}: files of "
                                    "one graph must list the same arcs in the same order")
        elif (w := _sibling_metric(gr, n, tail, head, cancel)) is None:
            continue
        _add_metric(metrics, gr, w)
        used.append(gr.name + (SIBLING if k >= len(grs) else ""))
    return _finish(grs[0], n, tail, head, metrics, cos, extra_co, used, progress, cancel)


def _finish(first: Path, n, tail, head, metrics, cos, extra_co, used, progress, cancel):
    lon = lat = None
    co = cos[0] if cos else extra_co
    if co is not None:
        progress(0.9, f"reading {co.name}")
        lonlat = parse_co(co, n, cancel) if cos else _sibling_coordinates(co, n, cancel)
        if lonlat is not None:
            lon, lat = lonlat
            used.append(co.name + ("" if cos else SIBLING))
    cancel.check()
    progress(0.99, "building the graph")
    try:
        graph = RoadGraph.from_arcs(
            n, tail, head, metrics, node_id=np.arange(1, n + 1, dtype=np.int64),
            lon=lon, lat=lat, source=" + ".join(used))
    except GraphError as e:
        raise LoadError(first, str(e)) from None
    graph.metric_units.update(infer_units(_unit_sample(graph)))    # DIMACS files do not say
    return graph


UNIT_SAMPLE_ARCS = 1 << 21


def _unit_sample(graph: RoadGraph):
    """What infer_units reads of ``graph``, with at most UNIT_SAMPLE_ARCS arcs evenly
    spread over it: the units come from medians and percentiles of arc costs per metre,
    which a few million arcs settle as well as 61 M do (whose float temporaries would
    take about 5 GB and half a minute). Graphs up to that size use every arc."""
    if graph.num_arcs <= UNIT_SAMPLE_ARCS:
        return graph
    arcs = np.linspace(0, graph.num_arcs - 1, UNIT_SAMPLE_ARCS).astype(np.int64)
    tail = np.searchsorted(graph.first_out, arcs, side="right") - 1
    return SimpleNamespace(
        has_coordinates=graph.has_coordinates, num_arcs=arcs.size, lon=graph.lon,
        lat=graph.lat, tail=tail, head=graph.head[arcs],
        metrics={k: w[arcs] for k, w in graph.metrics.items()},
        metric_units=graph.metric_units)
