"""Charts of a cost-budgeted path query (issue #14), in the "Cost-budgeted paths" dock.

Left, the Pareto chart: every non-dominated (length, cost) point within the budget as
a dot, the budget as a dashed horizontal line, the answer (the least length within
the budget) as a diamond, the shortest and the least-cost paths as hollow squares in
their map colours; a click on a dot picks that point (``picked``), and the map shows
its path. Right, the labeling's course (``CspResult.history``): the frontier size and
the labels pruned so far by each rule, against the labels settled; a series that is
zero all along (a rule that pruned nothing) or that the backend does not record (K_t
on the CPU) is left out and said in the header, which holds both charts' legend.

Values are drawn in display units (km, minutes) and kept raw for the test hooks.
``metric_text`` says a value in real units for the charts and the side panel alike.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from engine.core.units import Unit, format_duration

from app.charts import DIAMOND, DOT, LINE, SQUARE, HeaderedChart, key, style_plot

PATH_COLOR = (130, 40, 180)          # the constrained path, on the map and in the chart
SHORTEST_COLOR = (30, 110, 230)      # the shortest path by length (a thin reference)
LEAST_COST_COLOR = (0, 150, 150)     # the least-cost path (a thin reference)
BUDGET_COLOR = (200, 40, 40)
POINT_COLOR = (150, 120, 190)
MARKER_PX = 12           # half the largest marker and its pen: kept this far inside the axes
HISTORY_LINES = (("frontier", "frontier Nₜ", (30, 30, 30)),
                 ("pruned_cost_bound", "cost bound", (230, 120, 20)),     # pruned by ...
                 ("pruned_length_bound", "length bound", SHORTEST_COLOR),
                 ("pruned_dominated", "dominance", (34, 136, 51)),
                 ("k_t", "Kₜ (GPU)", (200, 40, 160)))
HISTORY_COLUMNS = ("settled", "frontier", "pruned_cost_bound", "pruned_length_bound",
                   "pruned_dominated", "created")      # engine.csp.labeling.cpu.HISTORY


def history_series(history, columns) -> tuple[str, np.ndarray, dict]:
    """The labeling's course as (x axis label, x, {line key: y}). The CPU records
    cumulative counts every 64 settled labels; the GPU one row per iteration
    (engine.csp.labeling.gpu.GPU_HISTORY), shown as running totals, with K_t."""
    columns = tuple(columns or HISTORY_COLUMNS)
    rows = np.zeros((0, len(columns))) if history is None else np.asarray(history, float)
    col = {name: rows[:, i] for i, name in enumerate(columns)}
    if "iteration" not in col:
        return "labels settled", col["settled"], {k: col[k] for k, _, _ in HISTORY_LINES
                                                  if k in col}
    dominated = col["pruned_hash"] + col["pruned_list"] + col["dead"]
    return "iterations", col["iteration"], {
        "frontier": col["frontier"], "k_t": col["k_t"],
        "pruned_cost_bound": np.cumsum(col["pruned_cost_bound"]),
        "pruned_length_bound": np.cumsum(col["pruned_length_bound"]),
        "pruned_dominated": np.cumsum(dominated)}


def metric_text(value: float, unit: str) -> str:
    """``value`` of a metric in real units: "12:05 min" (tenths when not a whole
    second, so a budget one unit below another reads differently), "3.40 km", "120 units"."""
    u = Unit(unit)
    if u.kind == "time":
        seconds = value * u.size
        if abs(seconds - round(seconds)) < 1e-6 or seconds >= 3600:
            return format_duration(seconds)
        m, s = divmod(round(seconds, 1), 60)
        return f"{int(m)}:{s:04.1f} min" if m else f"{s:.1f} s"
    if u.kind == "length":
        return u.format(value)
    return f"{value:,} {unit or 'units'}"


def axis_scale(name: str, unit: str) -> tuple[float, str]:
    """(factor, axis label): a metric's raw values times factor on a chart axis."""
    u = Unit(unit)
    factor, suffix = u.axis()
    return factor, f"{name} ({suffix if u.kind else unit or suffix})"


class CspCharts(HeaderedChart):
    picked = Signal(int)      # a Pareto point (its index in result.pareto) was clicked

    def __init__(self, parent=None) -> None:
        super().__init__(parent=parent)
        self.pareto_plot = self.graphics.addPlot(row=0, col=0)
        self.history_plot = self.graphics.addPlot(row=0, col=1)
        self.graphics.ci.layout.setColumnStretchFactor(0, 3)    # the Pareto chart is the answer
        self.graphics.ci.layout.setColumnStretchFactor(1, 2)
        style_plot(self.history_plot, "labels (log)", "labels settled", grid=(True, True))
        self.history_plot.setLogMode(y=True)       # counts of 1 to millions, each series readable
        self._build_pareto_items()
        self.history_curves = {}
        for name, label, color in HISTORY_LINES:
            self.history_curves[name] = self.history_plot.plot(pen=pg.mkPen(color, width=2), connect="finite")
        self.pareto_plot.vb.sigResized.connect(lambda *_: self._fit())     # markers stay inside
        self._fitted: list = []
        self._history_rows = 0
        self._points = np.zeros((0, 2), np.int64)     # raw (length, cost) of the Pareto set
        self._chosen: tuple[int, int] | None = None
        self._budget: float | None = None
        self._picked: int | None = None
        self.set_metrics("length", "", "cost", "")
        self.clear("Cost-budgeted path mode (B): click a start and a destination")

    def _build_pareto_items(self) -> None:
        p = self.pareto_plot
        self.frontier = pg.PlotDataItem(pen=pg.mkPen((170, 170, 190), width=1))
        self.scatter = pg.ScatterPlotItem(size=10, pen=pg.mkPen((90, 60, 130), width=1),
                                          brush=pg.mkBrush(POINT_COLOR), hoverable=True,
                                          hoverSize=13, tip=None)
        self.scatter.sigClicked.connect(self._on_clicked)
        self.chosen_item = pg.ScatterPlotItem(size=17, symbol="d", pen=pg.mkPen("k", width=1),
                                              brush=pg.mkBrush(PATH_COLOR))
        self.picked_item = pg.ScatterPlotItem(size=20, symbol="o", brush=None,
                                              pen=pg.mkPen((20, 20, 20), width=2.5))
        self.refs = {name: pg.ScatterPlotItem(size=12, symbol="s", brush=None,
                                              pen=pg.mkPen(color, width=2.5))
                     for name, color in (("shortest", SHORTEST_COLOR), ("least_cost", LEAST_COST_COLOR))}
        self.budget_item = pg.InfiniteLine(angle=0, movable=False,
                                           pen=pg.mkPen(BUDGET_COLOR, width=1.5, style=Qt.DashLine),
                                           label="", labelOpts={"position": 0.97, "color": BUDGET_COLOR,
                                                                "anchors": [(1, 1), (1, 1)]})
        for z, item in enumerate((self.frontier, *self.refs.values(), self.scatter, self.picked_item,
                                  self.chosen_item)):
            item.setZValue(z)
            p.addItem(item)
        p.addItem(self.budget_item, ignoreBounds=True)
        self.pareto_keys = [key(POINT_COLOR, "Pareto point", DOT), key(PATH_COLOR, "answer", DIAMOND),
                            key(SHORTEST_COLOR, "shortest", SQUARE), key(LEAST_COST_COLOR, "least cost", SQUARE)]
        self.graphics.setToolTip("Click a Pareto point: its path on the map")   # the budget line says its name

    # ------------------------------------------------------------------ drawing
    def set_metrics(self, minimize: str, length_unit: str, budget_metric: str, cost_unit: str) -> None:
        """The metrics on the axes (raw values are scaled to km or minutes)."""
        self._units = (length_unit, cost_unit)
        (self._sx, x_label), (self._sy, y_label) = axis_scale(minimize, length_unit), \
            axis_scale(budget_metric, cost_unit)
        style_plot(self.pareto_plot, y_label, x_label, grid=(True, True))

    def clear(self, title: str = "") -> None:
        """Nothing charted; ``title`` on top."""
        self._set_points(np.zeros((0, 2), np.int64), None, {})
        self._set_budget(None)
        self._set_history(None, "")
        self.header.set(title, [], "")

    def show_result(self, result, refs: dict[str, tuple[int, int]], title: str) -> None:
        """A CspResult: its Pareto set (or the answer alone), its budget and its course;
        ``refs``: "shortest"/"least_cost" -> (length, cost)."""
        pareto = result.pareto or []
        points = np.array([(p.length, p.cost) for p in pareto], np.int64).reshape(-1, 2)
        if not len(points):
            points = np.array([[result.length, result.cost]], np.int64)
        self._set_points(points, (result.length, result.cost), refs)
        self._set_budget(result.budget)
        keys, note = self._set_history(result.history, columns=result.history_columns)
        self.header.set(title, self.pareto_keys + keys, note)
        self._fit(refs)

    def show_failure(self, budget: int, refs: dict[str, tuple[int, int]], title: str) -> None:
        """No path within ``budget``: the references and the budget line only."""
        self._set_points(np.zeros((0, 2), np.int64), None, refs)
        self._set_budget(budget)
        self._set_history(None, "no path within the budget")
        self.header.set(title, self.pareto_keys[2:], "")
        self._fit(refs)

    def _set_points(self, points: np.ndarray, chosen, refs: dict) -> None:
        self._points, self._chosen, self._picked = points, chosen, None
        x, y = points[:, 0] * self._sx, points[:, 1] * self._sy
        order = np.argsort(x, kind="stable")
        self.frontier.setData(x[order], y[order])
        self.scatter.setData(x=x, y=y, data=np.arange(len(points)))
        self.picked_item.setData([], [])
        if chosen is None:
            self.chosen_item.setData([], [])
        else:
            self.chosen_item.setData([chosen[0] * self._sx], [chosen[1] * self._sy])
        for name, item in self.refs.items():
            if name in refs:
                item.setData([refs[name][0] * self._sx], [refs[name][1] * self._sy])
            else:
                item.setData([], [])

    def _set_budget(self, budget: float | None) -> None:
        self._budget = budget
        self.budget_item.setVisible(budget is not None)
        if budget is not None:
            self.budget_item.setPos(budget * self._sy)
            text = f"budget {metric_text(budget, self._units[1])}"
            self.budget_item.label.setFormat(text.replace("{", "{{").replace("}", "}}"))

    def _fit(self, refs: dict | None = None) -> None:
        """Every point, reference and the budget in view, each marker whole: the padding
        is MARKER_PX pixels of the plot as it is now (again on every resize)."""
        if refs is not None:
            self._fitted = [*self._points.tolist(), *refs.values()]
            if self._budget is not None:
                self._fitted.append((self._fitted[0][0] if self._fitted else 0, self._budget))
        if not self._fitted:
            return
        xy = np.asarray(self._fitted, float) * (self._sx, self._sy)
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(hi - lo, np.maximum(np.abs(hi) * 0.04, 1e-6))
        px = np.array([self.pareto_plot.vb.width(), self.pareto_plot.vb.height()])
        share = np.where(px > 4 * MARKER_PX, MARKER_PX / np.maximum(px - 2 * MARKER_PX, 1), 0.08)
        pad = span * np.maximum(share, 0.04)
        self.pareto_plot.setXRange(lo[0] - pad[0], hi[0] + pad[0], padding=0)
        self.pareto_plot.setYRange(lo[1] - pad[1], hi[1] + pad[1], padding=0)

    def _set_history(self, history, note: str = "no labeling: the bounds answered",
                     columns=None) -> tuple[list[str], str]:
        """Draw the course; its legend keys, and a note naming the series left out
        because they are zero all along."""
        x_label, x, lines = history_series(history, columns)
        self._history_rows = len(x)
        drawn = {name for name, y in lines.items() if np.any(y)}
        for name, curve in self.history_curves.items():      # a zero has no log: the line starts later
            curve.setData(x, np.where(lines[name] > 0, lines[name], np.nan)) if name in drawn else curve.setData([], [])
        self.history_plot.setLabel("bottom", x_label)
        if len(x):
            self.history_plot.enableAutoRange()
        self.history_plot.setTitle(None if len(x) else note, color="#777", size="9pt")
        keys = [("pruned by " if name.startswith("pruned") else "") + key(color, label, LINE)
                for name, label, color in HISTORY_LINES if name in drawn]
        for i, k in enumerate(keys[1:], 1):                # "pruned by" once, before the first
            if k.startswith("pruned by ") and keys[i - 1].startswith("pruned by "):
                keys[i] = k.removeprefix("pruned by ")
        zero = [label for name, label, _ in HISTORY_LINES
                if name.startswith("pruned") and name in lines and name not in drawn and len(x)]
        return keys, f"none pruned by {' or '.join(zero)}" if zero else ""

    def history_series_shown(self) -> list[str]:
        """The course's series drawn (tests)."""
        return [name for name, curve in self.history_curves.items()
                if curve.getData()[0] is not None and len(curve.getData()[0])]

    # ----------------------------------------------------------------- picking
    def _on_clicked(self, item, points, ev=None) -> None:
        if len(points):
            self.pick(int(points[0].data()))

    def pick(self, i: int) -> None:
        """What a click on Pareto point ``i`` does: ring it and say so (``picked``)."""
        length, cost = self._points[i]
        self._picked = i
        self.picked_item.setData([length * self._sx], [cost * self._sy])
        self.picked.emit(i)

    # --------------------------------------------------------------- test hooks
    def pareto_points(self) -> list[tuple[int, int]]:
        return [tuple(map(int, p)) for p in self._points]

    def chosen(self) -> tuple[int, int] | None:
        return self._chosen

    def budget_line(self) -> float | None:
        return self._budget

    def picked_index(self) -> int | None:
        return self._picked

    def history_points(self) -> int:
        """Rows of the labeling's course charted (whichever of its series are drawn)."""
        return self._history_rows

    def point_scene_pos(self, i: int):
        """Where Pareto point ``i`` is drawn, in the chart's scene (tests click there)."""
        length, cost = self._points[i]
        return self.pareto_plot.vb.mapViewToScene(pg.Point(length * self._sx, cost * self._sy))
