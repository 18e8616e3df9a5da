"""Contiguous cell ranges of an overlay, for customizing it on several GPUs (pure NumPy).

Cells nest, and the subcells of a parent have contiguous ids at every level (the
partition is numbered so: engine.io.partition_file checks it). So a contiguous range
of the cells of one level, the *split level*, owns a contiguous range of cells at
every level below it, and those ranges hold everything their levels need: a device
that costs them reads no shortcut of another device. Only the levels above the split
level read several devices' matrices; they run on one GPU after a gather of the split
level's S (engine.crp.customization.multi_gpu).

- ``plan_split``: the split level and its ranges, balanced by an estimate of the work;
- ``slice_level`` / ``slice_microcode`` / ``slice_minplus``: one range of a level's
  topology, of level 0's microinstructions, of a min-plus layout, renumbered so that
  offsets start at 0 and weight indices point into the range's own S of the level
  below (its part of the whole S starts at ``below_offset``);
- ``RangeView``: one device's part, levels 0..split, seen as an overlay by the GPU
  level variants (engine.crp.customization.gpu).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.crp.customization import layout
from engine.crp.partition.overlay import LevelTopology


def parent_cells(overlay) -> list[np.ndarray]:
    """Per level l below the top, int64 [C_l]: the level-(l+1) cell of each cell.
    ValueError when the parents decrease (the ranges would not be contiguous)."""
    cell_of = np.asarray(overlay.cell_of)
    parents = []
    for level in range(len(overlay.levels) - 1):
        parent = np.zeros(overlay.levels[level].num_cells, dtype=np.int64)
        parent[cell_of[level]] = cell_of[level + 1]
        if np.any(np.diff(parent) < 0):
            raise ValueError(f"level-{level} cells are not numbered in the order of their "
                             "parents: their ranges would not be contiguous")
        parents.append(parent)
    return parents


def ancestors(overlay, parents: list[np.ndarray], level: int, top: int) -> np.ndarray:
    """int64 [C_level]: the level-``top`` cell that holds each level-``level`` cell."""
    anc = np.arange(overlay.levels[level].num_cells, dtype=np.int64)
    for lv in range(level, top):
        anc = parents[lv][anc]
    return anc


def cell_work(topo) -> np.ndarray:
    """An estimate of a cell's customization work: entries x local vertices (the
    distances a search keeps and relaxes), plus its vertices (read once)."""
    nv = np.diff(np.asarray(topo.vertex_first, dtype=np.int64))
    ne = np.diff(np.asarray(topo.entry_first, dtype=np.int64))
    nx = np.diff(np.asarray(topo.exit_first, dtype=np.int64))
    return np.where((ne > 0) & (nx > 0), ne * nv, 0) + nv


def balanced_cuts(work: np.ndarray, parts: int) -> np.ndarray:
    """int64 [parts+1]: cut points 0 = c_0 <= ... <= c_parts = len(work) of contiguous
    ranges whose sums of ``work`` are near total / parts (each cut at the nearer of
    the two cells where the running sum passes k total / parts)."""
    if parts < 1:
        raise ValueError("at least one part")
    prefix = np.concatenate([[0], np.cumsum(np.asarray(work, dtype=np.float64))])
    goals = prefix[-1] * np.arange(1, parts) / parts
    hi = np.clip(np.searchsorted(prefix, goals, side="left"), 1, prefix.size - 1)
    nearer_low = (goals - prefix[hi - 1]) < (prefix[hi] - goals)
    inner = np.maximum.accumulate(np.where(nearer_low, hi - 1, hi))
    return np.concatenate([[0], inner, [prefix.size - 1]]).astype(np.int64)


@dataclass(frozen=True, eq=False)
class SplitPlan:
    """Levels 0..split_level cut into ``parts`` contiguous ranges of cells each;
    cuts[l][d]..cuts[l][d+1] are part d's cells of level l. Levels above run whole."""
    split_level: int
    cuts: list[np.ndarray]          # int64 [parts+1] per level 0..split_level
    work: np.ndarray                # float [parts]: estimated work of each part
    top_work: float                 # estimated work of the levels above the split

    @property
    def parts(self) -> int:
        return int(self.cuts[0].size - 1)

    def cells(self, level: int, part: int) -> tuple[int, int]:
        return int(self.cuts[level][part]), int(self.cuts[level][part + 1])


def plan_split(overlay, parts: int, split_level: int | None = None) -> SplitPlan:
    """The split over ``parts`` devices that minimises the estimated time (the largest
    part's work below and at the split level, plus the whole work above it; ties go
    to the higher split, which gathers less), or at ``split_level`` when given."""
    levels = overlay.levels
    if not levels:
        raise ValueError("the overlay has no levels")
    if split_level is not None and not 0 <= split_level < len(levels):
        raise ValueError(f"split level {split_level}: the overlay has levels "
                         f"0-{len(levels) - 1}")
    parents = parent_cells(overlay)
    work = [cell_work(t) for t in levels]
    best = None
    for top in ([split_level] if split_level is not None else range(len(levels))):
        below = np.zeros(levels[top].num_cells)
        for level in range(top + 1):            # every cell's work credited to its ancestor
            np.add.at(below, ancestors(overlay, parents, level, top), work[level])
        cut = balanced_cuts(below, parts)
        per_part = np.add.reduceat(np.append(below, 0.0), cut[:-1])[:parts] \
            if below.size else np.zeros(parts)
        per_part[cut[:-1] == cut[1:]] = 0.0
        above = float(sum(w.sum() for w in work[top + 1:]))
        cost = float(per_part.max(initial=0.0)) + above
        if best is None or cost <= best[0]:
            best = (cost, top, cut, per_part, above)
    _, top, cut, per_part, above = best
    cuts = [np.searchsorted(ancestors(overlay, parents, level, top), cut).astype(np.int64)
            for level in range(top)] + [cut]
    return SplitPlan(top, cuts, per_part, above)


# ------------------------------------------------------------------ slices
def _rebased(first: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """first[lo..hi] minus first[lo], in first's dtype."""
    part = np.asarray(first)[lo:hi + 1]
    return (part - part[0]).astype(part.dtype, copy=False)


def slice_level(topo, lo: int, hi: int, below_offset: int = 0) -> LevelTopology:
    """Cells lo..hi-1 of ``topo`` as a level of their own: offsets from 0, local
    vertices renumbered, and each local edge's weight index minus ``below_offset``
    (level 0: 0, turn ids stay; above: where the range's part of S_{l-1} starts).
    entry_row and exit_col, per boundary arc of the whole graph, are kept whole."""
    v0, v1 = int(topo.vertex_first[lo]), int(topo.vertex_first[hi])
    e0, e1 = int(topo.edge_first[v0]), int(topo.edge_first[v1])
    n0, n1 = int(topo.entry_first[lo]), int(topo.entry_first[hi])
    x0, x1 = int(topo.exit_first[lo]), int(topo.exit_first[hi])
    edge_to, weight = topo.edge_to[e0:e1], topo.edge_weight[e0:e1]
    return LevelTopology(
        topo.level, hi - lo, _rebased(topo.entry_first, lo, hi), topo.entry_arc[n0:n1],
        _rebased(topo.exit_first, lo, hi), topo.exit_arc[x0:x1], topo.entry_row,
        topo.exit_col, _rebased(topo.clique_first, lo, hi), _rebased(topo.vertex_first, lo, hi),
        topo.vertex_arc[v0:v1], _rebased(topo.edge_first, v0, v1), _minus(edge_to, v0),
        _minus(weight, below_offset))


def _minus(a: np.ndarray, offset: int) -> np.ndarray:
    """a - offset in a's dtype; a itself (a view, no copy) when offset is 0: the first
    range and level 0's turn ids keep the whole level's memory."""
    return a if offset == 0 else (a - offset).astype(a.dtype, copy=False)


def slice_microcode(mc, lo: int, hi: int):
    """Cells lo..hi-1 of level 0's microinstructions (engine.crp.customization.microcode):
    the same instructions (cell-local slots), offsets from 0; the edges keep their
    turn ids. Field names are the Microcode's; dtypes are kept."""
    i0, i1 = int(mc.instr_first[lo]), int(mc.instr_first[hi])
    e0, e1 = int(mc.edge_first[lo]), int(mc.edge_first[hi])
    s0, s1 = int(mc.clique_first[lo]), int(mc.clique_first[hi])
    per_instr = {k: getattr(mc, k)[i0:i1] for k in
                 ("instr_a", "instr_b", "instr_c", "instr_assign", "instr_layer")}
    return dataclasses.replace(
        mc, num_cells=hi - lo, instr_first=_rebased(mc.instr_first, lo, hi), **per_instr,
        num_layers=mc.num_layers[lo:hi], num_slots=mc.num_slots[lo:hi],
        edge_first=_rebased(mc.edge_first, lo, hi), edge_slot=mc.edge_slot[e0:e1],
        edge_weight=mc.edge_weight[e0:e1], clique_first=_rebased(mc.clique_first, lo, hi),
        collect_slot=mc.collect_slot[s0:s1])


def slice_minplus(lay: layout.MinplusLayout, topo, below, lo: int, hi: int,
                  below_lo: int, below_hi: int) -> layout.MinplusLayout:
    """Cells lo..hi-1 of a min-plus layout of level ``topo`` (whole topologies of it and
    of the level below), whose subcells are below_lo..below_hi-1."""
    k0, k1 = int(lay.slot_first[lo]), int(lay.slot_first[hi])
    slot_cell = lay.slot_cell[k0:k1]
    if slot_cell.size and (slot_cell.min() < below_lo or slot_cell.max() >= below_hi):
        raise ValueError(f"level {topo.level}: a cell of {lo}..{hi - 1} has a subcell "
                         f"outside {below_lo}..{below_hi - 1}")
    x0, x1 = int(below.exit_first[below_lo]), int(below.exit_first[below_hi])
    n0, n1 = int(topo.entry_first[lo]), int(topo.entry_first[hi])
    return layout.MinplusLayout(
        _rebased(lay.slot_first, lo, hi), (slot_cell - below_lo).astype(slot_cell.dtype),
        lay.slot_row[k0:k1], lay.exit_row[x0:x1], lay.exit_slot[x0:x1],
        lay.entry_row[n0:n1], lay.entry_slot[n0:n1])


class RangeView:
    """Part ``part`` of ``plan``: levels 0..split_level of ``overlay`` cut to the part's
    cells, with their min-plus layouts; what the GPU level variants read as an overlay
    (``levels``, ``minplus_layout(level)``). ``shortcut_first[l]``: where the part's
    S_l starts in the whole S_l. ``layouts`` (level -> the whole level's min-plus
    layout) may be shared by the parts, so each is built once."""

    def __init__(self, overlay, plan: SplitPlan, part: int, layouts: dict | None = None) -> None:
        self.overlay, self.plan, self.part = overlay, plan, part
        self._layouts = {} if layouts is None else layouts
        self.levels: list[LevelTopology] = []
        self.shortcut_first: list[int] = []
        for level in range(plan.split_level + 1):
            topo = overlay.levels[level]
            lo, hi = plan.cells(level, part)
            below = self.shortcut_first[level - 1] if level else 0
            self.levels.append(slice_level(topo, lo, hi, below))
            self.shortcut_first.append(int(topo.clique_first[lo]))

    def minplus_layout(self, level: int) -> layout.MinplusLayout:
        if level not in self._layouts:
            self._layouts[level] = layout.minplus_layout(self.overlay, level)
        lay = self._layouts[level]
        return slice_minplus(lay, self.overlay.levels[level], self.overlay.levels[level - 1],
                             *self.plan.cells(level, self.part),
                             *self.plan.cells(level - 1, self.part))
