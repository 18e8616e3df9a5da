"""The map's arrays: segments along geometry, two-way roads once, coarser levels, routes."""
from __future__ import annotations

import numpy as np

from app.map_style import CLASS_TO_GROUP, ROAD_GROUPS
from app.network_geometry import build_drawing
from engine.core.graph import ROAD_CLASS_INDEX
from engine.core.polylines import route_polyline
from engine.routing.reference import shortest_path

from tests.app.helpers import ID_OFFSET, SIDE, grid_graph


def endpoints(level) -> np.ndarray:
    return np.concatenate([np.stack([level.x0, level.y0], 1), np.stack([level.x1, level.y1], 1)])


def test_projection_matches_graph_xy(graph):
    assert np.allclose(graph.projection.project(graph.lon, graph.lat), graph.xy)


def test_two_way_roads_drawn_once_along_their_geometry(graph):
    d = build_drawing(graph)
    streets = 2 * SIDE * (SIDE - 1)      # undirected grid streets
    horizontal = SIDE * (SIDE - 1)       # these have a bend point: two segments each
    assert d.exact.num_segments == streets + horizontal + 1   # + the island's arc
    ends = endpoints(d.exact)
    for bend in d.points[graph.num_nodes:]:
        # both directions carry the bend; the road is drawn once: two segments meet there
        assert np.sum(np.abs(ends - bend).max(axis=1) < 1e-9) == 2


def test_segments_are_grouped_by_road_class(graph):
    d = build_drawing(graph)
    primary = int(CLASS_TO_GROUP[ROAD_CLASS_INDEX["primary"]])
    assert d.groups == ROAD_GROUPS
    x, y = d.exact.pairs(primary)
    assert x.size == 2 * 2 * (SIDE - 1)              # one row of streets, 2 segments each
    assert np.allclose(y[::2] - y[0], 0, atol=25)     # a horizontal row (bends 20 m off)


def test_plain_graph_is_one_grey_group():
    d = build_drawing(grid_graph(classes=False, geometry=False))
    assert len(d.groups) == 1 and d.exact.num_segments == 2 * SIDE * (SIDE - 1) + 1


def test_no_coordinates_no_drawing():
    assert build_drawing(grid_graph(coordinates=False)) is None


def test_crop_keeps_segments_meeting_the_rectangle(graph):
    d = build_drawing(graph)
    xmin, ymin, xmax, ymax = d.bounds
    x_all, _ = d.exact.pairs(5)
    x, y = d.exact.pairs(5, (xmin, ymin, xmin + 10, ymax))
    assert 0 < x.size < x_all.size
    assert np.all(np.minimum(x[0::2], x[1::2]) <= xmin + 10)


def test_coarse_levels_have_fewer_segments_and_stay_within_a_cell():
    d = build_drawing(grid_graph(60), coarsest_cells=16)
    assert len(d.levels) >= 2 and d.levels[-1] is d.exact
    cells = [lvl.cell for lvl in d.levels]
    assert cells == sorted(cells, reverse=True) and cells[-1] == 0
    for lvl in d.levels[:-1]:
        assert lvl.num_segments < d.exact.num_segments
        # each drawn endpoint is the mean of points of its cell: some point lies within a cell
        dist, _ = d.tree.query(endpoints(lvl))
        assert dist.max() <= np.sqrt(2) * lvl.cell + 1e-6
    assert d.level_for(1e9) is d.levels[0]
    assert d.level_for(0.01) is d.exact
    for lvl in d.levels[:-1]:
        assert d.level_for(lvl.cell * 1.01).cell <= lvl.cell * 1.01


def test_route_polyline_follows_arc_geometry(graph):
    d = build_drawing(graph)
    s, t = (int(i) for i in graph.index_of([ID_OFFSET + SIDE * 2, ID_OFFSET + SIDE * 2 + SIDE - 1]))
    path = shortest_path(graph, s, t)
    xy = route_polyline(d.points, graph, path.arcs)
    assert np.allclose(xy[0], graph.xy[s]) and np.allclose(xy[-1], graph.xy[t])
    assert len(xy) == path.num_arcs * 2 + 1          # a bend point inside every arc
    assert route_polyline(d.points, graph, np.zeros(0, np.int32)).shape == (0, 2)
