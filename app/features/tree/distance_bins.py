"""Colouring a shortest-path tree: distance bins, their colours, labels and units (no Qt).

The network is drawn as one curve per bin (DESIGN principle 7). Bins have a "nice" equal
width in the unit a person reads (km for metres, minutes for time metrics, the raw
metric otherwise), 12-16 of them for the reachable range.

A few extreme arcs (a long ferry to an island) must not stretch the bins until the land
is one colour. The tree's distances are split where they jump by more than all the
distance below the jump (and an eighth of the range): each part ("body") gets nice
bins of its own over its own range, as many as its share of the nodes earns (at least
one), so the land keeps a dozen colours and the island behind the ferry one or two,
labelled with their true distances ("165 – 170 min").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg

from engine.core.units import UNKNOWN, unit_of

from app.map_style import COLORMAP, COLORMAP_SPAN

MAX_BINS = 16
NICE_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)   # x 10^k: 12-16 bins for any range
UNREACHABLE_COLOR = (190, 190, 190)


@dataclass(frozen=True)
class DisplayUnit:
    """How a metric's values read: ``value * factor`` in ``suffix``."""
    factor: float
    suffix: str               # "km", "min" or "units" (raw metric units)

    def format(self, value: float, decimals: int | None = None, suffix: bool = True,
               compact: bool = False) -> str:
        """``compact`` writes large raw values as 800k, 1.2M (for legends)."""
        v = value * self.factor
        raw = self.suffix == UNKNOWN
        if compact and raw and abs(v) >= 10_000:
            big = abs(v) >= 1_000_000
            text = f"{v / (1e6 if big else 1e3):.4g}{'M' if big else 'k'}"
            return f"{text} {self.suffix}" if suffix else text
        if decimals is None:
            decimals = 2 if not raw and abs(v) < 100 else 0
        text = f"{v:,.{decimals}f}"
        if decimals:
            text = text.rstrip("0").rstrip(".")
        return f"{text} {self.suffix}" if suffix else text


def display_unit(metric_units: dict, metric: str) -> DisplayUnit:
    """km for lengths, minutes for times, "units" when the unit is not known."""
    return DisplayUnit(*unit_of(metric_units, metric).axis())


def nice_step(raw: float) -> float:
    """The smallest NICE_STEPS x 10^k at least ``raw`` (> 0)."""
    exp = math.floor(math.log10(raw))
    for m in (*NICE_STEPS, 10):
        step = m * 10.0 ** exp
        if step >= raw * (1 - 1e-12):
            return step
    return 10.0 ** (exp + 1)


@dataclass(frozen=True)
class DistanceBins:
    lows: np.ndarray                        # float64 [k], metric units: bin b is [lows[b], highs[b])
    highs: np.ndarray                       # highs[b] == lows[b+1] but across a jump
    colors: tuple[tuple[int, int, int], ...]   # k colours, near to far
    unit: DisplayUnit

    @property
    def count(self) -> int:
        return len(self.colors)

    @property
    def edges(self) -> np.ndarray:
        """float64 [k+1]: the bins' edges (contiguous bins; across a jump, the lows)."""
        return np.append(self.lows, self.highs[-1])

    def labels(self) -> list[str]:
        step = float(np.min(self.highs - self.lows)) * self.unit.factor
        decimals = 0 if step >= 10 else max(0, math.ceil(-math.log10(step)) + 1)
        return [f"{self.unit.format(a, decimals, False, True)} – {self.unit.format(b, decimals, True, True)}"
                for a, b in zip(self.lows, self.highs)]

    def of(self, distance: np.ndarray) -> np.ndarray:
        """Bin index of each distance; ``count`` for unreachable (negative) ones."""
        b = np.searchsorted(self.lows, distance, side="right") - 1
        b = np.clip(b, 0, self.count - 1)
        return np.where(distance < 0, self.count, b).astype(np.int16)


def bodies(distance: np.ndarray) -> list[tuple[float, float, int]]:
    """The reachable distances as (low, high, nodes) parts, split where a distance jumps
    by more than all below it and an eighth of the whole range: the far side of a ferry."""
    d = np.sort(np.asarray(distance)[np.asarray(distance) >= 0]).astype(np.float64)
    if d.size == 0:
        return [(0.0, 0.0, 0)]
    jump = np.diff(d)
    cut = np.flatnonzero((jump > d[:-1]) & (jump > (d[-1] - d[0]) / 8))
    cut = cut[cut >= 1]                      # not after the source alone
    starts, ends = np.r_[0, cut + 1], np.r_[cut, d.size - 1]
    return [(float(d[a]), float(d[b]), int(b - a + 1)) for a, b in zip(starts, ends)]


def _step(low: float, high: float, bins: int, unit: DisplayUnit) -> float:
    """A nice width for at most ``bins`` equal bins over [low, high] (at least 1: costs are integral)."""
    return max(nice_step(max(high - low, 1.0) * unit.factor / bins) / unit.factor, 1.0)


def _edges(low: float, high: float, step: float) -> np.ndarray:
    """Edges of bins ``step`` wide, on multiples of it, covering [low, high]."""
    start = math.floor(low / step + 1e-9) * step
    count = max(1, math.ceil((high - start) / step - 1e-9))
    return start + np.arange(count + 1) * step


def make_bins(distance, unit: DisplayUnit, max_bins: int = MAX_BINS) -> DistanceBins:
    """Bins of a nice width in ``unit``: for a number, equal ones covering [0, distance];
    for a tree's distances (-1: unreachable), equal ones per body (``bodies``), shared
    by the bodies as their nodes are."""
    if np.ndim(distance) == 0:
        parts = [(0.0, float(distance), 1)]
    else:
        parts = bodies(distance)
        parts[0] = (0.0, *parts[0][1:])          # the near part starts at the source
    total = sum(n for _, _, n in parts)
    share = [max(1, round(max_bins * n / max(total, 1))) if len(parts) > 1 else max_bins
             for _, _, n in parts]
    main = max(range(len(parts)), key=lambda j: parts[j][2])
    finest = _step(parts[main][0], parts[main][1], share[main], unit)     # no part finer: one precision
    lows, highs = [], []
    for (low, high, _), bins in zip(parts, share):
        edges = _edges(low, high, max(_step(low, high, bins, unit), finest))
        lows.append(edges[:-1])
        highs.append(edges[1:])
    lows, highs = np.concatenate(lows), np.concatenate(highs)
    count = lows.size
    cmap = pg.colormap.get(COLORMAP)
    positions = np.linspace(*COLORMAP_SPAN, count) if count > 1 else np.array([COLORMAP_SPAN[0]])
    colors = tuple(tuple(int(c) for c in rgba[:3]) for rgba in cmap.map(positions, mode="byte"))
    return DistanceBins(lows, highs, colors, unit)


def segment_distance(end_a: np.ndarray, end_b: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """A road's distance: the larger of its ends', -1 when either end is unreachable."""
    da, db = distance[end_a], distance[end_b]
    return np.where((da < 0) | (db < 0), -1, np.maximum(da, db))
