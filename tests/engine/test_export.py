"""Export geometry (issue 15): a polygon's GeoJSON follows the right-hand rule and its
rings are closed. The files the commands write are tested by tests/app/test_cli_export.py."""
from __future__ import annotations

import shapely
from shapely.geometry import shape


def test_polygon_geojson_is_right_hand_and_closed():
    from engine.export.geojson import polygonal
    square = shapely.Polygon([(0, 0), (0, 1), (1, 1), (1, 0)], holes=[[(0.2, 0.2), (0.8, 0.2), (0.8, 0.8)]])
    g = polygonal(square)                              # clockwise in, counter-clockwise out
    outer, hole = g["coordinates"]
    assert outer[0] == outer[-1] and hole[0] == hole[-1]
    assert shapely.LinearRing(outer).is_ccw and not shapely.LinearRing(hole).is_ccw
    assert shape(g).equals(square)
