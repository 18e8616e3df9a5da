"""Charts of the contraction hierarchy (pyqtgraph, in docks of the main window).

``ContractionChart`` fills while CU-CH runs: per iteration (level) a stacked bar of the
five step times (score, select, shortcut, update, extract), and beside it, on a log
axis, how many nodes the level contracted (|U_l|) and how many were live (|V_l|).
Side by side, each chart gets the dock's full height: stacked, a dock a quarter of a
1280x800 window tall left each of them a strip too thin to read.

``PhastChart`` shows one PHAST query level by level: the upward sweep (level 0 up),
the core, then the downward sweep (top level down), one bar each.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from app import map_style as style
from app.widgets import style_plot

STEPS = ("score", "select", "shortcut", "update", "extract")
STEP_COLORS = ((68, 119, 170), (102, 204, 238), (34, 136, 51), (204, 187, 68), (238, 102, 119))
CONTRACTED_COLOR = (170, 51, 119)
LIVE_COLOR = (120, 120, 120)
SWEEP_COLORS = {"up": style.UP_COLOR, "core": (120, 120, 120), "down": style.DOWN_COLOR}   # as on the map
MAX_TICKS = 24


class ContractionChart(pg.GraphicsLayoutWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.title_label = self.addLabel("Contract the graph: Hierarchy ▸ Contract", row=0, col=0,
                                         colspan=2, color="#555", size="10pt")
        self.legend = pg.LegendItem(colCount=len(STEPS), labelTextColor="k", frame=False)
        self.addItem(self.legend, row=1, col=0)          # its own row: never over the bars
        self.sizes_legend = pg.LegendItem(colCount=2, labelTextColor="k", frame=False)
        self.addItem(self.sizes_legend, row=1, col=1)
        self.times = self.addPlot(row=2, col=0)
        self.sizes = self.addPlot(row=2, col=1)
        self.sizes.setXLink(self.times)
        style_plot(self.times, "step time (ms)", "iteration (level)", grid=(False, True))
        style_plot(self.sizes, "nodes", "iteration (level)", grid=(False, True))
        self.sizes.setLogMode(y=True)
        self.ci.layout.setColumnStretchFactor(0, 3)    # the step times have more to show
        self.ci.layout.setColumnStretchFactor(1, 2)
        self.ci.layout.setContentsMargins(4, 2, 4, 2)  # tight: the plots get the dock's height
        self.ci.layout.setVerticalSpacing(0)
        for legend in (self.legend, self.sizes_legend):
            legend.layout.setContentsMargins(0, 0, 0, 0)
        self.bars = {}
        for step, color in zip(STEPS, STEP_COLORS):
            self.bars[step] = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8,
                                              brush=pg.mkBrush(color), pen=None)
            self.times.addItem(self.bars[step])
            self.legend.addItem(self.bars[step], step)
        self.live = self.sizes.plot(pen=pg.mkPen(LIVE_COLOR, width=1.5), symbol="o", symbolSize=4,
                                    symbolBrush=LIVE_COLOR, symbolPen=None)
        self.contracted = self.sizes.plot(pen=pg.mkPen(CONTRACTED_COLOR, width=2), symbol="o",
                                          symbolSize=6, symbolBrush=CONTRACTED_COLOR, symbolPen=None)
        self.sizes_legend.addItem(self.contracted, "|Uₗ| contracted")
        self.sizes_legend.addItem(self.live, "|Vₗ| live nodes")
        self.records: list[dict] = []
        self.title = ""

    def start(self, title: str) -> None:
        """A new contraction: empty bars, ``title`` on top."""
        self.records = []
        self._redraw()
        self.set_title(title)

    def set_title(self, title: str, color: str = "#333") -> None:
        self.title = title
        self.title_label.setText(title, color=color, size="10pt")

    def add_iteration(self, record: dict) -> None:
        self.records.append(record)
        self._redraw()

    def show_records(self, records: list[dict], title: str) -> None:
        self.records = list(records)
        self._redraw()
        self.set_title(title)

    def bar_count(self) -> int:
        """Iterations drawn (tests)."""
        return len(self.bars[STEPS[0]].opts["x"])

    def point_count(self) -> int:
        x, _ = self.contracted.getData()
        return 0 if x is None else len(x)

    def _redraw(self) -> None:
        recs = self.records
        x = np.array([r["level"] for r in recs], dtype=float)
        y0 = np.zeros(len(recs))
        for step in STEPS:
            h = np.array([r["ms"].get(step, 0.0) for r in recs], dtype=float)
            self.bars[step].setOpts(x=x, y0=y0.copy(), height=h)
            y0 += h
        self.live.setData(x, np.array([max(r["nodes"], 1) for r in recs], dtype=float))
        self.contracted.setData(x, np.array([max(r["contracted"], 1) for r in recs], dtype=float))
        n = max(len(recs), 1)
        self.times.setXRange(-0.6, n - 0.4, padding=0)
        self.times.setYRange(0, max(float(y0.max()) if recs else 0.0, 1e-3) * 1.25, padding=0)
        if recs:
            top = max(r["nodes"] for r in recs)
            self.sizes.setYRange(0, math.log10(max(top, 10)) * 1.08, padding=0)


class PhastChart(pg.GraphicsLayoutWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.title_label = self.addLabel("Tree mode with a hierarchy: click a node (PHAST)",
                                         row=0, col=0, color="#555", size="10pt")
        self.legend = pg.LegendItem(colCount=3, labelTextColor="k", frame=False)
        self.addItem(self.legend, row=1, col=0)
        self.plot_item = self.addPlot(row=2, col=0)
        style_plot(self.plot_item, "time (ms)", "level: upward sweep → core → downward sweep",
                   grid=(False, True))
        self.bars = {}
        for name, color in SWEEP_COLORS.items():
            label = {"up": "upward", "core": "core (distance matrix)", "down": "downward"}[name]
            self.bars[name] = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8,
                                              brush=pg.mkBrush(color), pen=None)
            self.plot_item.addItem(self.bars[name])
            self.legend.addItem(self.bars[name], label)
        self.title = ""

    def show_levels(self, level_ms: dict, title: str) -> None:
        up = np.asarray(level_ms.get("up", []), dtype=float)
        down = np.asarray(level_ms.get("down", []), dtype=float)
        core = float(level_ms.get("core", 0.0) or 0.0)
        xu = np.arange(up.size, dtype=float)
        xd = up.size + 1 + np.arange(down.size, dtype=float)
        self.bars["up"].setOpts(x=xu, height=up)
        self.bars["core"].setOpts(x=np.array([float(up.size)]), height=np.array([core]))
        self.bars["down"].setOpts(x=xd, height=down)
        # level numbers at multiples of ``every``, kept clear of the "core" label
        every = max(1, math.ceil((up.size + down.size + 1) / MAX_TICKS))
        ticks = [(float(up.size), "core")]
        ticks += [(float(i), str(i)) for i in range(0, up.size, every) if up.size - i > every / 2]
        ticks += [(float(up.size + down.size - i), str(i)) for i in range(0, down.size, every)
                  if down.size - i > every / 2]
        self.plot_item.getAxis("bottom").setTicks([ticks])
        top = max(float(up.max()) if up.size else 0.0, float(down.max()) if down.size else 0.0, core)
        self.plot_item.setXRange(-0.6, up.size + down.size + 0.6, padding=0)
        self.plot_item.setYRange(0, max(top, 1e-3) * 1.1, padding=0)
        self.title = title
        self.title_label.setText(title, color="#333", size="10pt")

    def bar_count(self) -> int:
        return sum(len(b.opts["x"]) for b in self.bars.values())
