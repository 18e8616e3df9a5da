"""DIMACS shortest-path files: ``.gr`` arcs (``a u v w``) and ``.co`` coordinates.

The parser works on the whole byte buffer with NumPy (line starts, token starts,
digit place values), so NY's 734 k arcs parse in tens of milliseconds; only when
something is wrong does it look at single lines, to name the first bad one.
Several ``.gr`` files with the same arcs become one graph with several metrics.
"""
from __future__ import annotations

import bz2
import gzip
import re
import zlib
from pathlib import Path

import numpy as np

from engine.graph import GraphError, RoadGraph
from engine.io.errors import LoadError
from engine.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

# Metric names by the DIMACS USA naming scheme (USA-road-d.NY.gr = distance).
_METRIC_BY_LETTER = {"d": "distance", "t": "travel_time"}
_USA_NAME = re.compile(r"^(?P<pre>.*-)(?P<letter>[dt])(?P<post>\..*)$")
MAX_DIGITS = 18  # keeps every number inside int64


def read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise LoadError(path, f"cannot read: {e.strerror or e}") from None
    name = path.name.lower()
    try:
        if name.endswith(".gz"):
            return gzip.decompress(raw)
        if name.endswith(".bz2"):
            return bz2.decompress(raw)
    except (OSError, EOFError, zlib.error, ValueError) as e:
        raise LoadError(path, f"truncated or corrupt compressed file ({e})") from None
    return raw


class _Lines:
    """Line layout of a text buffer: start/end offsets and first byte of each line."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path = path
        self.buf = np.frombuffer(data, dtype=np.uint8)
        if np.any(self.buf == 0):
            first = int(np.count_nonzero(self.buf[: int(np.argmax(self.buf == 0))] == 10)) + 1
            raise LoadError(path, "binary data, not a DIMACS text file", line=first)
        newlines = np.flatnonzero(self.buf == 10)
        self.start = np.concatenate([[0], newlines + 1])
        self.end = np.concatenate([newlines, [self.buf.size]])
        if self.start[-1] == self.buf.size:  # file ends with a newline: no last line
            self.start, self.end = self.start[:-1], self.end[:-1]
        padded = np.concatenate([self.buf, [10]])
        self.first = padded[self.start]

    def text(self, i: int) -> str:
        return bytes(self.buf[self.start[i]:self.end[i]]).decode("utf-8", "replace").strip()

    def line_of(self, byte_pos: int) -> int:
        return int(np.searchsorted(self.start, byte_pos, side="right")) - 1

    def error(self, i: int, reason: str) -> LoadError:
        return LoadError(self.path, reason, line=int(i) + 1)


def _parse_records(lines: _Lines, tag: str, problem_prefix: str, fields: int,
                   signed: bool) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Return (values [k, fields] int64, line index of each record, the 'p' line's words).

    Every line must be a comment (``c``), blank, the single problem line or a
    record starting with ``tag``; records hold exactly ``fields`` integers.
    """
    first = lines.first
    blank = np.isin(first, (10, 13, 32, 9)) & (lines.end - lines.start <= 1) | \
        (lines.end == lines.start)
    is_rec = first == ord(tag)
    is_p = first == ord("p")
    other = ~(blank | is_rec | is_p | (first == ord("c")))
    if other.any():
        i = int(np.argmax(other))
        raise lines.error(i, f"unexpected line {lines.text(i)[:40]!r} "
                             f"(expected 'c', 'p' or '{tag}' lines)")
    p_lines = np.flatnonzero(is_p)
    if p_lines.size == 0:
        raise LoadError(lines.path, f"no problem line ('{problem_prefix} N ...')")
    if p_lines.size > 1:
        raise lines.error(p_lines[1], "second problem line")
    p_words = lines.text(p_lines[0]).split()
    rec_lines = np.flatnonzero(is_rec)
    if rec_lines.size and rec_lines[0] < p_lines[0]:
        raise lines.error(rec_lines[0], f"'{tag}' line before the problem line")
    return _parse_int_fields(lines, rec_lines, tag, fields, signed), rec_lines, p_words


def _parse_int_fields(lines: _Lines, rec_lines: np.ndarray, tag: str, fields: int,
                      signed: bool) -> np.ndarray:
    """Integer parsing of the record lines: [k, fields] int64.

    Non-record lines and tag bytes are blanked, the byte classes are checked with a
    lookup table, tokens are counted per line, and NumPy's C text reader converts
    the numbers once the buffer is known to hold nothing else.
    """
    k = rec_lines.size
    if k == 0:
        return np.zeros((0, fields), dtype=np.int64)
    c = lines.buf.copy()
    other = np.ones(lines.start.size, dtype=bool)
    other[rec_lines] = False
    c[_ragged_positions(lines.start[other], lines.end[other])] = 32
    c[lines.start[rec_lines]] = 32

    cls = _BYTE_CLASS[c]
    bad = np.flatnonzero(cls == 0)
    if bad.size:
        i = lines.line_of(bad[0])
        raise lines.error(i, f"non-numeric value in {lines.text(i)[:60]!r}")
    in_tok = cls >= 2
    edges = np.flatnonzero(in_tok[1:] != in_tok[:-1]) + 1
    if in_tok[0]:
        edges = np.concatenate([[0], edges])
    if in_tok[-1]:
        edges = np.concatenate([edges, [c.size]])
    tok_start, tok_end = edges[0::2], edges[1::2]
    per_line = np.searchsorted(tok_start, lines.end[rec_lines]) - \
        np.searchsorted(tok_start, lines.start[rec_lines])
    wrong = np.flatnonzero(per_line != fields)
    if wrong.size:
        i = rec_lines[wrong[0]]
        raise lines.error(i, f"expected {fields} numbers after '{tag}', "
                             f"got {lines.text(i)[:60]!r}")
    too_long = np.flatnonzero(tok_end - tok_start > MAX_DIGITS)
    if too_long.size:
        i = lines.line_of(tok_start[too_long[0]])
        raise lines.error(i, f"number too large in {lines.text(i)[:60]!r}")
    minus = np.flatnonzero(c == 45)
    if minus.size:
        # A sign must open a token and be followed by a digit.
        pos = np.minimum(np.searchsorted(tok_start, minus), tok_start.size - 1)
        at_start = tok_start[pos] == minus
        digit_next = cls[np.minimum(minus + 1, c.size - 1)] == 3
        misplaced = ~(at_start & digit_next & (minus + 1 < c.size))
        if misplaced.any() or not signed:
            pos = minus[np.argmax(misplaced)] if misplaced.any() else minus[0]
            i = lines.line_of(pos)
            reason = "malformed number" if misplaced.any() else "negative value"
            raise lines.error(i, f"{reason} in {lines.text(i)[:60]!r}")
    values = np.fromstring(c.tobytes(), dtype=np.int64, sep=" ")
    if values.size != k * fields:  # cannot happen after the checks above
        raise LoadError(lines.path, "could not read all numbers")
    return values.reshape(k, fields)


# 0 = not allowed, 1 = whitespace, 2 = minus sign, 3 = digit
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[[9, 10, 13, 32]] = 1
_BYTE_CLASS[45] = 2
_BYTE_CLASS[48:58] = 3


def _ragged_positions(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """All positions in the half-open ranges [starts[i], ends[i])."""
    lengths = ends - starts
    total = int(lengths.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets


def _problem_size(lines: _Lines, words: list[str], expect: list[str], count: int) -> list[int]:
    """Check the problem line ``p <expect...> <count ints>`` and return its integers."""
    p_index = int(np.flatnonzero(lines.first == ord("p"))[0])
    head_ok = words[1:1 + len(expect)] == expect
    nums = words[1 + len(expect):]
    if not head_ok or len(nums) != count or not all(w.isdigit() for w in nums):
        raise lines.error(p_index, f"malformed problem line {' '.join(words)!r} "
                                   f"(expected 'p {' '.join(expect)}{' N' * count}')")
    return [int(w) for w in nums]


def parse_gr(path: Path, data: bytes | None = None):
    """Parse a ``.gr`` file: returns (num_nodes, tail, head, weight) with 0-based ids."""
    lines = _Lines(path, read_bytes(path) if data is None else data)
    recs, rec_lines, words = _parse_records(lines, "a", "p sp", 3, signed=True)
    n, m = _problem_size(lines, words, ["sp"], 2)
    p_index = int(np.flatnonzero(lines.first == ord("p"))[0])
    if recs.shape[0] != m:
        raise lines.error(p_index, f"the problem line announces {m} arcs, "
                                   f"the file has {recs.shape[0]}")
    ids = recs[:, :2]
    bad = (ids < 1) | (ids > n)
    if bad.any():
        r = int(np.argmax(bad.any(axis=1)))
        raise lines.error(rec_lines[r], f"node id out of range 1..{n}: {lines.text(rec_lines[r])!r}")
    weights = recs[:, 2]
    if np.any(weights < 0):
        r = int(np.argmax(weights < 0))
        raise lines.error(rec_lines[r], f"negative weight: {lines.text(rec_lines[r])!r}")
    if np.any(weights > np.iinfo(np.int32).max):
        r = int(np.argmax(weights > np.iinfo(np.int32).max))
        raise lines.error(rec_lines[r], f"weight above 2^31-1: {lines.text(rec_lines[r])!r}")
    return n, (ids[:, 0] - 1).astype(np.int32), (ids[:, 1] - 1).astype(np.int32), weights.astype(np.int32)


def parse_co(path: Path, num_nodes: int):
    """Parse a ``.co`` file for a graph of ``num_nodes``: returns (lon, lat) in degrees."""
    lines = _Lines(path, read_bytes(path))
    recs, rec_lines, words = _parse_records(lines, "v", "p aux sp co", 3, signed=True)
    (n,) = _problem_size(lines, words, ["aux", "sp", "co"], 1)
    p_index = int(np.flatnonzero(lines.first == ord("p"))[0])
    if n != num_nodes:
        raise lines.error(p_index, f"coordinates for {n} nodes, but the graph has {num_nodes}")
    if recs.shape[0] != n:
        raise lines.error(p_index, f"the problem line announces {n} nodes, "
                                   f"the file has {recs.shape[0]} 'v' lines")
    ids = recs[:, 0]
    bad = (ids < 1) | (ids > n)
    if bad.any():
        r = int(np.argmax(bad))
        raise lines.error(rec_lines[r], f"node id out of range 1..{n}")
    seen = np.bincount(ids - 1, minlength=n)
    if np.any(seen != 1):
        node = int(np.argmax(seen != 1)) + 1
        dup = np.flatnonzero(ids == node)
        where = rec_lines[dup[1]] if dup.size > 1 else None
        raise LoadError(path, f"node {node} has {int(seen[node - 1])} coordinate lines "
                              "(expected exactly one)", line=None if where is None else int(where) + 1)
    lon = np.empty(n)
    lat = np.empty(n)
    lon[ids - 1] = recs[:, 1] / 1e6   # DIMACS coordinates are micro-degrees
    lat[ids - 1] = recs[:, 2] / 1e6
    if np.any(np.abs(lat) > 90) or np.any(np.abs(lon) > 180):
        raise LoadError(path, "coordinates outside lon -180..180 / lat -90..90 "
                              "(expected micro-degrees)")
    return lon, lat


def metric_name(path: Path) -> str:
    match = _USA_NAME.match(path.name)
    return _METRIC_BY_LETTER[match["letter"]] if match else "weight"


def companions(gr: Path) -> tuple[list[Path], Path | None]:
    """Files beside a ``.gr`` that belong to it: other metrics (``-d``/``-t``) and the ``.co``."""
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


def load_dimacs(paths, progress: ProgressFn = no_progress,
                cancel: CancelToken = NEVER_CANCELLED, find_companions: bool = True) -> RoadGraph:
    """One graph from ``.gr`` files with the same arcs (one metric each) and a ``.co``."""
    paths = [Path(p) for p in paths]
    grs = [p for p in paths if re.search(r"\.gr(\.gz)?$", p.name.lower())]
    cos = [p for p in paths if re.search(r"\.co(\.gz)?$", p.name.lower())]
    if not grs:
        raise LoadError(paths[0], "coordinates alone are not a graph: give a .gr file too")
    if len(cos) > 1:
        raise LoadError(cos[1], "more than one .co file given")
    if find_companions:
        siblings, co = companions(grs[0])
        grs += [s for s in siblings if s.resolve() not in {g.resolve() for g in grs}]
        if not cos and co is not None:
            cos = [co]

    metrics: dict[str, np.ndarray] = {}
    n = tail = head = None
    steps = len(grs) + len(cos)
    for k, gr in enumerate(grs):
        cancel.check()
        progress(k / steps, f"reading {gr.name}")
        n_k, t_k, h_k, w_k = parse_gr(gr)
        if tail is None:
            n, tail, head = n_k, t_k, h_k
        elif n_k != n or not (np.array_equal(t_k, tail) and np.array_equal(h_k, head)):
            raise LoadError(gr, f"its arcs differ from those of {grs[0].name}: files of "
                                "one graph must list the same arcs in the same order")
        name = metric_name(gr)
        while name in metrics:
            name += "_2"
        metrics[name] = w_k
    lon = lat = None
    if cos:
        cancel.check()
        progress(len(grs) / steps, f"reading {cos[0].name}")
        lon, lat = parse_co(cos[0], n)
    cancel.check()
    progress(0.99, "building the graph")
    try:
        return RoadGraph.from_arcs(
            n, tail, head, metrics, node_id=np.arange(1, n + 1, dtype=np.int64),
            lon=lon, lat=lat, source=" + ".join(p.name for p in grs + cos))
    except GraphError as e:
        raise LoadError(grs[0], str(e)) from None
