"""The map's level of detail at scale (app/map_view.py, app/network_geometry.py): the
tile index finds exactly what a scan finds, zoomed out over a big network only the main
roads fit the segment budget, zoomed in every road is drawn in full detail, and a click
still picks the node under it. Assertions are on the drawn arrays, never on timings."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app import map_style as style
from app.map_view import Colouring, MapView
from app.network_geometry import LONG_TILE, build_drawing
from engine.core.graph import RoadGraph, haversine_m
from engine.generate.network import generate_road_network

LARGE = 200_000       # nodes of the "large" network: big enough to crop and budget, quick to build


@pytest.fixture(scope="module")
def large_drawing():
    return build_drawing(generate_road_network(LARGE, seed=3))


@pytest.fixture
def map_view(qtbot, large_drawing):
    mv = MapView()
    qtbot.addWidget(mv)
    mv.resize(900, 700)
    mv.show()
    qtbot.waitExposed(mv)
    mv.set_network(large_drawing)
    return mv


def scan(level, group, rect) -> np.ndarray:
    """The segments of ``group`` whose box meets ``rect``, by testing every one."""
    a, b = int(level.group_first[group]), int(level.group_first[group + 1])
    x0, y0, x1, y1 = level.x0[a:b], level.y0[a:b], level.x1[a:b], level.y1[a:b]
    keep = ((np.maximum(x0, x1) >= rect[0]) & (np.minimum(x0, x1) <= rect[2]) &
            (np.maximum(y0, y1) >= rect[1]) & (np.minimum(y0, y1) <= rect[3]))
    return a + np.flatnonzero(keep)


def random_rects(rng, bounds, count: int):
    xmin, ymin, xmax, ymax = bounds
    w, h = xmax - xmin, ymax - ymin
    for _ in range(count):
        size = w * 10 ** rng.uniform(-3, 0.2)        # from a street to more than everything
        cx, cy = rng.uniform(xmin - 0.2 * w, xmax + 0.2 * w), rng.uniform(ymin - 0.2 * h, ymax + 0.2 * h)
        yield (cx - size / 2, cy - size * h / w / 2, cx + size / 2, cy + size * h / w / 2)


def spoke_graph() -> RoadGraph:
    """A jittered grid of short streets plus three roads across the whole box (each
    longer than a tile of the segment index)."""
    rng = np.random.default_rng(7)
    cols, rows = 60, 50
    n = cols * rows
    r, c = np.divmod(np.arange(n), cols)
    lon, lat = 8.6 + 0.005 * c + rng.uniform(0, 0.002, n), 49.3 + 0.004 * r + rng.uniform(0, 0.002, n)
    right, up = np.flatnonzero(c < cols - 1), np.flatnonzero(r < rows - 1)
    u = np.concatenate([right, up, [0, cols - 1, n // 2]])
    v = np.concatenate([right + 1, up + cols, [n - 1, n - cols, n // 2 + cols - 1 - n // 2 % cols]])
    dist = np.maximum(1, np.rint(haversine_m(lon[u], lat[u], lon[v], lat[v]))).astype(np.int64)
    return RoadGraph.from_arcs(n, np.concatenate([u, v]), np.concatenate([v, u]),
                               {"distance": np.concatenate([dist, dist])}, lon=lon, lat=lat)


def drawn_segments(curve) -> np.ndarray:
    """The segments a curve draws, one row (x0, y0, x1, y1) each, sorted."""
    x, y = curve.getData()
    if x is None or len(x) == 0:
        return np.zeros((0, 4))
    rows = np.stack([x[0::2], y[0::2], x[1::2], y[1::2]], axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def segments_of(level, idx) -> np.ndarray:
    rows = np.stack([level.x0[idx], level.y0[idx], level.x1[idx], level.y1[idx]], axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def zoom(mv, qtbot, centre, half_width):
    cx, cy = centre
    with qtbot.waitSignal(mv.detail_changed, timeout=5000):
        mv.view.setRange(xRange=(cx - half_width, cx + half_width),
                         yRange=(cy - half_width, cy + half_width), padding=0)


# ------------------------------------------------------------------ tile index
def test_tile_index_finds_what_a_scan_finds(large_drawing):
    rng = np.random.default_rng(1)
    for level in large_drawing.levels:
        for rect in random_rects(rng, large_drawing.bounds, 25):
            for g in range(len(large_drawing.groups)):
                found = level.select(g, rect)
                assert np.array_equal(np.sort(found), scan(level, g, rect))
                assert level.count(g, rect) >= found.size        # the budget's bound is an upper one
        assert np.array_equal(level.select(), np.arange(level.num_segments))


def test_segments_longer_than_a_tile_are_found_in_any_rectangle():
    d = build_drawing(spoke_graph())
    exact = d.exact
    assert np.sum(exact.tile == LONG_TILE) == 3          # the three roads across the box
    rng = np.random.default_rng(2)
    for rect in random_rects(rng, d.bounds, 200):
        assert np.array_equal(np.sort(exact.select(0, rect)), scan(exact, 0, rect))


# ------------------------------------------------------------- level of detail
def test_zoomed_out_only_the_main_roads_fit_the_budget(map_view, large_drawing):
    mv, d = map_view, large_drawing
    mv.segment_budget = d.exact.num_segments // 10
    mv.fit()
    level, crop = mv.level, mv._crop
    sizes = [len(drawn_segments(c)) for c in mv._curves]
    drawn = [g for g, s in enumerate(sizes) if s]
    assert drawn == list(range(len(drawn))) and 0 < len(drawn) < len(d.groups)   # the main roads first
    assert sum(sizes) <= mv.segment_budget
    assert mv.drawn_groups() == [d.groups[g].label for g in drawn]
    for g in drawn:          # a drawn group is drawn whole (in the cropped region)
        assert np.array_equal(drawn_segments(mv._curves[g]), segments_of(level, scan(level, g, crop)))
    skipped = drawn[-1] + 1  # the next group did not fit
    assert sum(level.count(g, crop) for g in range(skipped + 1)) > mv.segment_budget


def test_zoomed_in_every_road_is_drawn_in_full_detail(map_view, large_drawing, qtbot):
    mv, d = map_view, large_drawing
    mv.segment_budget = d.exact.num_segments // 10
    mv.fit()
    zoomed_out = [len(drawn_segments(c)) for c in mv._curves]
    xmin, ymin, xmax, ymax = d.bulk
    zoom(mv, qtbot, ((xmin + xmax) / 2, (ymin + ymax) / 2), (xmax - xmin) / 60)
    assert mv.level is d.exact and mv._crop is not None
    for g, curve in enumerate(mv._curves):
        want = segments_of(d.exact, scan(d.exact, g, mv._crop))
        assert np.array_equal(drawn_segments(curve), want) and curve.isVisible()
    assert sum(1 for s in zoomed_out if s) < len(d.groups)


def test_a_colouring_draws_the_same_segments_in_its_bins(map_view, large_drawing, qtbot):
    mv, d = map_view, large_drawing
    mv.segment_budget = d.exact.num_segments // 10
    mv.fit()
    roads = sum(len(drawn_segments(c)) for c in mv._curves)
    mv.set_colouring(Colouring("tree", ("r", "b"), (3.0, 3.1), lambda level: level.end_a % 2))
    assert sum(mv.bin_curve_sizes()) == roads and not any(c.isVisible() for c in mv._curves)
    bins = np.concatenate([drawn_segments(c) for c in mv._bin_curves])
    want = np.concatenate([scan(mv.level, g, mv._crop) for g in range(len(d.groups)) if mv._groups >> g & 1])
    assert np.array_equal(bins[np.lexsort(bins.T[::-1])], segments_of(mv.level, want))


def test_a_pinned_class_over_the_budget_is_drawn_around_the_markers(map_view, large_drawing):
    mv, d = map_view, large_drawing
    mv.segment_budget = 1                    # only the most important group fits
    mv.fit()
    assert mv.drawn_groups() == [d.groups[0].label]
    service = next(g for g, x in enumerate(d.groups) if x.label == "service")
    node = int(d.exact.end_a[d.exact.group_first[service]])        # an end of a service road
    mv.set_marker("source", node)
    assert "service" in mv.drawn_groups()
    drawn = drawn_segments(mv._curves[service])
    r = style.PINNED_NEAR_PX * mv.metres_per_pixel()
    box = (*(d.node_xy[node] - r), *(d.node_xy[node] + r))
    assert np.array_equal(drawn, segments_of(mv.level, scan(mv.level, service, box))) and len(drawn)
    other = int(d.exact.end_a[d.exact.group_first[service + 1] - 1])
    mv.set_marker("source", other)           # the marker moves: its roads follow
    box = (*(d.node_xy[other] - r), *(d.node_xy[other] + r))
    assert np.array_equal(drawn_segments(mv._curves[service]), segments_of(mv.level, scan(mv.level, service, box)))
    mv.set_route(d.node_xy[:2], np.flatnonzero(d.arc_group == service)[:1])
    mv.set_marker("source", None)
    assert "service" in mv.drawn_groups() and len(drawn_segments(mv._curves[service])) == 0   # under the route
    mv.set_route(None)
    assert mv.drawn_groups() == [d.groups[0].label]
    mv.segment_budget = 20 * d.exact.num_segments        # where it is small, a pinned class is drawn whole
    mv.set_marker("target", node)
    assert np.array_equal(drawn_segments(mv._curves[service]),
                          segments_of(mv.level, scan(mv.level, service, mv._crop)))


def test_a_small_pinned_class_is_drawn_whole_a_big_one_near_the_markers(large_drawing):
    d = large_drawing
    service = next(g for g, x in enumerate(d.groups) if x.label == "service")
    level = d.exact
    n = level.count(service)
    majors = sum(1 << g for g, x in enumerate(d.groups) if x.major)
    everything = 2 * level.num_segments
    _, groups, near = d.detail(0.1, None, max(20 * n, everything), majors, 1 << service)
    assert groups == majors | 1 << service and near == 0
    _, groups, near = d.detail(0.1, None, 20 * n - 20, majors, 1 << service)
    assert near == 1 << service and groups & near == near


# ------------------------------------------------------------------ picking
def click(qtbot, mv, node: int) -> int:
    with qtbot.waitSignal(mv.node_clicked, timeout=2000) as got:
        QTest.mouseClick(mv.plot.viewport(), Qt.LeftButton, Qt.NoModifier,
                         mv.plot.mapFromScene(mv.node_scene_pos(node)))
    qtbot.wait(20)   # keep two clicks from reading as a double click
    return got.args[0]


def test_a_click_picks_the_node_under_it_at_large_scale(map_view, large_drawing, qtbot):
    mv, d = map_view, large_drawing
    rng = np.random.default_rng(5)
    for node in rng.choice(d.num_nodes, 4, replace=False):
        zoom(mv, qtbot, d.node_xy[node], 150.0)         # a few streets across
        assert click(qtbot, mv, int(node)) == node
    mv.fit()                                            # zoomed out: the node nearest the pixel
    node = int(rng.integers(d.num_nodes))
    picked = click(qtbot, mv, node)
    p = mv.view.mapSceneToView(mv.plot.mapToScene(mv.plot.mapFromScene(mv.node_scene_pos(node))))
    to_click = np.hypot(*(d.node_xy[[picked, node]] - (p.x(), p.y())).T)
    assert to_click[0] <= to_click[1] + 1e-6          # nothing nearer the clicked pixel was passed over
    assert np.hypot(*(d.node_xy[picked] - d.node_xy[node])) <= 2 * mv.metres_per_pixel()
