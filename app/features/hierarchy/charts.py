"""Charts of the contraction hierarchy (pyqtgraph, in docks of the main window).

``ContractionChart`` fills while CU-CH runs: per iteration (level) a stacked bar of the
five step times (score, select, shortcut, update, extract), and beside it, on a log
axis, how many nodes the level contracted (|U_l|) and how many were live (|V_l|).
Side by side, each chart gets the dock's full height; every level is in view, and the
legend sits in the header line (app/charts.py), never in a row of its own.

``PhastChart`` shows one PHAST query level by level: the upward sweep (level 0 up),
the core, then the downward sweep (top level down), one bar each, and an "other" bar
for the rest of the query's time (parent arcs, set-up), so the parts add up to the
total that the header states as a sum.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from app import map_style as style
from app.charts import DOT, LINE, HeaderedChart, key, style_plot

STEPS = ("score", "select", "shortcut", "update", "extract")
STEP_COLORS = ((68, 119, 170), (102, 204, 238), (34, 136, 51), (204, 187, 68), (238, 102, 119))
CONTRACTED_COLOR = (170, 51, 119)
LIVE_COLOR = (120, 120, 120)
SWEEP_COLORS = {"up": style.UP_COLOR, "core": (120, 120, 120), "down": style.DOWN_COLOR}   # as on the map
SWEEP_LABELS = {"up": "upward", "core": "core (distance matrix)", "down": "downward"}
OTHER_COLOR = (190, 190, 190)
OTHER_LABEL = "other (parent arcs, set-up)"
OTHER_GAP, OTHER_WIDTH = 3.0, 2.0       # the "other" bar: apart from the levels, wider
MAX_TICKS = 24
CLIP_OVER = 4.0          # a level bar past this many times the 95th percentile is cut ...
MAX_CLIPPED = 3          # ... and labelled with its value (the tallest few)


class ContractionChart(HeaderedChart):
    def __init__(self, parent=None) -> None:
        super().__init__("Contract the graph: Hierarchy ▸ Contract", parent)
        self.times = self.graphics.addPlot(row=0, col=0)
        self.sizes = self.graphics.addPlot(row=0, col=1)
        style_plot(self.times, "step time (ms)", "iteration (level)", grid=(False, True))
        style_plot(self.sizes, "nodes", "iteration (level)", grid=(False, True))
        self.sizes.setLogMode(y=True)
        self.sizes.setXLink(self.times)
        self.graphics.ci.layout.setColumnStretchFactor(0, 5)    # the step times have more to show,
        self.graphics.ci.layout.setColumnStretchFactor(1, 4)    # the sizes 300 px and more at 1280x800
        self.bars = {}
        for step, color in zip(STEPS, STEP_COLORS):
            self.bars[step] = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8,
                                              brush=pg.mkBrush(color), pen=None)
            self.times.addItem(self.bars[step])
        self.live = self.sizes.plot(pen=pg.mkPen(LIVE_COLOR, width=1.5), symbol="o", symbolSize=4,
                                    symbolBrush=LIVE_COLOR, symbolPen=None)
        self.contracted = self.sizes.plot(pen=pg.mkPen(CONTRACTED_COLOR, width=2), symbol="o",
                                          symbolSize=6, symbolBrush=CONTRACTED_COLOR, symbolPen=None)
        self.records: list[dict] = []

    def start(self, title: str) -> None:
        """A new contraction: empty bars, ``title`` on top."""
        self.records = []
        self._redraw()
        self.set_title(title)

    def set_title(self, title: str, color: str = "#333") -> None:
        self.header.set(title, color=color)

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
        measured = []
        for step in STEPS:
            h = np.array([r["ms"].get(step, 0.0) for r in recs], dtype=float)
            self.bars[step].setOpts(x=x, y0=y0.copy(), height=h)
            y0 += h
            if h.any() or not recs:
                measured.append(step)
        self.live.setData(x, np.array([max(r["nodes"], 1) for r in recs], dtype=float))
        self.contracted.setData(x, np.array([max(r["contracted"], 1) for r in recs], dtype=float))
        last = float(x.max()) if recs else 0.0
        for plot in (self.times, self.sizes):          # every level in view, in both
            plot.setXRange(min(float(x.min()) if recs else 0.0, 0.0) - 0.6, max(last, 1.0) + 0.6, padding=0)
        self.times.setYRange(0, max(float(y0.max()) if recs else 0.0, 1e-3) * 1.1, padding=0)
        if recs:
            top = max(r["nodes"] for r in recs)
            self.sizes.setYRange(0, math.log10(max(top, 10)) * 1.05, padding=0)
        self.header.set(keys=[key(c, s) for s, c in zip(STEPS, STEP_COLORS) if s in measured] +
                        [key(CONTRACTED_COLOR, "|Uₗ| contracted", DOT), key(LIVE_COLOR, "|Vₗ| live nodes", LINE)])


class PhastChart(HeaderedChart):
    def __init__(self, parent=None) -> None:
        super().__init__("Tree mode with a hierarchy: click a node (PHAST)", parent)
        self.header.set(color="#555")
        self.plot_item = self.graphics.addPlot(row=0, col=0)
        style_plot(self.plot_item, "time (ms)", "level: upward sweep → core → downward sweep",
                   grid=(False, True))
        self.bars = {}
        for name, color in (*SWEEP_COLORS.items(), ("other", OTHER_COLOR)):
            self.bars[name] = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8,
                                              brush=pg.mkBrush(color), pen=None)
            self.plot_item.addItem(self.bars[name])
        self.clipped_labels: list[pg.TextItem] = []
        self.other_ms = 0.0

    def show_levels(self, level_ms: dict, title: str, total_ms: float | None = None) -> None:
        """One query's per-level times; ``total_ms``, the query's time, when known: what
        the levels and the core leave of it (parent arcs, set-up, a GPU's "init") is
        drawn as "other", so the bars add up to the total."""
        up = np.asarray(level_ms.get("up", []), dtype=float)
        down = np.asarray(level_ms.get("down", []), dtype=float)
        core = float(level_ms.get("core", 0.0) or 0.0)
        swept = float(up.sum() + down.sum()) + core
        named = sum(float(v) for k, v in level_ms.items() if k not in ("up", "down", "core"))
        self.other_ms = max(0.0, float(total_ms) - swept) if total_ms is not None else named
        x = {"up": np.arange(up.size, dtype=float), "core": np.array([float(up.size)]),
             "down": up.size + 1 + np.arange(down.size, dtype=float),
             "other": np.array([up.size + down.size + OTHER_GAP]) if self.other_ms > 0 else np.zeros(0)}
        h = {"up": up, "core": np.array([core]), "down": down, "other": np.array([self.other_ms])[:x["other"].size]}
        top = self._top(np.concatenate([up, [core], down]))
        for name, bars in self.bars.items():
            bars.setOpts(x=x[name], height=np.minimum(h[name], top),
                         width=OTHER_WIDTH if name == "other" else 0.8)
        self._label_clipped(x, h, top)
        self._ticks(up.size, down.size)
        right = x["other"][0] + OTHER_WIDTH / 2 if self.other_ms > 0 else up.size + down.size + 0.6
        self.plot_item.setXRange(-0.6, right, padding=0)
        self.plot_item.setYRange(0, top, padding=0)
        sums = " + ".join(f"{name} {ms:.2f}" for name, ms in (
            ("up", up.sum()), ("core", core), ("down", down.sum()), ("other", self.other_ms)) if ms > 0 or name != "other")
        keys = [key(SWEEP_COLORS[n], SWEEP_LABELS[n]) for n in ("up", "core", "down") if n != "core" or core > 0]
        keys += [key(OTHER_COLOR, OTHER_LABEL)] if self.other_ms > 0 else []
        self.header.set(f"{title} · {swept + self.other_ms:.2f} ms = {sums}", keys, color="#333")

    @staticmethod
    def _top(levels: np.ndarray) -> float:
        """The y range's top: the tallest bar, or CLIP_OVER times the 95th percentile when
        one level's jitter would flatten all the others (those are cut and labelled)."""
        positive = levels[levels > 0]
        if not positive.size:
            return 1e-3
        return max(min(float(positive.max()), CLIP_OVER * float(np.percentile(positive, 95))), 1e-3) * 1.1

    def _label_clipped(self, x: dict, h: dict, top: float) -> None:
        """The value of every bar cut at ``top`` (at most MAX_CLIPPED, the tallest), and of "other"."""
        for item in self.clipped_labels:
            self.plot_item.removeItem(item)
        cut = sorted(((float(hi), float(xi), name) for name in ("up", "core", "down")
                      for xi, hi in zip(x[name], h[name]) if hi > top), reverse=True)[:MAX_CLIPPED]
        cut += [(self.other_ms, float(x["other"][0]), "other")] if x["other"].size else []
        self.clipped_labels = []
        for ms, xi, name in cut:
            text = pg.TextItem(f"{'other ' if name == 'other' else ''}{ms:.2f} ms", color=(90, 90, 90),
                               anchor=(1, 0))
            text.setPos(xi - (OTHER_WIDTH if name == "other" else 1) / 2, top)
            self.plot_item.addItem(text)
            self.clipped_labels.append(text)

    def _ticks(self, n_up: int, n_down: int) -> None:
        """Level numbers at multiples of ``every``, kept clear of the "core" label."""
        every = max(1, math.ceil((n_up + n_down + 1) / MAX_TICKS))
        ticks = [(float(n_up), "core")]
        ticks += [(float(i), str(i)) for i in range(0, n_up, every) if n_up - i > every]
        ticks += [(float(n_up + n_down - i), str(i)) for i in range(0, n_down, every)
                  if n_down - i > every]
        self.plot_item.getAxis("bottom").setTicks([ticks])

    def bar_count(self) -> int:
        """Level and core bars drawn (tests; "other" not counted)."""
        return sum(len(b.opts["x"]) for name, b in self.bars.items() if name != "other")
