"""What every chart in a dock shares: fixed plots with SI tick labels, and a header line
that holds the chart's title and its legend, so no legend takes a row of the plot's
height or covers its data.

At 1280x800 a bottom dock is about a third of the window: a legend drawn as pyqtgraph's
LegendItem in a row of its own took half of that, and was cut off where the dock is
narrow. The header is a wrapped label: its keys flow onto a second line only when the
dock is too narrow for one.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.widgets import rgb

SI_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
SI_FROM = 1e4                 # below it ticks are plain numbers (2000, not 2 k)
HEADER_STYLE = "color: #333; background: white; font-size: 12px; padding: 2px 6px;"
# legend marks, by how a series is drawn
BAR, LINE, DOT, DIAMOND, SQUARE, RING, DASH = "■", "━", "●", "◆", "□", "○", "╍"


def si_ticks(values, scale: float = 1.0, spacing: float = 1.0) -> list[str]:
    """Tick labels with an SI prefix once values reach SI_FROM: "200 k", "1.2 M", never
    "1e+06"; the decimals that the spacing needs."""
    vs = [v * scale for v in values]
    top = max((abs(v) for v in vs), default=0.0)
    factor, prefix = next(((f, p) for f, p in SI_PREFIXES if top >= max(f, SI_FROM)), (1.0, ""))
    step = abs(spacing * scale) / factor
    places = max(0, math.ceil(-math.log10(step) - 1e-9)) if step > 0 else 0
    out = []
    for v in vs:
        text = f"{v / factor:.{places}f}"
        if float(text) == 0:
            text = "0"
        out.append(f"{text} {prefix}" if prefix and text != "0" else text)
    return out


class SIAxis(pg.AxisItem):
    """An axis whose tick labels carry SI prefixes (log axes keep pyqtgraph's 10ⁿ)."""

    def tickStrings(self, values, scale, spacing):
        if self.logMode:
            return super().tickStrings(values, scale, spacing)
        return si_ticks(values, scale, spacing)


def style_plot(plot, left: str, bottom: str | None = None, grid: tuple[bool, bool] = (False, False)) -> None:
    """A dock chart's plot: fixed (no mouse zoom, menu or buttons), SI tick labels, black
    axis text on grey axes; ``grid`` (x, y) draws faint grid lines."""
    if not isinstance(plot.getAxis("left"), SIAxis):
        plot.setAxisItems({"left": SIAxis("left"), "bottom": SIAxis("bottom")})
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    if any(grid):
        plot.showGrid(x=grid[0], y=grid[1], alpha=0.15)
    if left:
        plot.setLabel("left", left)
    if bottom:
        plot.setLabel("bottom", bottom)
    for name in ("left", "bottom"):
        plot.getAxis(name).setTextPen("k")
        plot.getAxis(name).setPen((120, 120, 120))
        plot.getAxis(name).enableAutoSIPrefix(False)      # the prefixes are on the ticks


def key(color, text: str, mark: str = BAR) -> str:
    """One legend entry: ``mark`` in ``color``, then ``text``, never broken across lines."""
    return (f"<span style='color:{rgb(color)}; font-size:14px'>{mark}</span>&nbsp;"
            + text.replace(" ", "&nbsp;"))


class ChartHeader(QLabel):
    """A chart's title and legend in one wrapped line above its plots."""

    def __init__(self, title: str = "") -> None:
        super().__init__(wordWrap=True)
        self.setStyleSheet(HEADER_STYLE)
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        policy.setHeightForWidth(True)          # wrapped: as tall as its lines, never clipped
        self.setSizePolicy(policy)
        self.title, self.keys, self.note, self.color = "", [], "", None
        self.set(title)

    def set(self, title: str | None = None, keys: list[str] | None = None, note: str | None = None,
            color: str | None = None) -> None:
        """New title, legend keys, ``note`` (greyed after the keys) or title ``color``
        (None keeps each as it was)."""
        if title is not None:
            self.title = title
        if keys is not None:
            self.keys = list(keys)
        if note is not None:
            self.note = note
        if color is not None:
            self.color = color
        title = self.title.replace("&", "&amp;").replace("<", "&lt;")
        parts = [f"<span style='color:{self.color}'>{title}</span>" if self.color else title] if title else []
        if self.keys:
            parts.append("&nbsp;&nbsp; ".join(self.keys))      # plain spaces: where it may wrap
        if self.note:
            parts.append(f"<span style='color:#777'>{self.note}</span>")
        self.setText("&nbsp;&nbsp;&nbsp; ".join(parts))

    def legend(self) -> list[str]:
        """The legend's entries as plain text (tests)."""
        from PySide6.QtGui import QTextDocument
        doc = QTextDocument()
        out = []
        for k in self.keys:
            doc.setHtml(k)
            out.append(doc.toPlainText().replace("\xa0", " ").split(" ", 1)[1])
        return out


class HeaderedChart(QWidget):
    """A dock's chart widget: a ChartHeader line over a GraphicsLayoutWidget whose
    plots the subclass adds."""

    def __init__(self, title: str = "", parent=None) -> None:
        super().__init__(parent)
        self.header = ChartHeader(title)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.layout.setContentsMargins(2, 2, 6, 2)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.header)
        column.addWidget(self.graphics, 1)

    @property
    def title(self) -> str:
        return self.header.title
