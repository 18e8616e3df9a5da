"""The CRP partition on the map: cell colouring, a cell's entries/exits and shortcut
matrix, a route through the levels, picking a cell (app/features/crp/map.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from app.features.crp import map as crp_map
from app.features.crp.map import CELL_PALETTE, CellOverlay, cell_colouring, cell_colours
from app.map_view import MapView
from app.network_geometry import build_drawing
from engine.crp.customization.customize import customize
from engine.crp.metric.decoder import load_decoder
from engine.crp.metric import FORBIDDEN
from engine.crp.partition.overlay import Overlay
from engine.crp.partition.nested import partition_graph
from engine.generate.network import generate_road_network

SHOTS = os.environ.get("ROUTELAB_SHOTS")   # a folder: save screenshots there (looked at by hand)


@pytest.fixture(scope="module")
def crp():
    g = generate_road_network(3000, seed=2)
    overlay = Overlay(g, partition_graph(g, seed=0))
    return g, overlay, customize(overlay, load_decoder("car-fastest"))


@pytest.fixture
def map_view(qtbot, crp):
    view = MapView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    view.set_network(build_drawing(crp[0]))
    return view


def _cell_matrix(overlay, metric, level, cell):
    topo = overlay.levels[level]
    ne, nx, _ = topo.counts(cell)
    return metric.shortcuts[level][topo.clique_first[cell]:topo.clique_first[cell + 1]].reshape(ne, nx)


def test_cell_colouring_bins_boundary_and_curves(map_view, crp):
    g, overlay, _ = crp
    for level in range(overlay.num_levels):
        cells = overlay.cell_of[level]
        colouring = cell_colouring(cells, overlay.levels[level].num_cells, (g.tail, g.head))
        assert colouring.name == "cells"
        assert len(colouring.pens) == len(colouring.z) == len(CELL_PALETTE) + 1
        for lv in map_view.drawing.levels:
            bins = colouring.segment_bins(lv)
            assert bins.shape == (lv.num_segments,)
            assert bins.min() >= 0 and bins.max() <= len(CELL_PALETTE)
            crossing = cells[lv.end_a] != cells[lv.end_b]
            np.testing.assert_array_equal(bins == len(CELL_PALETTE), crossing)
            assert crossing.any() and not crossing.all()
        map_view.set_colouring(colouring)
        sizes = map_view.bin_curve_sizes()
        assert map_view.colouring == "cells" and len(sizes) == len(CELL_PALETTE) + 1
        assert sizes[-1] > 0 and sum(s > 0 for s in sizes[:-1]) >= min(6, overlay.levels[level].num_cells)
        assert sum(sizes) == map_view.level.num_segments


def test_neighbouring_cells_get_different_colours(crp):
    g, overlay, _ = crp
    cells = overlay.cell_of[0]
    colour = cell_colours(cells, overlay.levels[0].num_cells, (g.tail, g.head))
    a, b = cells[g.tail], cells[g.head]
    cross = a != b
    clashes = np.count_nonzero(colour[a[cross]] == colour[b[cross]])
    assert clashes == 0                    # a dozen colours are plenty for a road map
    assert len(np.unique(colour)) >= 6     # spread over the palette, not 4 colours
    stride = cell_colours(cells, overlay.levels[0].num_cells)   # without arcs: by id
    np.testing.assert_array_equal(stride, (np.arange(stride.size) * crp_map.STRIDE) % len(CELL_PALETTE))


@pytest.mark.parametrize("level", [0, 1])
def test_show_cell_and_matrix(map_view, crp, level):
    g, overlay, metric = crp
    topo = overlay.levels[level]
    cell = int(np.argmax(np.diff(topo.clique_first)))      # the cell with the biggest matrix
    cells = CellOverlay(map_view)
    cells.show_cell(overlay, level, cell)
    ne, nx, _ = topo.counts(cell)
    assert cells.points_drawn() == (ne, nx) and ne > 0 and nx > 0
    heads = g.head[topo.entry_arc[topo.entry_first[cell]:topo.entry_first[cell + 1]]]
    assert np.all(overlay.cell_of[level][heads] == cell)
    np.testing.assert_allclose(cells.entries.data["x"], map_view.drawing.node_xy[heads, 0])
    assert cells.halo.getData()[0].size > 0

    s = _cell_matrix(overlay, metric, level, cell)
    cells.show_matrix(overlay, metric, level, cell)
    finite = np.count_nonzero(s != FORBIDDEN)
    assert cells.matrix_lines() == finite > 0 and cells.note == ""
    assert cells.points_drawn() == (ne, nx)
    drawn = [len(c.getData()[0]) // 2 for c in cells.matrix_curves]
    bins = cells.matrix_bins()
    assert drawn == [n for _, _, n in bins]
    full = [(lo, hi) for lo, hi, n in bins if n]
    assert len(full) >= 2
    assert full[0][0] == s[s != FORBIDDEN].min() and full[-1][1] == s[s != FORBIDDEN].max()
    assert all(hi < lo for (_, hi), (lo, _) in zip(full, full[1:]))    # cheap -> expensive
    assert len(cells.matrix_legend()) == len(full)

    cells.clear()
    assert cells.matrix_lines() == 0 and cells.points_drawn() == (0, 0)
    assert all(c.getData()[0] is None or len(c.getData()[0]) == 0 for c in cells.matrix_curves)


def test_matrix_is_capped_and_says_so(map_view, crp, monkeypatch):
    _, overlay, metric = crp
    cell = int(np.argmax(np.diff(overlay.levels[1].clique_first)))
    s = _cell_matrix(overlay, metric, 1, cell)
    finite = np.count_nonzero(s != FORBIDDEN)
    monkeypatch.setattr(crp_map, "MAX_MATRIX_LINES", finite // 4)
    cells = CellOverlay(map_view)
    cells.show_matrix(overlay, metric, 1, cell)
    assert 0 < cells.matrix_lines() <= finite // 4
    assert f"of {finite:,}" in cells.note


def test_forbidden_pairs_not_drawn(map_view, crp):
    _, overlay, metric = crp
    level, cell = 0, 0
    topo = overlay.levels[level]
    s = metric.shortcuts[level].copy()
    a, b = topo.clique_first[cell], topo.clique_first[cell + 1]
    s[a:b:2] = FORBIDDEN                    # every other pair: no path
    edited = type(metric)(overlay, metric.name, metric.arc_cost, metric.turn_weight,
                          [s] + metric.shortcuts[1:], unit=metric.unit)
    cells = CellOverlay(map_view)
    cells.show_matrix(overlay, edited, level, cell)
    assert cells.matrix_lines() == np.count_nonzero(s[a:b] != FORBIDDEN) < b - a


def test_route_levels_and_cell_at(map_view, crp, qtbot):
    _, overlay, _ = crp
    xy = map_view.drawing.node_xy
    cells = CellOverlay(map_view)
    cells.show_route_levels([(-1, xy[[0, 1, 2]]), (1, xy[[2, 50, 90]]), (-1, xy[[90, 91]]),
                             (2, xy[[5]])])        # a one-point piece draws nothing
    assert sorted(cells.route_curves) == [-1, 1]
    x, _ = cells.route_curves[-1].getData()
    assert len(x) == 5
    assert cells.route_curves[1].opts["pen"].widthF() > cells.route_curves[-1].opts["pen"].widthF()
    assert [label for _, label in cells.route_legend()] == ["road arcs", "level 1 shortcuts"]
    cells.clear()
    assert cells.route_curves == {}

    for node in (0, 1234, 2999):
        x, y = xy[node] + 0.5
        assert cells.cell_at(overlay, 1, x, y) == overlay.cell_of[1][node]
    cells.set_picking(overlay, 1)
    with qtbot.waitSignal(cells.cell_clicked) as blocker:
        assert cells.take_click(map_view.node_scene_pos(1234))
    assert blocker.args == [1, int(overlay.cell_of[1][1234])]
    cells.set_picking(None)
    assert not cells.take_click(map_view.node_scene_pos(1234))


def test_screenshot(map_view, crp, tmp_path):
    """Cells of level 1 coloured, the biggest cell's shortcut matrix on top."""
    g, overlay, metric = crp
    map_view.set_colouring(cell_colouring(overlay.cell_of[1], overlay.levels[1].num_cells,
                                          (g.tail, g.head)))
    cells = CellOverlay(map_view)
    cell = int(np.argmax(np.diff(overlay.levels[1].clique_first)))
    cells.show_matrix(overlay, metric, 1, cell)
    path = os.path.join(SHOTS or str(tmp_path), "crp_cells.png")
    assert map_view.grab().save(path)
    assert os.path.getsize(path) > 10_000
