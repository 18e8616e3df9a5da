"""The map: a road network drawn as a few big pyqtgraph curves (DESIGN principle 7).

One ``PlotCurveItem`` with ``connect='pairs'`` per road-class group, 1-px cosmetic pens
(major roads slightly wider, on top). Level of detail is ours: after the view settles
(debounced ``sigRangeChanged``) the curves get the level of ``NetworkDrawing`` whose
grid cell is at most a pixel, cropped to the view and a margin when it is large. Node
dots appear only when few nodes are in view. Clicks snap to the nearest node (cKDTree).

A ``Colouring`` replaces the road-class curves by one curve per bin, filled from the
same levels of detail: a shortest-path tree (``set_tree``: distance bins plus grey for
unreachable roads, each segment's bin from the tree distances of its road's end nodes)
or the contraction levels (``set_levels``). Right-clicks ask for a context menu; while
``hover_enabled``, the node under the mouse is reported at most every HOVER_INTERVAL_MS.

Hierarchy inspection draws a node's upward and downward hierarchy arcs as straight
segments (shortcuts dashed; upward arcs thinner, over the downward ones, so both
halves of a two-way pair show), four curves in all; a click on the middle of a drawn arc
emits ``arc_clicked``. ``set_unpacked`` draws a shortcut's road path and its midpoint.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsItem, QLabel, QStackedWidget, QVBoxLayout, QWidget

from app import map_style as style
from app.distance_bins import UNREACHABLE_COLOR, DistanceBins, segment_distance
from app.level_bins import LevelBins, segment_level
from app.network_geometry import Level, NetworkDrawing

DETAIL_DEBOUNCE_MS = 60
CROP_ABOVE_SEGMENTS = 60_000   # below this a level is drawn whole, no re-crop on pan
CROP_MARGIN = 0.5              # cropped region: the view plus this share of it on each side
MAX_NODE_DOTS = 2_000
NODE_DOTS_BELOW_MPP = 2.5      # node dots only when a pixel covers less than this
MINOR_HIDDEN_ABOVE_MPP = 60.0  # minor classes are hidden when a pixel covers more metres
TREE_WIDTH = 1.6               # pixels, the distance-bin curves
HOVER_INTERVAL_MS = 40         # hovered node reported at most this often
HOVER_RADIUS_PX = 25           # ... when it is this close to the mouse
ARC_PICK_PX = 6                # a click this close to a drawn hierarchy arc picks it ...
ARC_END_PX = 10                # ... unless it is this close to one of its end nodes
DASH_PX = (10.0, 6.0)          # shortcuts: dash and gap in pixels


@dataclass(frozen=True)
class Colouring:
    """The network in binned colours: one curve per bin (DESIGN principle 7)."""
    name: str                                       # "tree" or "levels"
    pens: tuple
    z: tuple[float, ...]
    segment_bins: Callable[[Level], np.ndarray]     # the bin of every segment of a level


class MapView(QWidget):
    node_clicked = Signal(int, bool)          # node index, True = set the source
    node_hovered = Signal(int)                # node index near the mouse (hover_enabled)
    context_requested = Signal(int, object)   # node index, global QPoint: right-click
    marker_dragged = Signal(str, int, bool)   # "source"/"target", node index, drag finished
    detail_changed = Signal()                 # the curves were refilled (tests, status)
    arc_clicked = Signal(int)                 # a drawn hierarchy arc (its id) was clicked

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.drawing: NetworkDrawing | None = None
        self.level: Level | None = None
        self._crop: tuple | None = None
        self._curves: list[pg.PlotCurveItem] = []
        self._colouring: Colouring | None = None
        self._bin_curves: list[pg.PlotCurveItem] = []    # one per bin of the colouring
        self._segment_bins: dict[int, np.ndarray] = {}   # id(level) -> bin per segment
        self._arc_pick: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # a, b, arc id
        self.hover_enabled = False
        self._hover_pos = None
        self._hovered = -1

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
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)

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
        self._build_hierarchy_items()
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
        self._hover_timer = QTimer(self, singleShot=True, interval=HOVER_INTERVAL_MS)
        self._hover_timer.timeout.connect(self._report_hover)
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
        self.set_colouring(None)
        self.clear_hierarchy_arcs()
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

    # ------------------------------------------------- binned colourings
    @property
    def colouring(self) -> str | None:
        """"tree", "levels", or None for the road classes."""
        return None if self._colouring is None else self._colouring.name

    @property
    def showing_tree(self) -> bool:
        return self.colouring == "tree"

    def set_tree(self, distance: np.ndarray | None, bins: DistanceBins | None = None) -> None:
        """Colour the network by ``distance`` (per node, -1 unreachable) in ``bins``;
        None goes back to the road-class colours."""
        if distance is None:
            self.set_colouring(None)
            return
        n = bins.count
        pens = (*(pg.mkPen(c, width=TREE_WIDTH) for c in bins.colors),
                pg.mkPen(UNREACHABLE_COLOR, width=1))
        z = (*(1 + k / (n + 1) for k in range(n)), 0.5)       # below routes
        self.set_colouring(Colouring("tree", pens, z, lambda level: bins.of(
            segment_distance(level.end_a, level.end_b, distance))))

    def set_levels(self, node_level: np.ndarray, bins: LevelBins) -> None:
        """Colour the network by contraction level (``level_bins``), higher levels on top."""
        pens = tuple(pg.mkPen(c, width=w) for c, w in zip(bins.colors, bins.widths))
        z = tuple(1 + k / bins.count for k in range(bins.count))
        self.set_colouring(Colouring("levels", pens, z, lambda level: bins.of(
            segment_level(level.end_a, level.end_b, node_level))))

    def set_colouring(self, colouring: Colouring | None) -> None:
        if colouring is None and self._colouring is None:
            return
        for c in self._bin_curves:
            self.plot.removeItem(c)
        self._bin_curves, self._segment_bins, self._hovered = [], {}, -1
        self._colouring = colouring
        if colouring is not None:
            for pen, z in zip(colouring.pens, colouring.z):
                curve = pg.PlotCurveItem(pen=pen, connect="pairs", skipFiniteCheck=True)
                curve.setZValue(z)
                curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
                self.plot.addItem(curve, ignoreBounds=True)
                self._bin_curves.append(curve)
        self.update_detail(refill=True)

    def bin_curve_sizes(self) -> list[int]:
        """Segments drawn per bin of the colouring (tests, status); [] for road classes."""
        return [0 if x is None else len(x) // 2 for x, _ in (c.getData() for c in self._bin_curves)]

    tree_curve_sizes = bin_curve_sizes

    def _fill_bins(self, level: Level, crop) -> None:
        seg_bin = self._segment_bins.get(id(level))
        if seg_bin is None:
            seg_bin = self._segment_bins[id(level)] = self._colouring.segment_bins(level)
        idx = level.select(rect=crop)
        b = seg_bin[idx]
        order = np.argsort(b, kind="stable")
        idx = idx[order]
        first = np.searchsorted(b[order], np.arange(len(self._bin_curves) + 1))
        for k, curve in enumerate(self._bin_curves):
            x, y = level.pairs_of(idx[first[k]:first[k + 1]])
            curve.setData(x=x, y=y)

    def update_detail(self, refill: bool = False) -> None:
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
        if refill or level is not self.level or crop != self._crop:
            self.level, self._crop = level, crop
            if self._colouring is not None:
                self._fill_bins(level, crop)
            else:
                for g, curve in enumerate(self._curves):
                    curve.setData(*level.pairs(g, crop))
        for group, curve in zip(d.groups, self._curves):
            curve.setVisible(self._colouring is None and (group.major or mpp <= MINOR_HIDDEN_ABOVE_MPP))
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

    # -------------------------------------------------- hierarchy inspection
    def _build_hierarchy_items(self) -> None:
        self.hierarchy_curves: dict[tuple[bool, bool], pg.PlotCurveItem] = {}   # (up, shortcut)
        for up, color, width in ((True, style.UP_COLOR, style.UP_WIDTH),
                                 (False, style.DOWN_COLOR, style.DOWN_WIDTH)):
            for shortcut in (False, True):
                pen = pg.mkPen(color, width=width)
                if shortcut:       # the same dashes in pixels for both widths, so they align
                    pen.setDashPattern([DASH_PX[0] / width, DASH_PX[1] / width])
                curve = pg.PlotCurveItem(pen=pen, connect="pairs", skipFiniteCheck=True)
                curve.setZValue(12 + 0.5 * up + 0.2 * shortcut)    # upward on top
                self.hierarchy_curves[up, shortcut] = curve
        self.unpacked_casing = pg.PlotCurveItem(
            pen=pg.mkPen(style.ROUTE_CASING, width=style.UNPACKED_WIDTH + 3), skipFiniteCheck=True)
        self.unpacked = pg.PlotCurveItem(pen=pg.mkPen(style.UNPACKED_COLOR, width=style.UNPACKED_WIDTH),
                                         skipFiniteCheck=True)
        self.unpacked_casing.setZValue(10.5)
        self.unpacked.setZValue(10.6)
        self.inspected = pg.ScatterPlotItem(size=14, symbol="o", brush=(0, 0, 0, 0),
                                            pen=pg.mkPen(style.INSPECTED_COLOR, width=2.5))
        self.midpoint = pg.ScatterPlotItem(size=14, symbol="d", brush=pg.mkBrush(style.MIDPOINT_COLOR),
                                           pen=pg.mkPen("k", width=1.5))
        self.inspected.setZValue(15)
        self.midpoint.setZValue(16)
        for it in (*self.hierarchy_curves.values(), self.unpacked_casing, self.unpacked,
                   self.inspected, self.midpoint):
            self.plot.addItem(it, ignoreBounds=True)

    def show_hierarchy_arcs(self, node: int, arc_id: np.ndarray, other: np.ndarray,
                            up: np.ndarray, shortcut: np.ndarray) -> None:
        """Draw the hierarchy arcs of an inspected ``node`` as straight segments to their
        ``other`` end nodes: upward and downward in two colours, shortcuts dashed. Every
        segment starts at ``node``, so the dashes of an up/down pair line up."""
        xy = self.drawing.node_xy
        a, b = np.broadcast_to(xy[node], (len(other), 2)), xy[other]
        for (is_up, is_shortcut), curve in self.hierarchy_curves.items():
            m = (up == is_up) & (shortcut == is_shortcut)
            x, y = np.empty(2 * m.sum()), np.empty(2 * m.sum())
            x[0::2], x[1::2], y[0::2], y[1::2] = a[m, 0], b[m, 0], a[m, 1], b[m, 1]
            curve.setData(x=x, y=y)
        self.inspected.setData(x=xy[node:node + 1, 0], y=xy[node:node + 1, 1])
        self._arc_pick = (a, b, np.asarray(arc_id))
        self.set_unpacked(None)

    def clear_hierarchy_arcs(self) -> None:
        for curve in self.hierarchy_curves.values():
            curve.setData(x=[], y=[])
        self.inspected.setData([], [])
        self._arc_pick = None
        self.set_unpacked(None)

    def hierarchy_curve_sizes(self) -> dict[tuple[bool, bool], int]:
        """Drawn arcs per (up, shortcut) curve (tests)."""
        return {k: 0 if c.getData()[0] is None else len(c.getData()[0]) // 2
                for k, c in self.hierarchy_curves.items()}

    def set_unpacked(self, xy: np.ndarray | None, midpoint: int = -1) -> None:
        """A shortcut's road path ([k, 2] points) and the node it bypasses (-1: none)."""
        xy = np.zeros((0, 2)) if xy is None else xy
        for c in (self.unpacked_casing, self.unpacked):
            c.setData(x=xy[:, 0], y=xy[:, 1])
        if midpoint >= 0 and self.drawing is not None:
            p = self.drawing.node_xy[midpoint]
            self.midpoint.setData(x=[p[0]], y=[p[1]])
        else:
            self.midpoint.setData([], [])

    def arc_near(self, scene_pos) -> int:
        """The drawn hierarchy arc within ARC_PICK_PX of a scene position, away from its
        ends (a click there means a node), else -1."""
        if self._arc_pick is None or not len(self._arc_pick[2]):
            return -1
        a, b, arc_id = self._arc_pick
        p = self.view.mapSceneToView(scene_pos)
        p = np.array([p.x(), p.y()])
        ab = b - a
        length = np.hypot(ab[:, 0], ab[:, 1])
        t = np.clip(((p - a) * ab).sum(axis=1) / np.maximum(length ** 2, 1e-12), 0.0, 1.0)
        dist = np.hypot(*(a + t[:, None] * ab - p).T)
        mpp = self.metres_per_pixel()
        along = t * length
        ok = (dist <= ARC_PICK_PX * mpp) & (along >= ARC_END_PX * mpp) & \
             (length - along >= ARC_END_PX * mpp)
        if not ok.any():
            return -1
        return int(arc_id[np.flatnonzero(ok)[np.argmin(dist[ok])]])

    def arc_scene_pos(self, arc_id: int):
        """Scene position of the middle of a drawn hierarchy arc (tests click there)."""
        a, b, ids = self._arc_pick
        i = int(np.flatnonzero(ids == arc_id)[0])
        m = (a[i] + b[i]) / 2
        return self.view.mapViewToScene(pg.Point(float(m[0]), float(m[1])))

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
        ev.accept()
        if ev.button() == Qt.LeftButton and not ev.modifiers() & Qt.ShiftModifier:
            arc = self.arc_near(ev.scenePos())
            if arc >= 0:
                self.arc_clicked.emit(arc)
                return
        p = self.view.mapSceneToView(ev.scenePos())
        node = self.drawing.nearest_node(p.x(), p.y())
        if ev.button() == Qt.RightButton:
            self.context_requested.emit(node, ev.screenPos().toPoint())
        else:
            self.node_clicked.emit(node, bool(ev.modifiers() & Qt.ShiftModifier))

    def _on_mouse_moved(self, scene_pos) -> None:
        if self.hover_enabled and self.drawing is not None:
            self._hover_pos = scene_pos
            if not self._hover_timer.isActive():    # throttle, do not debounce
                self._hover_timer.start()

    def _report_hover(self) -> None:
        node = self.node_near(self._hover_pos)
        if self.hover_enabled and node >= 0 and node != self._hovered:
            self._hovered = node
            self.node_hovered.emit(node)

    def node_near(self, scene_pos, radius_px: float = HOVER_RADIUS_PX) -> int:
        """The node nearest to a scene position within ``radius_px``, else -1."""
        if self.drawing is None or scene_pos is None or \
                not self.view.sceneBoundingRect().contains(scene_pos):
            return -1
        p = self.view.mapSceneToView(scene_pos)
        dist, node = self.drawing.tree.query([p.x(), p.y()])
        return int(node) if dist <= radius_px * self.metres_per_pixel() else -1


def _inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] and inner[1] >= outer[1] and
            inner[2] <= outer[2] and inner[3] <= outer[3])
