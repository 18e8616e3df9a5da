"""The per-level CRP customization chart (issue #13), redrawn on every metric edit.

Left: one horizontal bar per level of the overlay, stacked by the phases the backend
measured (the keys of a level record's "ms": "search" on the CPU; "mapping", "search",
"collection" on the GPU), under a "decode" bar for the metric decoder; each row is
labelled "L0 (microcode)" with its variant and ends in its total; an "other" row holds
what the levels' phases leave of the run's time, so the rows add up to the total. The
header gives the total time, the GPU memory in use (or "CPU") and the legend of the
phases measured. Right: the total customization time (decode + levels) of the last
HISTORY_RUNS runs.
"""
from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics

from app.charts import HeaderedChart, key, style_plot

HISTORY_RUNS = 30
DECODE = "decode"
OTHER = "other"
OTHER_MIN_SHARE = 0.005    # a rest below this share of the run is rounding, not a row
PHASE_COLORS = {DECODE: (204, 187, 68), "mapping": (102, 204, 238), "search": (68, 119, 170),
                "collection": (34, 136, 51), OTHER: (200, 200, 200)}
OTHER_COLORS = ((238, 102, 119), (170, 51, 119), (187, 187, 187))   # phases not named above
HISTORY_COLOR = (68, 119, 170)
BAR_HEIGHT = 0.7


def format_ms(ms: float) -> str:
    """Milliseconds with the digits that matter: 0.84, 12.3, 1,234."""
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:,.0f}"


class CustomizationChart(HeaderedChart):
    def __init__(self, parent=None) -> None:
        super().__init__("Customize a metric to see its time per level", parent)
        self.levels_plot = self.graphics.addPlot(row=0, col=0)
        self.history_plot = self.graphics.addPlot(row=0, col=1)   # side by side: each the dock's height
        style_plot(self.levels_plot, "", "time (ms)")
        self._metrics = QFontMetrics(self.levels_plot.getAxis("left").style.get("tickFont") or QFont())
        style_plot(self.history_plot, "total (ms)", f"customization run (last {HISTORY_RUNS})")
        self.levels_plot.showGrid(x=True, alpha=0.15)
        self.history_plot.showGrid(y=True, alpha=0.15)
        self.levels_plot.invertY(True)                       # decode on top, then L0, L1, ...
        self.graphics.ci.layout.setColumnStretchFactor(0, 3)
        self.graphics.ci.layout.setColumnStretchFactor(1, 2)
        self.history_curve = self.history_plot.plot(
            pen=pg.mkPen(HISTORY_COLOR, width=2), symbol="o", symbolSize=5,
            symbolBrush=HISTORY_COLOR, symbolPen=None)
        self.bars: dict[str, pg.BarGraphItem] = {}           # phase -> its stacked bars
        self._row_labels: list[pg.TextItem] = []
        self._history: deque[float] = deque(maxlen=HISTORY_RUNS)
        self.records: list[dict] = []
        self.decode_ms: float | None = None
        self._top = 0.0                                      # the longest row, ms
        self.levels_plot.vb.sigResized.connect(lambda *_: self._fit_levels())
        self.levels_ms: float | None = None                 # the run's time for its levels

    # ------------------------------------------------------------ public
    def show_run(self, records: list[dict], decode_ms: float, total_ms: float, backend: str,
                 memory_bytes: int | None) -> None:
        """A finished customization: its level records replace the bars, its total
        (decode + levels) joins the history."""
        self.records, self.decode_ms, self.levels_ms = list(records), float(decode_ms), float(total_ms)
        self._redraw()
        total = float(decode_ms) + float(total_ms)
        self._history.append(total)
        self._draw_history()
        where = f"GPU memory: {memory_bytes / 2**20:.1f} MiB" if memory_bytes is not None else \
            ("CPU" if backend.lower() == "cpu" else backend)
        self.header.set(f"Customization: {format_ms(total)} ms  (decode {format_ms(decode_ms)}"
                             f" + levels {format_ms(total_ms)})  ·  {where}")

    def begin_run(self) -> None:
        """A customization started: empty bars until its levels come in (add_level)."""
        self.records, self.decode_ms, self.levels_ms = [], None, None
        self._redraw()
        self.header.set("Customizing…")

    def add_level(self, record: dict) -> None:
        """A level finished while a run is in progress; a level at or below the last
        one shown starts a new run."""
        if self.decode_ms is not None or (self.records and record["level"] <= self.records[-1]["level"]):
            self.records, self.decode_ms, self.levels_ms = [], None, None
        self.records.append(record)
        self._redraw()
        self.header.set(f"Customizing… level {record['level']} done")

    def history(self) -> list[float]:
        """Total customization time (ms) of the last runs, oldest first."""
        return list(self._history)

    def bar_count(self) -> int:
        """Level rows drawn (tests; the decode row not counted)."""
        return len(self.records)

    def row_labels(self) -> list[str]:
        return [label for _, label in self._ticks()]

    # ------------------------------------------------------------ drawing
    def _rows(self) -> list[dict]:
        """Each row's {phase: ms}: decode (when known), the levels, then "other", what the
        levels' phases leave of the run's time (when it is more than rounding)."""
        rows = [{DECODE: self.decode_ms}] if self.decode_ms is not None else []
        rows += [r.get("ms", {}) for r in self.records]
        if self.levels_ms is not None:
            rest = self.levels_ms - sum(float(v or 0.0) for r in self.records for v in r.get("ms", {}).values())
            if rest > OTHER_MIN_SHARE * (self.levels_ms + (self.decode_ms or 0.0)):
                rows.append({OTHER: rest})
        return rows

    def _phases(self, rows: list[dict]) -> list[str]:
        """Phases in the order first measured (decode first when known)."""
        seen = []
        for ms in rows:
            seen += [p for p in ms if p not in seen]
        return seen

    def legend(self) -> list[str]:
        """The phases the legend names (tests)."""
        return self.header.legend()

    def _bar_item(self, phase: str) -> pg.BarGraphItem:
        item = self.bars.get(phase)
        if item is None:
            others = [p for p in self.bars if p not in PHASE_COLORS]
            color = PHASE_COLORS.get(phase, OTHER_COLORS[len(others) % len(OTHER_COLORS)])
            item = pg.BarGraphItem(x0=np.zeros(0), y=np.zeros(0), width=np.zeros(0),
                                   height=BAR_HEIGHT, brush=pg.mkBrush(color), pen=pg.mkPen("w", width=0.5))
            self.levels_plot.addItem(item)
            self.bars[phase] = item
        return item

    def _ticks(self) -> list[tuple[float, str]]:
        first = 0 if self.decode_ms is None else 1
        ticks = [(0.0, DECODE)] if first else []
        ticks += [(float(first + i), f"L{r['level']} ({r.get('variant', '?')})")
                  for i, r in enumerate(self.records)]
        if len(self._rows()) > len(ticks):
            ticks.append((float(len(ticks)), OTHER))
        return ticks

    def _redraw(self) -> None:
        """Stack each row's phases left to right; its total at the end of the bar."""
        per_row = self._rows()
        rows = len(per_row)
        left = np.zeros(rows)
        y = np.arange(rows, dtype=float)
        phases = self._phases(per_row)
        for phase in phases:
            w = np.array([float(ms.get(phase, 0.0) or 0.0) for ms in per_row])
            self._bar_item(phase).setOpts(x0=left.copy(), y=y, width=w, height=BAR_HEIGHT)
            left += w
        for phase, item in self.bars.items():
            if phase not in phases:
                item.setOpts(x0=np.zeros(0), y=np.zeros(0), width=np.zeros(0))
        self._label_rows(left)
        self.header.set(keys=[key(self.bars[p].opts["brush"].color().getRgb(), p) for p in phases])
        ticks = self._ticks()
        axis = self.levels_plot.getAxis("left")
        axis.setTicks([ticks])
        # the axis grows to its labels only on a later layout pass: size it now
        width = max((self._metrics.horizontalAdvance(t) for _, t in ticks), default=0)
        axis.setWidth(width + 16)
        self._top = float(left.max()) if rows else 0.0
        self._fit_levels()
        self.levels_plot.setYRange(-0.6, max(rows, 1) - 0.4, padding=0)

    def _fit_levels(self) -> None:
        """Room right of the longest bar for its total's label, in pixels of the plot now."""
        label = max((self._metrics.horizontalAdvance(i.textItem.toPlainText()) for i in self._row_labels),
                    default=0) + 12
        px = self.levels_plot.vb.width()
        room = label / (px - label) if px > 2 * label else 0.6
        self.levels_plot.setXRange(0, max(self._top, 1e-3) * (1 + room), padding=0)

    def _label_rows(self, totals: np.ndarray) -> None:
        for item in self._row_labels:
            self.levels_plot.removeItem(item)
        self._row_labels = []
        for row, total in enumerate(totals):
            text = pg.TextItem(f" {format_ms(total)} ms", color=(60, 60, 60), anchor=(0, 0.5))
            text.setPos(float(total), float(row))
            self.levels_plot.addItem(text)
            self._row_labels.append(text)

    def _draw_history(self) -> None:
        h = np.array(self._history, dtype=float)
        x = np.arange(1, h.size + 1, dtype=float)
        self.history_curve.setData(x, h)
        self.history_plot.setXRange(0.5, max(h.size, 2) + 0.5, padding=0)
        step = max(1, -(-h.size // 10))                         # whole runs, at most ~10 ticks
        self.history_plot.getAxis("bottom").setTickSpacing(step, step)
        self.history_plot.setYRange(0, max(float(h.max()) if h.size else 0.0, 1e-3) * 1.15, padding=0)
