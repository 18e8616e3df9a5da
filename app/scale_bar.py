"""The map's scale bar: a bar of a round ground length ("500 m", "2 km") in the map's
bottom-left corner, updated on every zoom, pan and resize.

Its length is true at the view's centre: the map's x axis is metres of an
equirectangular projection, exact only at the projection's centre latitude, so the
bar asks the drawing (``NetworkDrawing.east_metres_per_unit``) how many ground metres
one x unit is at the centre's latitude. A white box behind the dark bar keeps it
legible on any map colour and in screenshots.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QLineF, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QWidget

MAX_BAR_PX = 120          # the bar is the longest round length up to this many pixels
MARGIN_PX = 10            # from the map's left and bottom edges
PAD_PX = 6                # inside the white box
STEPS = (1, 2, 5)         # round lengths: 1, 2, 5 x 10^k metres


def round_length(metres: float) -> float:
    """The largest 1, 2 or 5 x 10^k metres that is at most ``metres``."""
    if not metres > 0 or not math.isfinite(metres):
        return 0.0
    power = 10.0 ** math.floor(math.log10(metres))
    return max(s * power for s in STEPS if s * power <= metres * (1 + 1e-9))


def length_text(metres: float) -> str:
    if metres >= 1000:
        return f"{metres / 1000:g} km"
    return f"{metres:g} m"


class ScaleBar(QWidget):
    """Child of the map's plot widget; ``attach`` it to a view and a drawing."""

    def __init__(self, plot, view) -> None:
        super().__init__(plot)
        self.view = view
        self.drawing = None
        self.length_m = 0.0       # the ground length the label names
        self.length_px = 0.0      # the bar's length on screen
        self.text = ""
        self.setAttribute(Qt.WA_TransparentForMouseEvents)   # clicks go to the map
        self.setFont(QFont(self.font().family(), 9))
        view.sigRangeChanged.connect(self.refresh)
        plot.installEventFilter(self)        # follow the corner when the map resizes
        self.hide()

    def attach(self, drawing) -> None:
        """The drawing now shown (None: no map, no bar)."""
        self.drawing = drawing
        self.refresh()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Resize:
            self.refresh()
        return False

    def refresh(self) -> None:
        d = self.drawing
        if d is None:
            self.length_m = 0.0
            self.hide()
            return
        centre_y = self.view.viewRect().center().y()
        metres_per_px = self.view.viewPixelSize()[0] * d.east_metres_per_unit(centre_y)
        self.length_m = round_length(MAX_BAR_PX * metres_per_px)
        if self.length_m <= 0:
            self.hide()
            return
        self.length_px = self.length_m / metres_per_px
        self.text = length_text(self.length_m)
        self.resize(int(max(self.length_px, self.fontMetrics().horizontalAdvance(self.text))) + 2 * PAD_PX,
                    self.fontMetrics().height() + 14)
        # bottom-left corner of the view box, in the plot widget's pixels
        corner = self.parentWidget().mapFromScene(self.view.sceneBoundingRect().bottomLeft())
        self.move(corner.x() + MARGIN_PX, corner.y() - MARGIN_PX - self.height())
        self.show()
        self.raise_()
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.setPen(Qt.NoPen)
        p.setBrush(QColor(255, 255, 255, 215))
        p.drawRoundedRect(QRectF(self.rect()), 3, 3)
        ink = QColor(40, 40, 40)
        p.setPen(ink)
        p.drawText(QRectF(PAD_PX, 1, self.width() - PAD_PX, self.fontMetrics().height()),
                   Qt.AlignLeft | Qt.AlignTop, self.text)
        p.setPen(QPen(ink, 2, Qt.SolidLine, Qt.FlatCap))
        y, x0, x1 = self.height() - 5.0, float(PAD_PX), PAD_PX + self.length_px
        p.drawLine(QLineF(x0, y, x1, y))                              # the bar
        p.drawLine(QLineF(x0, y - 5, x0, y))                          # its end ticks
        p.drawLine(QLineF(x1, y - 5, x1, y))
        p.end()
