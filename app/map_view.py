"""The map: a road network drawn as a few big pyqtgraph curves (DESIGN principle 7).

One ``PlotCurveItem`` with ``connect='pairs'`` per road-class group, 1-px cosmetic pens
(major roads slightly wider, on top). Level of detail is ours: after the view settles
(debounced ``sigRangeChanged``) the curves get the level of ``NetworkDrawing`` whose
grid cell is at most a pixel, cropped to the view and a margin when it is large. Node
dots appear only when few nodes are in view. Clicks snap to the nearest node (cKDTree).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsItem, QLabel, QStackedWidget, QVBoxLayout, QWidget

from app import map_style as style
from app.network_geometry import Level, NetworkDrawing

DETAIL_DEBOUNCE_MS = 60
CROP_ABOVE_SEGMENTS = 60_000   # below this a level is drawn whole, no re-crop on pan
CROP_MARGIN = 0.5              # cropped region: the view plus this share of it on each side
MAX_NODE_DOTS = 2_000
NODE_DOTS_BELOW_MPP = 2.5      # node dots only when a pixel covers less than this
MINOR_HIDDEN_ABOVE_MPP = 60.0  # minor classes are hidden when a pixel covers more metres


class MapView(QWidget):
    node_clicked = Signal(int, bool)          # node index, True = set the source
    marker_dragged = Signal(str, int, bool)   # "source"/"target", node index, drag finished
    detail_changed = Signal()                 # the curves were refilled (tests, status)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.drawing: NetworkDrawing | None = None
        self.level: Level | None = None
        self._crop: tuple | None = None
        self._curves: list[pg.PlotCurveItem] = []

        self.plot = pg.PlotWidget(background=style.BACKGROUND)
        item = self.plot.getPlotItem()
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.setMenuEnabled(False)
        item.hideButtons()
        self.view = item.getViewBox()
        self.view.setAspectLocked(True)
        self.view.disableAutoRange()
        self.view.sigRangeChanged.connect(self._schedule_detail)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

        self.nodes = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(style.NODE_COLOR))
        self.nodes.setZValue(9)
        self.route_casing = pg.PlotCurveItem(pen=pg.mkPen(style.ROUTE_CASING, width=style.ROUTE_WIDTH + 3),
                                             antialias=True, skipFiniteCheck=True)
        self.route = pg.PlotCurveItem(pen=pg.mkPen(style.ROUTE_COLOR, width=style.ROUTE_WIDTH),
                                      antialias=True, skipFiniteCheck=True)
        self.route_casing.setZValue(10)
        self.route.setZValue(11)
        self.markers = {"source": self._marker(style.SOURCE_COLOR),
                        "target": self._marker(style.TARGET_COLOR)}
        for it in (self.nodes, self.route_casing, self.route, *self.markers.values()):
            self.plot.addItem(it, ignoreBounds=True)
        for name, marker in self.markers.items():
            marker.sigPositionChanged.connect(lambda m, name=name: self._on_marker_moved(name, m, False))
            marker.sigPositionChangeFinished.connect(lambda m, name=name: self._on_marker_moved(name, m, True))
        self._drag_node = {"source": -1, "target": -1}

        self.message = QLabel(alignment=Qt.AlignCenter, wordWrap=True)
        self.message.setStyleSheet("color: #555; font-size: 14px; padding: 40px;")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.plot)
        self.stack.addWidget(self.message)
        self.attribution = QLabel(alignment=Qt.AlignRight | Qt.AlignVCenter)
        self.attribution.setStyleSheet("color: #444; font-size: 11px; padding: 1px 6px;")
        self.attribution.setOpenExternalLinks(True)
        self.attribution.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.attribution)

        self._detail_timer = QTimer(self, singleShot=True, interval=DETAIL_DEBOUNCE_MS)
        self._detail_timer.timeout.connect(self.update_detail)
        self.show_message("No graph loaded. Open one with File ▸ Open… (Ctrl+O),\nor the generated network with File ▸ Open default network (Ctrl+D).")

    def _marker(self, color) -> pg.TargetItem:
        m = pg.TargetItem(symbol="o", size=style.MARKER_SIZE, movable=True,
                          pen=pg.mkPen("w", width=2), brush=pg.mkBrush(color),
                          hoverPen=pg.mkPen("k", width=2), hoverBrush=pg.mkBrush(color))
        m.setZValue(20)
        m.hide()
        return m

    # ------------------------------------------------------------ network
    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def set_network(self, drawing: NetworkDrawing | None, license_text: str = "",
                    no_coordinates_text: str = "") -> None:
        for c in self._curves:
            self.plot.removeItem(c)
        self._curves = []
        self.drawing, self.level, self._crop = drawing, None, None
        self.set_route(None)
        self.set_marker("source", None)
        self.set_marker("target", None)
        self.nodes.setData([], [])
        self.attribution.setText(license_text)
        self.attribution.setVisible(bool(license_text))
        if drawing is None:
            self.show_message(no_coordinates_text)
            return
        for group in drawing.groups:
            curve = pg.PlotCurveItem(pen=pg.mkPen(group.color, width=group.width),
                                     connect="pairs", skipFiniteCheck=True)
            curve.setZValue(group.z)
            curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
            self.plot.addItem(curve, ignoreBounds=True)
            self._curves.append(curve)
        self.stack.setCurrentWidget(self.plot)
        self.fit()

    def fit(self) -> None:
        if self.drawing is not None:
            xmin, ymin, xmax, ymax = self.drawing.bounds
            self.view.setRange(xRange=(xmin, xmax), yRange=(ymin, ymax), padding=0.03)
            self.update_detail()

    def metres_per_pixel(self) -> float:
        r = self.view.viewRect()
        return max(r.width() / max(self.view.width(), 1.0), r.height() / max(self.view.height(), 1.0))

    def view_rect(self) -> tuple[float, float, float, float]:
        r = self.view.viewRect()
        return (r.left(), min(r.top(), r.bottom()), r.right(), max(r.top(), r.bottom()))

    def _schedule_detail(self) -> None:
        self._detail_timer.start()

    def update_detail(self) -> None:
        """Fill the curves with the level of detail and region that the view needs."""
        d = self.drawing
        if d is None:
            return
        mpp = self.metres_per_pixel()
        level = d.level_for(mpp)
        view = self.view_rect()
        crop = None
        if level.num_segments > CROP_ABOVE_SEGMENTS:
            w, h = view[2] - view[0], view[3] - view[1]
            old = self._crop
            if (level is self.level and old is not None and _inside(view, old)
                    and old[2] - old[0] <= 2 * (1 + 2 * CROP_MARGIN) * w):
                crop = old       # still inside the cropped region, and not zoomed far in
            else:
                crop = (view[0] - CROP_MARGIN * w, view[1] - CROP_MARGIN * h,
                        view[2] + CROP_MARGIN * w, view[3] + CROP_MARGIN * h)
        if level is not self.level or crop != self._crop:
            self.level, self._crop = level, crop
            for g, curve in enumerate(self._curves):
                x, y = level.pairs(g, crop)
                curve.setData(x=x, y=y)
        for group, curve in zip(d.groups, self._curves):
            curve.setVisible(group.major or mpp <= MINOR_HIDDEN_ABOVE_MPP)
        self._update_nodes(view, mpp)
        self.detail_changed.emit()

    def _update_nodes(self, view, mpp: float) -> None:
        near = mpp <= NODE_DOTS_BELOW_MPP and self.level is self.drawing.exact
        idx = self.drawing.nodes_in(view) if near else np.zeros(0, int)
        if 0 < idx.size <= MAX_NODE_DOTS:
            xy = self.drawing.node_xy[idx]
            self.nodes.setData(x=xy[:, 0], y=xy[:, 1])
            self.nodes.show()
        else:
            self.nodes.hide()

    # ------------------------------------------------------- route, markers
    def set_route(self, xy: np.ndarray | None) -> None:
        if xy is None or len(xy) == 0:
            xy = np.zeros((0, 2))
        for c in (self.route_casing, self.route):
            c.setData(x=xy[:, 0], y=xy[:, 1])

    def set_marker(self, which: str, node: int | None) -> None:
        m = self.markers[which]
        if node is None or self.drawing is None:
            m.hide()
            return
        x, y = self.drawing.node_xy[node]
        self._drag_node[which] = node
        m.setPos(float(x), float(y))
        m.show()

    def node_scene_pos(self, node: int):
        """Scene position of a node (tests click there)."""
        x, y = self.drawing.node_xy[node]
        return self.view.mapViewToScene(pg.Point(float(x), float(y)))

    def _on_marker_moved(self, which: str, marker: pg.TargetItem, finished: bool) -> None:
        if self.drawing is None or not (marker.moving or finished):
            return   # a programmatic move
        p = marker.pos()
        node = self.drawing.nearest_node(p.x(), p.y())
        if finished:
            self.set_marker(which, node)     # snap onto the node
        elif node == self._drag_node[which]:
            return
        self._drag_node[which] = node
        self.marker_dragged.emit(which, node, finished)

    def _on_click(self, ev) -> None:
        if self.drawing is None or ev.double():   # (node dots accept clicks: ignore that)
            return
        if ev.button() not in (Qt.LeftButton, Qt.RightButton):
            return
        if not self.view.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = self.view.mapSceneToView(ev.scenePos())
        node = self.drawing.nearest_node(p.x(), p.y())
        as_source = ev.button() == Qt.RightButton or bool(ev.modifiers() & Qt.ShiftModifier)
        ev.accept()
        self.node_clicked.emit(node, as_source)


def _inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] and inner[1] >= outer[1] and
            inner[2] <= outer[2] and inner[3] <= outer[3])
