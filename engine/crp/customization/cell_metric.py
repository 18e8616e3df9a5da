"""CellMetric: what customization gives (Delling, Kobitzsch, Werneck: the metric-
dependent half of CRP), and CostOverflow, what it raises when a cost does not fit.

A CellMetric is host data only (NumPy): arc costs, turn weights and every level's
shortcut matrices. Device arrays stay with the Customizer that made it
(engine.crp.customization.customize), so a metric handed to the window carries no
GPU state. ``cell_matrix`` is the host view of one cell's entry x exit costs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class CostOverflow(OverflowError):
    """A cost reached 2^31-1 (the int32 the cell matrices and the query store): the
    decoder's costs are too large for this graph. An input error: scale them down.
    ``what`` costs too much, ``advice`` follows; ``decoder`` is named when known."""

    def __init__(self, what: str, advice: str = "", decoder: str = "") -> None:
        self.what, self.advice, self.decoder = what, advice, decoder
        under = f" under decoder '{decoder}'" if decoder else ""
        super().__init__(f"{what} costs 2^31 or more{under}{advice}")

    @classmethod
    def at_level(cls, level: int, decoder: str = "") -> "CostOverflow":
        return cls(f"a path inside a level-{level} cell", ": the decoder's costs are too "
                   "large for this graph; scale them down", decoder)

    @classmethod
    def on_route(cls, decoder: str = "") -> "CostOverflow":
        return cls("the route exists but", ", more than a route cost can hold: scale the "
                   "decoder's costs down", decoder)

    def naming(self, decoder: str) -> "CostOverflow":
        """The same error, naming ``decoder`` (the levels raise it without the name)."""
        return self if self.decoder or not decoder else CostOverflow(self.what, self.advice,
                                                                     decoder)


@dataclass(eq=False)
class CellMetric:
    """Costs of one metric on one overlay: arc costs, turn weights (turn + next arc) and
    every level's shortcut matrices, as NumPy arrays (host copies of GPU results)."""
    overlay: object                 # engine.crp.partition.overlay.Overlay (topology)
    name: str                       # the decoder's name
    arc_cost: np.ndarray            # int32 [m], FORBIDDEN for arcs the decoder forbids
    turn_weight: np.ndarray         # int32 [T]
    shortcuts: list[np.ndarray]     # int32 S_l per level
    timings: list[dict] = field(default_factory=list)   # per level: phase -> ms
    total_ms: float = 0.0           # the levels (GPU: on the device, copies apart)
    backend: str = "cpu"
    unit: str = ""
    decode_ms: float = 0.0
    copy_ms: float = 0.0            # GPU: copying the results to the host
    notes: tuple = ()
    decoder: object = None          # engine.crp.metric.decoder.Decoder it was made from
    device_bytes: int | None = None  # device memory in use after customizing (GPU), else None
    flat_shortcuts: np.ndarray | None = None   # every S_l in one array (shortcuts are views of it)
    turn_weight_q: np.ndarray | None = None    # turn weights in the query's order (query_space)
    trees: np.ndarray | None = None   # unpacking hints, levels >= 1 (customization/trees.py; CPU)

    def level_weights(self, level: int) -> np.ndarray:
        """The weights the local edges of ``level`` index: turns, or S_{level-1}."""
        return self.turn_weight if level == 0 else self.shortcuts[level - 1]

    def cell_matrix(self, level: int, cell: int) -> np.ndarray:
        """int32 [entries, exits]: S_level[cell][r][j], the cost from the cell's entry r to
        its exit j (FORBIDDEN: no path inside the cell); a view, not a copy."""
        topo = self.overlay.levels[level]
        ne, nx, _ = topo.counts(cell)
        lo, hi = topo.clique_first[cell], topo.clique_first[cell + 1]
        return np.asarray(self.shortcuts[level][lo:hi]).reshape(ne, nx)


__all__ = ["CellMetric", "CostOverflow"]
