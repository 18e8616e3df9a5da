"""Colouring the network by contraction level: level bins, colours, widths, labels (no Qt).

A road's level is the HIGHER of its two end nodes' levels, so the roads around a node
show its level and important nodes stand out as dark stars. (The lower end's level is
the last overlay that still holds the arc, but each level is an independent set, so
neighbours are rarely both high: on a generated 20 k-node network only 15 of 50 k
arcs have both ends above level 15, and the upper levels would be invisible.)
Levels 0..L-1 go into at most MAX_LEVEL_BINS - 1 equal groups; the core (level L, the
nodes left uncontracted) gets a bin of its own. Higher bins are drawn darker, wider
and on top.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg

MAX_LEVEL_BINS = 16
COLORMAP = "viridis"
COLORMAP_SPAN = (0.92, 0.0)      # level 0 light green-yellow ... the core dark violet
WIDTHS = (1.0, 2.4)              # pixels, level 0 ... the core


@dataclass(frozen=True)
class LevelBins:
    first: np.ndarray                          # int64 [k+1]: bin b holds levels first[b] .. first[b+1]-1
    colors: tuple[tuple[int, int, int], ...]   # k colours, low to high
    widths: tuple[float, ...]
    num_levels: int                            # L: the core's level

    @property
    def count(self) -> int:
        return len(self.colors)

    def of(self, level: np.ndarray) -> np.ndarray:
        """Bin index of each level."""
        return (np.searchsorted(self.first, level, side="right") - 1).astype(np.int16)

    def labels(self) -> list[str]:
        """Short labels for a legend headed "level": "0–3", "4", "core (60)"."""
        out = []
        for a, b in zip(self.first[:-1], self.first[1:] - 1):
            if a == self.num_levels:
                out.append(f"core ({a})")
            else:
                out.append(f"{a}" if a == b else f"{a}–{b}")
        return out


def make_level_bins(num_levels: int, max_bins: int = MAX_LEVEL_BINS) -> LevelBins:
    """Bins for levels 0..num_levels-1 in equal groups, plus the core (level num_levels)."""
    width = max(1, math.ceil(num_levels / (max_bins - 1)))
    first = np.append(np.arange(0, num_levels, width), [num_levels, num_levels + 1]).astype(np.int64)
    count = first.size - 1
    cmap = pg.colormap.get(COLORMAP)
    positions = np.linspace(*COLORMAP_SPAN, count)
    colors = tuple(tuple(int(c) for c in rgba[:3]) for rgba in cmap.map(positions, mode="byte"))
    widths = tuple(float(w) for w in np.linspace(*WIDTHS, count))
    return LevelBins(first, colors, widths, int(num_levels))


def segment_level(end_a: np.ndarray, end_b: np.ndarray, node_level: np.ndarray) -> np.ndarray:
    """A road's level: the higher of its end nodes' levels."""
    return np.maximum(node_level[end_a], node_level[end_b])
