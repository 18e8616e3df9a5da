"""Colouring a shortest-path tree: distance bins, their colours, labels and units (no Qt).

The network is drawn as one curve per bin (DESIGN principle 7). Bins have a "nice" equal
width in the unit a person reads (km for metres, minutes for time metrics, the raw
metric otherwise), 12-16 of them for the reachable range.

A few extreme arcs (a long ferry to an island) must not stretch the bins until the land
is one colour. The tree's distances are split where they jump by more than all the
distance below the jump (and an eighth of the range): each part ("body") gets nice
bins of its own over its own range, as many as its share of the nodes earns (at least
one), so the land keeps a dozen colours and the island behind the ferry one or two,
labelled with their true distances ("165 – 170 min"). The bins' edges and every node's
bin are made by engine.core.tree_bins, where the tree is (on the device for PHAST);
this module adds their colours, labels and the unit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg

from engine.core import tree_bins
from engine.core.tree_bins import MAX_BINS, nice_step  # noqa: F401 (the bins' widths, read by tests)
from engine.core.units import UNKNOWN, unit_of

from app.map_style import COLORMAP, COLORMAP_SPAN

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


@dataclass(frozen=True)
class DistanceBins:
    lows: np.ndarray                        # float64 [k], metric units: bin b is [lows[b], highs[b])
    highs: np.ndarray                       # highs[b] == lows[b+1] but across a jump
    colors: tuple[tuple[int, int, int], ...]   # k colours, near to far
    unit: DisplayUnit
    node_bin: np.ndarray | None = None      # uint8 [n]: each node's bin (k: unreached), when
                                            # the engine made them (TreeAnswer.bins)

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
    """The reachable distances as (low, high, nodes) parts (engine.core.tree_bins.bodies)."""
    return tree_bins.bodies(np, np.asarray(distance))


def make_bins(distance, unit: DisplayUnit, max_bins: int = MAX_BINS) -> DistanceBins:
    """Bins of a nice width in ``unit``: for a number, equal ones covering [0, distance];
    for a tree's distances (-1: unreachable), equal ones per body (``bodies``), shared
    by the bodies as their nodes are."""
    parts = [(0.0, float(distance), 1)] if np.ndim(distance) == 0 else bodies(distance)
    return coloured(*tree_bins.bin_edges(parts, unit.factor, max_bins), unit)


def coloured(lows: np.ndarray, highs: np.ndarray, unit: DisplayUnit,
             node_bin: np.ndarray | None = None) -> DistanceBins:
    """The bins [lows, highs) with their colours, near to far (for the engine's
    TreeBins of a tree kept on the device, or for make_bins)."""
    count = lows.size
    cmap = pg.colormap.get(COLORMAP)
    positions = np.linspace(*COLORMAP_SPAN, count) if count > 1 else np.array([COLORMAP_SPAN[0]])
    colors = tuple(tuple(int(c) for c in rgba[:3]) for rgba in cmap.map(positions, mode="byte"))
    return DistanceBins(lows, highs, colors, unit, node_bin)


def segment_distance(end_a: np.ndarray, end_b: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """A road's distance: the larger of its ends', -1 when either end is unreachable."""
    da, db = distance[end_a], distance[end_b]
    return np.where((da < 0) | (db < 0), -1, np.maximum(da, db))
