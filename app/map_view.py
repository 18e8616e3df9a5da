"""The map: a road network drawn as a few big pyqtgraph curves (DESIGN principle 7).

One ``PlotCurveItem`` with ``connect='pairs'`` per road-class group, 1-px cosmetic pens
(major roads slightly wider, on top). Level of detail is ours: after the view settles
(debounced ``sigRangeChanged``) ``NetworkDrawing.detail`` picks the level whose grid cell
is at most a pixel and the road groups that fit ``segment_budget`` segments, in order of
importance (zoomed out over a big network: the main roads; zoomed in: every road, exact);
a large level is cropped to the view and a margin, found through the level's tile index.
Node dots appear only when few nodes are in view. Clicks snap to the nearest node (cKDTree).

The first view (and View ▸ Fit network) fits the bulk of the network
(``NetworkDrawing.bulk``). Minor classes are hidden when zoomed far out; the classes
that carry the route or a marker are drawn whole where they fit the budget, else around
the markers (a marker never sits on a road that is not drawn). A scale bar sits bottom-left.

A ``Colouring`` (made by a controller: tree distances, contraction levels) replaces
the road-class curves by one curve per bin, filled from the same levels and groups.
Right-clicks ask for a context menu; while ``hover_enabled``, the node under the mouse
is reported at most every HOVER_INTERVAL_MS. Overlays (app/features/hierarchy/overlay.py) add
their own items to ``plot`` and may take a click first (``add_click_handler``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsItem, QLabel, QStackedWidget, QVBoxLayout, QWidget

from app import map_style as style
from app.network_geometry import Level, NetworkDrawing
from app.scale_bar import ScaleBar

DETAIL_DEBOUNCE_MS = 60
CROP_ABOVE_SEGMENTS = 60_000   # below this a level is drawn whole, no re-crop on pan
HOVER_INTERVAL_MS = 40         # hovered node reported at most this often
HOVER_RADIUS_PX = 25           # ... when it is this close to the mouse


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

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.drawing: NetworkDrawing | None = None
        self.level: Level | None = None
        self._crop: tuple | None = None
        self._base: Level | None = None          # the level for the zoom, before the budget
        self._groups = self._near = 0            # bit masks: road groups drawn; of those, only near markers
        self.segment_budget = style.SEGMENT_BUDGET
        self._curves: list[pg.PlotCurveItem] = []
        self._colouring: Colouring | None = None
        self._bin_curves: list[pg.PlotCurveItem] = []    # one per bin of the colouring
        self._segment_bins: dict[int, np.ndarray] = {}   # id(level) -> bin per segment
        self._click_handlers: list[Callable] = []    # overlays that may take a click first
        self.hover_enabled = False
        self._hover_pos = None
        self._hovered = -1
        self._pinned = {"route": 0, "source": 0, "target": 0}   # bit masks of road groups always drawn

        self.plot = pg.PlotWidget(background=style.BACKGROUND)
        item = self.plot.getPlotItem()
        for axis in ("left", "bottom"):
            item.hideAxis(axis)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.view = item.getViewBox()
        self.view.setAspectLocked(True)
        self.view.disableAutoRange()
        self.view.sigRangeChanged.connect(self._schedule_detail)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._build_route_items()
        self._build_layout()
        self.scale_bar = ScaleBar(self.plot, self.view)
        self._detail_timer = QTimer(self, singleShot=True, interval=DETAIL_DEBOUNCE_MS)
        self._detail_timer.timeout.connect(self.update_detail)
        self._hover_timer = QTimer(self, singleShot=True, interval=HOVER_INTERVAL_MS)
        self._hover_timer.timeout.connect(self._report_hover)
        self.show_message("No graph loaded. Open one with File ▸ Open… (Ctrl+O),\nor the generated network with File ▸ Open default network (Ctrl+D).")

    def _build_route_items(self) -> None:
        """Node dots, the route with its casing, the two draggable markers."""
        self.nodes = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(style.NODE_COLOR))
        self.nodes.setZValue(9)
        self.route_casing = pg.PlotCurveItem(pen=pg.mkPen(style.ROUTE_CASING, width=style.ROUTE_WIDTH + 3),
                                             antialias=True, skipFiniteCheck=True)
        self.route = pg.PlotCurveItem(pen=pg.mkPen(style.ROUTE_COLOR, width=style.ROUTE_WIDTH),
                                      antialias=True, skipFiniteCheck=True)
        self.ghost = pg.PlotCurveItem(pen=pg.mkPen(style.GHOST_COLOR, width=style.GHOST_WIDTH),
                                      antialias=True, skipFiniteCheck=True)
        self.route_casing.setZValue(10)
        self.route.setZValue(11)
        self.ghost.setZValue(9.5)
        self.markers = {"source": self._marker(style.SOURCE_COLOR),
                        "target": self._marker(style.TARGET_COLOR)}
        for it in (self.nodes, self.ghost, self.route_casing, self.route, *self.markers.values()):
            self.plot.addItem(it, ignoreBounds=True)
        for name, marker in self.markers.items():
            marker.sigPositionChanged.connect(lambda m, name=name: self._on_marker_moved(name, m, False))
            marker.sigPositionChangeFinished.connect(lambda m, name=name: self._on_marker_moved(name, m, True))
        self._drag_node = {"source": -1, "target": -1}

    def _build_layout(self) -> None:
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
        for c in self._curves:
            self.plot.removeItem(c)
        self._curves = []
        self.drawing, self.level, self._crop, self._base, self._groups, self._near = drawing, None, None, None, 0, 0
        self.scale_bar.attach(drawing)
        self.set_route(None)
        self.set_marker("source", None)
        self.set_marker("target", None)
        self.nodes.setData([], [])
        self.attribution.setText(license_text)
        self.attribution.setVisible(bool(license_text))
        if drawing is None:
            self.show_message(no_coordinates_text)
            return
        self._curves = [self._add_curve(pg.mkPen(g.color, width=g.width), g.z) for g in drawing.groups]
        self.stack.setCurrentWidget(self.plot)
        self.fit()

    def fit(self) -> None:
        """Fit the bulk of the network (a far ferry terminal stays outside)."""
        if self.drawing is not None:
            xmin, ymin, xmax, ymax = self.drawing.bulk
            self.view.setRange(xRange=(xmin, xmax), yRange=(ymin, ymax), padding=0.03)
            self.update_detail()

    def metres_per_pixel(self) -> float:
        r = self.view.viewRect()
        return max(r.width() / max(self.view.width(), 1.0), r.height() / max(self.view.height(), 1.0))

    def view_rect(self) -> tuple[float, float, float, float]:
        r = self.view.viewRect()
        return (r.left(), min(r.top(), r.bottom()), r.right(), max(r.top(), r.bottom()))

    def add_click_handler(self, take: Callable) -> None:
        """``take(scene_pos) -> bool`` sees plain left clicks first (an overlay's items)."""
        self._click_handlers.append(take)

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

    def set_colouring(self, colouring: Colouring | None) -> None:
        if colouring is None and self._colouring is None:
            return
        for c in self._bin_curves:
            self.plot.removeItem(c)
        self._bin_curves, self._segment_bins, self._hovered = [], {}, -1
        self._colouring = colouring
        if colouring is not None:
            self._bin_curves = [self._add_curve(pen, z) for pen, z in zip(colouring.pens, colouring.z)]
        self.update_detail(refill=True)

    def _add_curve(self, pen, z: float) -> pg.PlotCurveItem:
        """A big segments curve; its device cache keeps a marker drag from repainting it."""
        curve = pg.PlotCurveItem(pen=pen, connect="pairs", skipFiniteCheck=True)
        curve.setZValue(z)
        curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.plot.addItem(curve, ignoreBounds=True)
        return curve

    def dim_bins(self, opacity: float) -> None:
        """Fade the binned colouring (a service area drawn over the tree reads better
        on quiet roads); a new colouring starts at full opacity."""
        for curve in self._bin_curves:
            curve.setOpacity(opacity)

    def bin_curve_sizes(self) -> list[int]:
        """Segments drawn per bin of the colouring (tests, status); [] for road classes."""
        return [0 if x is None else len(x) // 2 for x, _ in (c.getData() for c in self._bin_curves)]

    tree_curve_sizes = bin_curve_sizes

    def _fill_bins(self, level: Level, crop) -> None:
        seg_bin = self._segment_bins.get(id(level))
        if seg_bin is None:
            seg_bin = self._segment_bins[id(level)] = self._colouring.segment_bins(level)
        idx = np.concatenate([level.select(g, crop) for g in range(len(self.drawing.groups))
                              if (self._groups & ~self._near) >> g & 1])
        b = seg_bin[idx]
        order = np.argsort(b, kind="stable")
        idx = idx[order]
        first = np.searchsorted(b[order], np.arange(len(self._bin_curves) + 1))
        for k, curve in enumerate(self._bin_curves):
            x, y = level.pairs_of(idx[first[k]:first[k + 1]])
            curve.setData(x=x, y=y)

    def _crop_for(self, base: Level, view):
        """The region to fill: None (all) for a small network; else the view and a margin,
        kept while the view stays inside it at the same level and is not zoomed far in."""
        if self.drawing.exact.num_segments <= CROP_ABOVE_SEGMENTS:
            return None
        w, h = view[2] - view[0], view[3] - view[1]
        old = self._crop
        if (base is self._base and old is not None and _inside(view, old)
                and old[2] - old[0] <= 2 * (1 + 2 * style.CROP_MARGIN) * w):
            return old
        return (view[0] - style.CROP_MARGIN * w, view[1] - style.CROP_MARGIN * h,
                view[2] + style.CROP_MARGIN * w, view[3] + style.CROP_MARGIN * h)

    def update_detail(self, refill: bool = False) -> None:
        """Fill the curves with the level of detail, groups and region that the view needs."""
        if (d := self.drawing) is None:
            return
        mpp, view = self.metres_per_pixel(), self.view_rect()
        crop = self._crop_for(base := d.level_for(mpp), view)
        eligible = sum(1 << g for g, group in enumerate(d.groups)      # a colouring shows every class
                       if group.major or mpp <= style.MINOR_HIDDEN_ABOVE_MPP or self._colouring is not None)
        pinned = self._pinned["route"] | self._pinned["source"] | self._pinned["target"]
        level, groups, near = d.detail(mpp, crop, self.segment_budget, eligible, pinned)
        whole = refill or level is not self.level or crop != self._crop
        if whole or groups != self._groups or near:
            changed = groups ^ self._groups | near | self._near     # markers move: refill near ones
            bins = whole or groups & ~near != self._groups & ~self._near
            self.level, self._crop, self._base, self._groups, self._near = level, crop, base, groups, near
            if self._colouring is not None and bins:
                self._fill_bins(level, crop)
            for g, curve in enumerate(self._curves):
                if whole or changed >> g & 1:     # undrawn groups hold no arrays
                    curve.setData(*self._pairs(level, g, crop, mpp))
        for g, curve in enumerate(self._curves):
            curve.setVisible(self._colouring is None and bool(groups >> g & 1))
        self._update_nodes(view, mpp)
        self.detail_changed.emit()

    def _pairs(self, level: Level, g: int, crop, mpp: float):
        """x, y of group g: its segments in ``crop``, or near the markers, or none."""
        if self._colouring is not None or not self._groups >> g & 1:
            return np.zeros(0), np.zeros(0)
        if self._near >> g & 1:
            return level.pairs_near(g, [(m.pos().x(), m.pos().y()) for m in self.markers.values()
                                        if m.isVisible()], style.PINNED_NEAR_PX * mpp)
        return level.pairs(g, crop)

    def _pin(self, what: str, groups: int) -> None:
        """Keep the road groups ``groups`` (a bit mask) drawn for the route or a marker."""
        changed, self._pinned[what] = groups != self._pinned[what], groups
        if (changed or self._near) and self.level is not None:
            self.update_detail()       # (groups drawn near the markers follow them)

    def drawn_groups(self) -> list[str]:
        """Labels of the road groups drawn now (tests)."""
        return [g.label for g, c in zip(self.drawing.groups, self._curves) if c.isVisible()]

    def _update_nodes(self, view, mpp: float) -> None:
        near = mpp <= style.NODE_DOTS_BELOW_MPP and self.level is self.drawing.exact
        idx = self.drawing.nodes_in(view) if near else np.zeros(0, int)
        if 0 < idx.size <= style.MAX_NODE_DOTS:
            xy = self.drawing.node_xy[idx]
            self.nodes.setData(x=xy[:, 0], y=xy[:, 1])
            self.nodes.show()
        else:
            self.nodes.hide()

    # ------------------------------------------------------- route, markers
    def set_route(self, xy: np.ndarray | None, arcs: np.ndarray | None = None) -> None:
        """Draw the route polyline ``xy``; ``arcs`` (graph arc ids) keep its road classes drawn."""
        if xy is None or len(xy) == 0:
            xy = np.zeros((0, 2))
        for c in (self.route_casing, self.route):
            c.setData(x=xy[:, 0], y=xy[:, 1])
        self._pin("route", 0 if self.drawing is None or arcs is None or len(xy) == 0
                  else self.drawing.groups_of_arcs(arcs))

    def set_ghost(self, xy: np.ndarray | None) -> None:
        """The previous route, faint under the current one (None: none)."""
        xy = np.zeros((0, 2)) if xy is None or len(xy) == 0 else xy
        self.ghost.setData(x=xy[:, 0], y=xy[:, 1])

    def ghost_points(self) -> int:
        x, _ = self.ghost.getData()
        return 0 if x is None else len(x)

    def set_marker(self, which: str, node: int | None) -> None:
        m = self.markers[which]
        m.setVisible(node is not None and self.drawing is not None)
        if m.isVisible():
            self._drag_node[which] = node
            m.setPos(*map(float, self.drawing.node_xy[node]))
        self._pin(which, self.drawing.groups_at_node(node) if m.isVisible() else 0)

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
            if any(take(ev.scenePos()) for take in self._click_handlers):
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
