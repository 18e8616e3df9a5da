"""Hierarchy inspection on the map: a node's upward and downward hierarchy arcs as
straight segments (shortcuts dashed; upward arcs thinner, over the downward ones, so
both halves of a two-way pair show), four curves in all; a click on the middle of a
drawn arc emits ``arc_clicked``; ``set_unpacked`` draws a shortcut's road path and the
node it bypasses. The hierarchy controller owns it; it adds its items to the map.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

from app import map_style as style

ARC_PICK_PX = 6                # a click this close to a drawn hierarchy arc picks it ...
ARC_END_PX = 10                # ... unless it is this close to one of its end nodes
DASH_PX = (10.0, 6.0)          # shortcuts: dash and gap in pixels


class HierarchyOverlay(QObject):
    arc_clicked = Signal(int)      # a drawn hierarchy arc (its id) was clicked

    def __init__(self, map_view) -> None:
        super().__init__(map_view)
        self.map_view = map_view
        self._arc_pick: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # a, b, arc id
        self.curves: dict[tuple[bool, bool], pg.PlotCurveItem] = {}   # (up, shortcut)
        for up, color, width in ((True, style.UP_COLOR, style.UP_WIDTH),
                                 (False, style.DOWN_COLOR, style.DOWN_WIDTH)):
            for shortcut in (False, True):
                pen = pg.mkPen(color, width=width)
                if shortcut:       # the same dashes in pixels for both widths, so they align
                    pen.setDashPattern([DASH_PX[0] / width, DASH_PX[1] / width])
                curve = pg.PlotCurveItem(pen=pen, connect="pairs", skipFiniteCheck=True)
                curve.setZValue(12 + 0.5 * up + 0.2 * shortcut)    # upward on top
                self.curves[up, shortcut] = curve
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
        for it in (*self.curves.values(), self.unpacked_casing, self.unpacked,
                   self.inspected, self.midpoint):
            map_view.plot.addItem(it, ignoreBounds=True)

    def show_arcs(self, node: int, arc_id: np.ndarray, other: np.ndarray,
                  up: np.ndarray, shortcut: np.ndarray) -> None:
        """Draw the hierarchy arcs of an inspected ``node`` as straight segments to their
        ``other`` end nodes: upward and downward in two colours, shortcuts dashed. Every
        segment starts at ``node``, so the dashes of an up/down pair line up."""
        xy = self.map_view.drawing.node_xy
        a, b = np.broadcast_to(xy[node], (len(other), 2)), xy[other]
        for (is_up, is_shortcut), curve in self.curves.items():
            m = (up == is_up) & (shortcut == is_shortcut)
            x, y = np.empty(2 * m.sum()), np.empty(2 * m.sum())
            x[0::2], x[1::2], y[0::2], y[1::2] = a[m, 0], b[m, 0], a[m, 1], b[m, 1]
            curve.setData(x=x, y=y)
        self.inspected.setData(x=xy[node:node + 1, 0], y=xy[node:node + 1, 1])
        self._arc_pick = (a, b, np.asarray(arc_id))
        self.set_unpacked(None)

    def clear(self) -> None:
        for curve in self.curves.values():
            curve.setData(x=[], y=[])
        self.inspected.setData([], [])
        self._arc_pick = None
        self.set_unpacked(None)

    def curve_sizes(self) -> dict[tuple[bool, bool], int]:
        """Drawn arcs per (up, shortcut) curve (tests)."""
        return {k: 0 if c.getData()[0] is None else len(c.getData()[0]) // 2
                for k, c in self.curves.items()}

    def set_unpacked(self, xy: np.ndarray | None, midpoint: int = -1) -> None:
        """A shortcut's road path ([k, 2] points) and the node it bypasses (-1: none)."""
        xy = np.zeros((0, 2)) if xy is None else xy
        for c in (self.unpacked_casing, self.unpacked):
            c.setData(x=xy[:, 0], y=xy[:, 1])
        if midpoint >= 0 and self.map_view.drawing is not None:
            p = self.map_view.drawing.node_xy[midpoint]
            self.midpoint.setData(x=[p[0]], y=[p[1]])
        else:
            self.midpoint.setData([], [])

    def arc_near(self, scene_pos) -> int:
        """The drawn hierarchy arc within ARC_PICK_PX of a scene position, away from its
        ends (a click there means a node), else -1."""
        if self._arc_pick is None or not len(self._arc_pick[2]):
            return -1
        a, b, arc_id = self._arc_pick
        p = self.map_view.view.mapSceneToView(scene_pos)
        p = np.array([p.x(), p.y()])
        ab = b - a
        length = np.hypot(ab[:, 0], ab[:, 1])
        t = np.clip(((p - a) * ab).sum(axis=1) / np.maximum(length ** 2, 1e-12), 0.0, 1.0)
        dist = np.hypot(*(a + t[:, None] * ab - p).T)
        mpp = self.map_view.metres_per_pixel()
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
        return self.map_view.view.mapViewToScene(pg.Point(float(m[0]), float(m[1])))

    def take_click(self, scene_pos) -> bool:
        arc = self.arc_near(scene_pos)
        if arc >= 0:
            self.arc_clicked.emit(arc)
        return arc >= 0
