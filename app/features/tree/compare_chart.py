"""The SSSP comparison as a bar chart: one horizontal bar per method and the reference.

Bars show the best time of a few runs after a warm-up (``Comparison`` from the engine
thread), labelled by method, milliseconds on the axis; the title names the source, the
backend and whether every method matched the reference distances.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics

from engine.sssp.compare import REFERENCE, Comparison

from app.charts import style_plot

EXACT_COLOR = (60, 120, 200)
WRONG_COLOR = (200, 50, 40)
REFERENCE_COLOR = (150, 150, 150)


class CompareChart(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, background="w")
        item = self.getPlotItem()
        style_plot(item, "", "time (ms), best of the timed runs after a warm-up", grid=(True, False))
        self.bars: pg.BarGraphItem | None = None
        self.comparison: Comparison | None = None
        self.title = ""
        item.setTitle("Compare: right-click a node ▸ Compare SSSP methods from here", color="#555")

    def show_comparison(self, c: Comparison, source_id: int) -> None:
        item = self.getPlotItem()
        item.clear()
        self.comparison = c
        ms = np.array([t.ms for t in c.timings])
        y = np.arange(len(ms))[::-1].astype(float)        # the first method on top
        colors = [REFERENCE_COLOR if t.name == REFERENCE else
                  WRONG_COLOR if t.mismatches else EXACT_COLOR for t in c.timings]
        self.bars = pg.BarGraphItem(x0=0, y=y, width=ms, height=0.62,
                                    brushes=[pg.mkBrush(col) for col in colors], pen=None)
        item.addItem(self.bars)
        font = QFont()
        font.setPointSizeF(9)
        for t, yi in zip(c.timings, y):
            text = pg.TextItem(f" {t.ms:,.2f} ms" + (f" ({t.runs} runs)" if t.runs > 1 else ""),
                               color="k", anchor=(0, 0.5))
            text.setFont(font)
            text.setPos(t.ms, yi)
            item.addItem(text)
        left = item.getAxis("left")
        left.setTicks([[(yi, t.label) for t, yi in zip(c.timings, y)]])
        metrics = QFontMetrics(left.style.get("tickFont") or left.font())
        left.setWidth(max(metrics.horizontalAdvance(t.label) for t in c.timings) + 16)
        item.setXRange(0, max(float(ms.max()), 1e-3) * 1.3, padding=0)
        item.setYRange(-0.6, len(ms) - 0.4, padding=0)
        color = "#1b5e20" if c.exact else "#b3261e"
        self.title = f"Shortest-path tree from node {source_id} · {c.backend} · {c.verdict}"
        item.setTitle(self.title, color=color, size="10pt")
