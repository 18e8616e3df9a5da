"""The service area on the map: each band of an isochrone set (engine.sssp.isochrone) as one
filled, light, semi-transparent area in its own colours, with a thin edge of the same colour,
above the roads (tree bins z 1-2) and below nodes, routes and markers (z 9 and up), so the
roads stay readable through it. The bands' scale (AREA_COLORS, teal to green) is apart
from the tree's (plasma), so no colour stands for two distances.

Two QGraphicsPathItems per band: the fill, whose path holds every ring of the band
(shells and holes) with the odd-even fill rule, so holes stay open; and the edge, the
shells alone (outlining every hole would scribble over the far bands).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import shapely
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

AREA_COLORS = ((0, 90, 120), (0, 140, 140), (60, 170, 100), (150, 190, 50))   # near ... far
FILL_ALPHA = 140         # semi-transparent: the roads show through ...
LIGHTEN = 0.3            # ... and the fill is a light tint of the band's colour
EDGE_ALPHA = 230
EDGE_PX = 1.5
Z = 3.0
ROADS_UNDER = 0.35       # the tree's roads fade under the areas


def band_path(geometry, to_xy, holes: bool = True) -> QPainterPath:
    """A (Multi)Polygon in lon/lat as one painter path in map metres (``to_xy``), with
    its holes or its shells alone."""
    parts = shapely.get_parts(geometry)
    rings = shapely.get_rings(parts) if holes else shapely.get_exterior_ring(parts)
    if rings.size == 0:
        return QPainterPath()
    lonlat, ring = shapely.get_coordinates(rings, return_index=True)
    xy = to_xy(lonlat)
    connect = np.append(ring[1:] == ring[:-1], False)      # no line from one ring to the next
    path = pg.arrayToQPath(xy[:, 0], xy[:, 1], connect=connect)
    path.setFillRule(Qt.OddEvenFill)
    return path


class IsochroneOverlay:
    def __init__(self, map_view) -> None:
        self.map_view = map_view
        self.items: list[QGraphicsPathItem] = []      # the fills, near to far
        self.edges: list[QGraphicsPathItem] = []

    def show(self, graph, bands, colors) -> None:
        """Draw ``bands`` (lon/lat geometries of ``graph``), band k in ``colors[k]`` (RGB)."""
        self.clear()
        self.map_view.dim_bins(ROADS_UNDER)
        to_xy = graph.projection.to_xy
        for band, color in zip(bands, colors):
            fill = QGraphicsPathItem(band_path(band, to_xy))
            tint = [round(c + (255 - c) * LIGHTEN) for c in color[:3]]
            fill.setBrush(QBrush(QColor(*tint, FILL_ALPHA)))
            fill.setPen(QPen(Qt.NoPen))
            edge = QGraphicsPathItem(band_path(band, to_xy, holes=False))
            pen = QPen(QColor(*color[:3], EDGE_ALPHA), EDGE_PX)
            pen.setCosmetic(True)                           # the same pixels at any zoom
            edge.setPen(pen)
            for item, z in ((fill, Z), (edge, Z + 0.1)):
                item.setZValue(z)
                self.map_view.plot.addItem(item, ignoreBounds=True)
            self.items.append(fill)
            self.edges.append(edge)

    def clear(self) -> None:
        for item in self.items + self.edges:
            self.map_view.plot.removeItem(item)
        if self.items:
            self.map_view.dim_bins(1.0)
        self.items, self.edges = [], []

    def filled_points(self) -> int:
        """Vertices drawn, over all bands (for tests)."""
        return sum(item.path().elementCount() for item in self.items)
