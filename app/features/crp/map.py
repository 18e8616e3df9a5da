"""The CRP partition on the map (issue #13): cells in colours, one cell's entry and exit
points and shortcut matrix, and a route's path through the overlay levels.

``cell_colouring`` is a ``Colouring`` for ``MapView.set_colouring``: a dozen distinct
colours handed out by a greedy colouring of the cell adjacency (neighbouring cells
differ), plus one dark, wider bin on top for boundary segments (ends in two cells).

``CellOverlay`` owns a few pyqtgraph items on ``map_view.plot`` (DESIGN principle 7:
one curve per colour bin, ``connect='pairs'``), all ``ignoreBounds`` and stacked
between the network (z <= 8) and the endpoint markers (z 20):

  z 0.5   the selected cell's roads as a faint halo, under the network
  z 11.x  shortcut matrix lines, cheapest bin on top
  z 12.x  a route's pieces per overlay level (higher levels thicker, dashed, below)
  z 14    entry points (green triangles) over exit points (red hollow squares)

The CRP controller owns it; it may turn on cell picking (``set_picking``), after which
a plain left click on the map emits ``cell_clicked(level, cell)``.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

from app.map_view import Colouring
from engine.crp.metric import FORBIDDEN
from engine.core.units import Unit

# Distinct colours, readable on the map's light background (no greys: the boundary is dark).
CELL_PALETTE = ((230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48),
                (145, 30, 180), (70, 190, 190), (240, 50, 230), (150, 180, 20),
                (0, 128, 128), (170, 110, 40), (250, 130, 160), (40, 40, 150))
CELL_WIDTH = 1.4
BOUNDARY_COLOR = (25, 25, 25)
BOUNDARY_WIDTH = 2.6
GREEDY_CELLS_MAX = 2_000_000      # above this many cells, colour by id stride (no greedy pass)
STRIDE = 5                        # coprime with the palette size: id c -> colour 5c mod 12

ENTRY_COLOR = (20, 160, 70)
EXIT_COLOR = (215, 30, 40)
HALO_COLOR = (255, 200, 0, 120)
HALO_SEGMENTS_MAX = 150_000       # the finest level of detail with at most this many
# Matrix lines, cheap to expensive (plasma without its pale end, so it shows on beige).
MATRIX_COLORS = ((13, 8, 135), (106, 0, 168), (177, 42, 144), (225, 100, 98), (250, 160, 50))
MATRIX_ALPHA = 150
MAX_MATRIX_LINES = 20_000
# A route through the overlay: one colour per level (0 = original road arcs).
ROUTE_LEVEL_COLORS = ((0, 170, 90), (245, 130, 48), (145, 30, 180), (230, 25, 75),
                      (40, 40, 40), (170, 110, 40))
DASH_PX = (10.0, 6.0)


def cell_colouring(cell_of_level: np.ndarray, num_cells: int,
                   arcs: tuple[np.ndarray, np.ndarray] | None = None) -> Colouring:
    """The cells of one level in colours, boundary segments dark and wide on top.

    Bins 0..len(CELL_PALETTE)-1 are cell colours, the last bin is the boundary. With
    ``arcs`` = (tail, head) of the graph, neighbouring cells get different colours
    (greedy); without, colour = cell id * STRIDE mod palette (ids of METIS parts of one
    parent are contiguous, so siblings still differ)."""
    cell_of_level = np.asarray(cell_of_level)
    colour_of = cell_colours(cell_of_level, num_cells, arcs)
    boundary = len(CELL_PALETTE)

    def segment_bins(level) -> np.ndarray:
        ca, cb = cell_of_level[level.end_a], cell_of_level[level.end_b]
        return np.where(ca != cb, boundary, colour_of[ca]).astype(np.int64)

    pens = tuple(pg.mkPen(c, width=CELL_WIDTH) for c in CELL_PALETTE) + \
        (pg.mkPen(BOUNDARY_COLOR, width=BOUNDARY_WIDTH),)
    z = (3.0,) * len(CELL_PALETTE) + (6.0,)
    return Colouring("cells", pens, z, segment_bins)


def cell_colours(cell_of_level: np.ndarray, num_cells: int,
                 arcs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Palette index per cell. With ``arcs``: a greedy colouring of the cell adjacency,
    in parallel rounds (Jones-Plassmann: a cell whose random priority beats all its
    uncoloured neighbours takes the first colour none of its neighbours has, scanning
    from a per-cell offset so that the palette is spread); without: id * STRIDE."""
    p = len(CELL_PALETTE)
    ids = np.arange(num_cells, dtype=np.int64)
    start = (ids * STRIDE) % p
    if arcs is None or num_cells > GREEDY_CELLS_MAX:
        return start
    ca, cb = cell_of_level[arcs[0]].astype(np.int64), cell_of_level[arcs[1]].astype(np.int64)
    cross = ca != cb
    pairs = np.unique(np.concatenate([ca[cross] * num_cells + cb[cross],
                                      cb[cross] * num_cells + ca[cross]]))
    u, v = pairs // num_cells, pairs % num_cells
    prio = np.random.default_rng(0).permutation(num_cells)    # fixed: the same map every time
    colour = np.full(num_cells, -1, dtype=np.int64)
    while (colour < 0).any():
        unc = colour < 0
        best_nb = np.full(num_cells, -1, dtype=np.int64)
        np.maximum.at(best_nb, u, np.where(unc[v], prio[v], -1))
        pick = unc & (prio > best_nb)
        used = np.zeros(num_cells, dtype=np.int64)             # bit k: a neighbour has colour k
        e = pick[u] & (colour[v] >= 0)
        np.bitwise_or.at(used, u[e], np.left_shift(1, colour[v[e]]))
        cells = np.flatnonzero(pick)
        chosen = start[cells].copy()                           # all taken: keep the offset
        for t in range(p - 1, -1, -1):                         # the first free one wins
            k = (start[cells] + t) % p
            free = (used[cells] >> k) & 1 == 0
            chosen[free] = k[free]
        colour[cells] = chosen
    return colour


class CellOverlay(QObject):
    cell_clicked = Signal(int, int)          # level, cell (while picking is on)

    def __init__(self, map_view) -> None:
        super().__init__(map_view)
        self.map_view = map_view
        self.note = ""                       # e.g. that the matrix was subsampled
        self._pick: tuple[object, int] | None = None    # (overlay, level) while picking
        self._matrix_bins: list[tuple[int, int, int]] = []   # (lowest, highest cost, lines)
        self._unit = ""
        self.halo = self._add(pg.PlotCurveItem(pen=pg.mkPen(HALO_COLOR, width=8),
                                               connect="pairs", skipFiniteCheck=True), 0.5)
        self.exits = self._add(pg.ScatterPlotItem(size=13, symbol="s", brush=(255, 255, 255, 160),
                                                  pen=pg.mkPen(EXIT_COLOR, width=2.2)), 14.0)
        self.entries = self._add(pg.ScatterPlotItem(size=10, symbol="t1", brush=pg.mkBrush(ENTRY_COLOR),
                                                    pen=pg.mkPen("w", width=1.0)), 14.1)
        self.matrix_curves = []
        for k, color in enumerate(MATRIX_COLORS):     # the cheapest bin on top
            pen = pg.mkPen((*color, MATRIX_ALPHA), width=1.0)
            curve = pg.PlotCurveItem(pen=pen, connect="pairs", skipFiniteCheck=True, antialias=True)
            self.matrix_curves.append(self._add(curve, 11.5 - 0.1 * k))
        self.route_curves: dict[int, pg.PlotCurveItem] = {}
        map_view.add_click_handler(self.take_click)

    def _add(self, item, z: float):
        item.setZValue(z)
        self.map_view.plot.addItem(item, ignoreBounds=True)
        return item

    # ----------------------------------------------------------------- a cell
    def show_cell(self, overlay, level: int, cell: int) -> None:
        """A cell's entry points (heads of its entry arcs) and exit points (tails of its
        exit arcs), one point per arc, and its roads as a halo; clears any matrix."""
        self.clear_matrix()
        d = self.map_view.drawing
        if d is None:
            return
        g, topo = overlay.graph, overlay.levels[level]
        xy = d.node_xy
        ent = g.head[topo.entry_arc[topo.entry_first[cell]:topo.entry_first[cell + 1]]]
        ext = g.tail[topo.exit_arc[topo.exit_first[cell]:topo.exit_first[cell + 1]]]
        self.entries.setData(x=xy[ent, 0], y=xy[ent, 1])
        self.exits.setData(x=xy[ext, 0], y=xy[ext, 1])
        self._show_halo(overlay.cell_of[level], cell)

    def _show_halo(self, cell_of_level: np.ndarray, cell: int) -> None:
        """The cell's roads on the finest level of detail that keeps the halo small."""
        drawing = self.map_view.drawing
        for lv in reversed(drawing.levels):           # exact first
            idx = np.flatnonzero((cell_of_level[lv.end_a] == cell) & (cell_of_level[lv.end_b] == cell))
            if idx.size <= HALO_SEGMENTS_MAX:
                break
        self.halo.setData(*lv.pairs_of(idx))

    def points_drawn(self) -> tuple[int, int]:
        """(entry points, exit points) drawn (tests)."""
        return len(self.entries.data), len(self.exits.data)

    # ------------------------------------------------------- shortcut matrix
    def show_matrix(self, overlay, metric, level: int, cell: int) -> None:
        """The cell's shortcuts as straight lines entry point -> exit point, in
        len(MATRIX_COLORS) cost quantiles; pairs with no path are not drawn. More
        than MAX_MATRIX_LINES shortcuts are thinned by a stride (said in ``note``)."""
        self.show_cell(overlay, level, cell)
        d = self.map_view.drawing
        if d is None:
            return
        g, topo = overlay.graph, overlay.levels[level]
        s = metric.cell_matrix(level, cell)
        r, j = np.nonzero(s != FORBIDDEN)
        total = r.size
        stride = max(1, math.ceil(total / MAX_MATRIX_LINES))
        r, j = r[::stride], j[::stride]
        self.note = "" if stride == 1 else \
            f"{r.size:,} of {total:,} shortcuts drawn (every {stride}th)"
        xy = d.node_xy
        a = xy[g.head[topo.entry_arc[topo.entry_first[cell] + r]]]
        b = xy[g.tail[topo.exit_arc[topo.exit_first[cell] + j]]]
        self._draw_matrix(a, b, s[r, j].astype(np.int64))
        self._unit = metric.unit

    def _draw_matrix(self, a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> None:
        """One curve per cost quintile (costs cluster near the cheap end: equal ranges
        would paint nearly every line one colour); the legend gives each one's range."""
        nb = len(MATRIX_COLORS)
        self._matrix_bins = []
        if cost.size == 0:
            return
        edges = np.quantile(cost, np.arange(1, nb) / nb)
        k = np.searchsorted(edges, cost, side="left")       # bin k: edges[k-1] < cost <= edges[k]
        for b_idx, curve in enumerate(self.matrix_curves):
            m = k == b_idx
            x, y = np.empty(2 * m.sum()), np.empty(2 * m.sum())
            x[0::2], x[1::2], y[0::2], y[1::2] = a[m, 0], b[m, 0], a[m, 1], b[m, 1]
            curve.setData(x=x, y=y)
            self._matrix_bins.append((int(cost[m].min()), int(cost[m].max()), int(m.sum()))
                                     if m.any() else (-1, -1, 0))

    def clear_matrix(self) -> None:
        for curve in self.matrix_curves:
            curve.setData(x=[], y=[])
        self._matrix_bins, self.note = [], ""

    def matrix_lines(self) -> int:
        """Shortcut lines drawn (tests)."""
        return sum(n for _, _, n in self._matrix_bins)

    def matrix_bins(self) -> list[tuple[int, int, int]]:
        """Per colour, cheap to expensive: (lowest cost, highest cost, lines drawn);
        (-1, -1, 0) for a colour that drew nothing (many equal costs)."""
        return list(self._matrix_bins)

    def matrix_legend(self) -> list[tuple[tuple, str]]:
        """(colour, label) per colour of the drawn matrix, cheap to expensive."""
        return [(c, f"{format_cost(lo, self._unit)} – {format_cost(hi, self._unit)}")
                for c, (lo, hi, n) in zip(MATRIX_COLORS, self._matrix_bins) if n]

    # ---------------------------------------------- a route through the levels
    def show_route_levels(self, segments: list[tuple[int, np.ndarray]]) -> None:
        """A route's pieces: (level, [k, 2] polyline) each, level -1 for road arcs and l
        for level-l shortcuts (as CrpQuery.steps); a level's pieces share one curve
        (colour per level; higher levels thicker, dashed, beneath)."""
        self._clear_route()
        by_level: dict[int, list[np.ndarray]] = {}
        for level, xy in segments:
            xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
            if len(xy) >= 2:
                by_level.setdefault(int(level), []).append(xy)
        for level, pieces in by_level.items():
            xy = np.concatenate(pieces)
            connect = np.ones(len(xy), dtype=bool)
            connect[np.cumsum([len(p) for p in pieces]) - 1] = False   # no line between pieces
            curve = pg.PlotCurveItem(x=xy[:, 0], y=xy[:, 1], connect=connect,
                                     pen=_level_pen(level), skipFiniteCheck=True, antialias=True)
            self.route_curves[level] = self._add(curve, 12.8 - 0.1 * min(level, 8))

    def route_legend(self) -> list[tuple[tuple, str]]:
        return [(_level_color(lv), "road arcs" if lv < 0 else f"level {lv} shortcuts")
                for lv in sorted(self.route_curves)]

    def _clear_route(self) -> None:
        for curve in self.route_curves.values():
            self.map_view.plot.removeItem(curve)
        self.route_curves = {}

    # ------------------------------------------------------------ the rest
    def clear(self) -> None:
        """Remove everything this overlay draws (picking stays as it was)."""
        self.clear_matrix()
        self._clear_route()
        for item in (self.entries, self.exits):
            item.setData([], [])
        self.halo.setData(x=[], y=[])

    def cell_at(self, overlay, level: int, x: float, y: float) -> int:
        """The cell of ``level`` under a map point: the cell of the nearest node."""
        node = self.map_view.drawing.nearest_node(x, y)
        return int(overlay.cell_of[level][node])

    def set_picking(self, overlay, level: int = 0) -> None:
        """Clicks on the map pick cells of ``level`` (emit ``cell_clicked``); None: off."""
        self._pick = None if overlay is None else (overlay, int(level))

    def take_click(self, scene_pos) -> bool:
        if self._pick is None or self.map_view.drawing is None:
            return False
        overlay, level = self._pick
        p = self.map_view.view.mapSceneToView(scene_pos)
        self.cell_clicked.emit(level, self.cell_at(overlay, level, p.x(), p.y()))
        return True


def _level_color(level: int) -> tuple:
    return ROUTE_LEVEL_COLORS[(level + 1) % len(ROUTE_LEVEL_COLORS)]


def _level_pen(level: int):
    width = 4.5 + 1.5 * level
    pen = pg.mkPen(_level_color(level), width=width)
    if level >= 0:                # dashes of the same length in pixels at every width
        pen.setDashPattern([DASH_PX[0] / width, DASH_PX[1] / width])
    return pen


def format_cost(cost: int, unit: str) -> str:
    """A cost for people (engine.core.units' display form); a unit it does not know, as written."""
    u = Unit(unit)
    return u.format(cost) if u.kind or not unit else f"{cost:,} {unit}"
