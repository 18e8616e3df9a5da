"""Colouring a shortest-path tree: distance bins, their colours, labels and units (no Qt).

The network is drawn as one curve per bin (DESIGN principle 7). Bins have a "nice" equal
width in the unit a person reads (km for metres, minutes for time metrics, the raw
metric otherwise), 12-16 of them for the reachable range.
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
    edges: np.ndarray                       # float64 [k+1], metric units, edges[0] = 0
    colors: tuple[tuple[int, int, int], ...]   # k colours, near to far
    unit: DisplayUnit

    @property
    def count(self) -> int:
        return len(self.colors)

    def labels(self) -> list[str]:
        step = (self.edges[1] - self.edges[0]) * self.unit.factor
        decimals = 0 if step >= 10 else max(0, math.ceil(-math.log10(step)) + 1)
        return [f"{self.unit.format(a, decimals, False, True)} – {self.unit.format(b, decimals, True, True)}"
                for a, b in zip(self.edges[:-1], self.edges[1:])]

    def of(self, distance: np.ndarray) -> np.ndarray:
        """Bin index of each distance; ``count`` for unreachable (negative) ones."""
        b = np.searchsorted(self.edges, distance, side="right") - 1
        b = np.clip(b, 0, self.count - 1)
        return np.where(distance < 0, self.count, b).astype(np.int16)


def make_bins(max_distance: float, unit: DisplayUnit, max_bins: int = MAX_BINS) -> DistanceBins:
    """Equal bins of a nice width in ``unit`` covering [0, max_distance]."""
    top = max(float(max_distance), 1.0) * unit.factor
    step = max(nice_step(top / max_bins) / unit.factor, 1.0)   # costs are integral
    count = max(1, math.ceil(max_distance / step - 1e-9))
    edges = np.arange(count + 1) * step
    cmap = pg.colormap.get(COLORMAP)
    positions = np.linspace(*COLORMAP_SPAN, count) if count > 1 else np.array([COLORMAP_SPAN[0]])
    colors = tuple(tuple(int(c) for c in rgba[:3]) for rgba in cmap.map(positions, mode="byte"))
    return DistanceBins(edges, colors, unit)


def segment_distance(end_a: np.ndarray, end_b: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """A road's distance: the larger of its ends', -1 when either end is unreachable."""
    da, db = distance[end_a], distance[end_b]
    return np.where((da < 0) | (db < 0), -1, np.maximum(da, db))
