"""The overlay's per-level cell arrays concatenated into one set, for the Numba query
and path unpacking (which need every level in one call).

Indices stay valid across levels: level l's cells and shortcuts are shifted by that
level's base, so a query or unpacking loop indexes the concatenated arrays directly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class FlatOverlay:
    cell_base: np.ndarray      # int64 [L] where level l's cell offsets start (C_l + 1 each)
    entry_first: np.ndarray    # int64, entries of level-l cell c: entry_first[cell_base[l] + c] ..
    entry_arc: np.ndarray      # int32
    exit_first: np.ndarray     # int64
    exit_arc: np.ndarray       # int32
    clique_first: np.ndarray   # int64, offsets into the concatenated shortcut costs
    entry_row: np.ndarray      # int32 [L, B0]
    exit_col: np.ndarray       # int32 [L, B0]


def flatten(overlay) -> FlatOverlay:
    """The levels of ``overlay`` concatenated (metric-independent: built once per
    overlay by whoever keeps it, the Customizer or the CrpQuery)."""
    levels = overlay.levels
    cell_base, s_base = (np.zeros(len(levels), dtype=np.int64) for _ in range(2))
    parts = {k: [] for k in ("ef", "ea", "xf", "xa", "cf")}
    entry_total = exit_total = 0
    for l, t in enumerate(levels):
        if l:
            prev = levels[l - 1]
            cell_base[l] = cell_base[l - 1] + prev.num_cells + 1
            s_base[l] = s_base[l - 1] + prev.num_shortcuts
        parts["ef"].append(t.entry_first.astype(np.int64) + entry_total)
        parts["xf"].append(t.exit_first.astype(np.int64) + exit_total)
        parts["ea"].append(t.entry_arc)
        parts["xa"].append(t.exit_arc)
        entry_total += t.entry_arc.size
        exit_total += t.exit_arc.size
        parts["cf"].append(t.clique_first + s_base[l])
    cat = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in parts.items()}
    b0 = overlay.boundary_arc.size
    entry_row = np.stack([t.entry_row for t in levels]) if levels else np.zeros((0, b0), np.int32)
    exit_col = np.stack([t.exit_col for t in levels]) if levels else np.zeros((0, b0), np.int32)
    return FlatOverlay(cell_base, cat["ef"], cat["ea"].astype(np.int32), cat["xf"],
                       cat["xa"].astype(np.int32), cat["cf"], entry_row, exit_col)
