"""Distance bins of a shortest-path tree, computed where its distances are.

The window colours the network by distance, one curve per bin (DESIGN principle 7).
Everything here runs on ``xp`` arrays (numpy or cupy), so a tree kept on the GPU
(engine.ch.phast_tree) is binned there and only one byte per node comes back.

Bins have a "nice" equal width in the unit a person reads (``factor`` turns raw
units into it: km, minutes), 12-16 of them for the reachable range. A few extreme
arcs (a long ferry to an island) must not stretch the bins until the land is one
colour: the distances are split where they jump by more than all the distance below
the jump and an eighth of the range; each part ("body") gets nice bins of its own
over its own range, as many as its share of the nodes earns (at least one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_BINS = 16
NICE_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)   # x 10^k: 12-16 bins for any range
MAX_COUNT = 254            # bins per tree: a node's bin is a uint8, 255 codes "unreached"


@dataclass(frozen=True)
class TreeBins:
    """The bins of one tree and every node's bin (``count`` for unreached nodes)."""
    lows: np.ndarray          # float64 [k], raw units: bin b is [lows[b], highs[b])
    highs: np.ndarray         # highs[b] == lows[b+1] but across a jump
    node_bin: np.ndarray      # uint8 [n] on the host

    @property
    def count(self) -> int:
        return int(self.lows.size)


def nice_step(raw: float) -> float:
    """The smallest NICE_STEPS x 10^k at least ``raw`` (> 0)."""
    exp = math.floor(math.log10(raw))
    for m in (*NICE_STEPS, 10):
        step = m * 10.0 ** exp
        if step >= raw * (1 - 1e-12):
            return step
    return 10.0 ** (exp + 1)


def bodies(xp, distance) -> list[tuple[float, float, int]]:
    """The reachable distances (``distance`` >= 0; int64, -1 unreached) as (low, high,
    nodes) parts, split where a distance jumps by more than all below it and an eighth
    of the whole range: the far side of a ferry. One sort on the backend; only the
    parts' ends come to the host."""
    d = xp.sort(distance[distance >= 0])
    if d.size == 0:
        return [(0.0, 0.0, 0)]
    first, last = int(d[0]), int(d[-1])
    jump = xp.diff(d)
    cut = xp.flatnonzero((jump > d[:-1]) & (jump.astype(np.float64) > (last - first) / 8))
    cut = cut[cut >= 1]                      # not after the source alone
    starts, ends = xp.concatenate([xp.zeros(1, dtype=cut.dtype), cut + 1]), \
        xp.concatenate([cut, xp.full(1, d.size - 1, dtype=cut.dtype)])
    lows, highs = _host(d[starts]), _host(d[ends])
    starts, ends = _host(starts), _host(ends)
    return [(float(a), float(b), int(j - i + 1)) for a, b, i, j in zip(lows, highs, starts, ends)]


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _step(low: float, high: float, bins: int, factor: float) -> float:
    """A nice width for at most ``bins`` equal bins over [low, high] (at least 1: costs are integral)."""
    return max(nice_step(max(high - low, 1.0) * factor / bins) / factor, 1.0)


def _edges(low: float, high: float, step: float) -> np.ndarray:
    """Edges of bins ``step`` wide, on multiples of it, covering [low, high]."""
    start = math.floor(low / step + 1e-9) * step
    count = max(1, math.ceil((high - start) / step - 1e-9))
    return start + np.arange(count + 1) * step


def bin_edges(parts, factor: float, max_bins: int = MAX_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(lows, highs) of bins of a nice width in the reading unit over ``parts`` (as
    ``bodies`` gives them; the first starts at the source, 0), shared by the parts as
    their nodes are."""
    parts = list(parts)
    parts[0] = (0.0, *parts[0][1:])
    total = sum(n for _, _, n in parts)
    share = [max(1, round(max_bins * n / max(total, 1))) if len(parts) > 1 else max_bins
             for _, _, n in parts]
    main = max(range(len(parts)), key=lambda j: parts[j][2])
    finest = _step(parts[main][0], parts[main][1], share[main], factor)   # no part finer: one precision
    lows, highs = [], []
    for (low, high, _), bins in zip(parts, share):
        edges = _edges(low, high, max(_step(low, high, bins, factor), finest))
        lows.append(edges[:-1])
        highs.append(edges[1:])
    return np.concatenate(lows), np.concatenate(highs)


def node_bins(xp, distance, lows: np.ndarray):
    """Each node's bin (uint8 on the backend): the last bin whose low is at most its
    distance (the first bin below all), ``len(lows)`` where unreached (-1).

    Distances are integers, so ``low <= d`` is ``ceil(low) <= d``: integral edges give
    exactly NumPy's float comparison of DistanceBins.of, on int64 distances on the device."""
    if not 0 < len(lows) <= MAX_COUNT:
        raise ValueError(f"{len(lows)} distance bins: between 1 and {MAX_COUNT} fit a byte per node")
    edges = xp.asarray(np.ceil(np.asarray(lows, dtype=np.float64)).astype(np.int64))
    b = xp.searchsorted(edges, distance, side="right") - 1
    b = xp.clip(b, 0, len(lows) - 1)
    return xp.where(distance < 0, len(lows), b).astype(np.uint8)


def segment_bins(node_bin: np.ndarray, end_a: np.ndarray, end_b: np.ndarray) -> np.ndarray:
    """A road's bin: that of its farther end (bins grow with distance and "unreached"
    is the largest code), which is the bin of the larger of its ends' distances, and
    "unreached" when either end is."""
    return np.maximum(node_bin[end_a], node_bin[end_b])
