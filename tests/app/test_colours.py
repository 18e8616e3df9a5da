"""Colours that mean one thing (issue #36, item 6): the service areas have a scale and a
legend of their own, apart from the tree's; and one extreme arc (a long ferry) does not
stretch the tree's bins until the land is one colour."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtTest import QTest

from app.features.tree.distance_bins import bodies, display_unit, make_bins
from tests.app.helpers import load_graph, show_tree, shown_window, trees
from tests.app.test_first_view import with_far_ferries

TIMEOUT_MS = 60_000
MIN_LAND_COLOURS = 10
MIN_RGB_APART = 60         # every band colour this far (RGB distance) from every tree colour


@pytest.fixture(scope="module")
def network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=4)


def grab(window, name: str) -> None:
    """With ROUTELAB_CHART_PNGS=folder: the window as a PNG there."""
    folder = os.environ.get("ROUTELAB_CHART_PNGS")
    if folder:
        QTest.qWait(200)                      # the side panel's layout settles first
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.grab().save(str(Path(folder) / f"{name}.png"))


def middle(graph) -> int:
    return int(np.argmin(np.hypot(*(graph.xy[:3000] - graph.xy[:3000].mean(axis=0)).T)))


@pytest.fixture
def window(qtbot):
    """The window at its default size, 1280x800."""
    with shown_window(qtbot, 1280, 800) as w:
        yield w


def test_service_areas_have_their_own_scale_and_legend(qtbot, window, network):
    load_graph(qtbot, window, network)
    area = window.controller("isochrone")
    area.check.setChecked(True)
    with qtbot.waitSignal(area.shown, timeout=TIMEOUT_MS, check_params_cb=lambda a: a is not None):
        show_tree(qtbot, window, middle(network), TIMEOUT_MS)
    bands = area.band_colors(area.answer.isochrones.cutoffs)
    tree = window.session.tree_bins.colors
    apart = min(np.linalg.norm(np.subtract(b, t)) for b in bands for t in tree)
    assert apart >= MIN_RGB_APART, apart                  # no band colour reads as a tree distance
    assert len(set(bands)) == len(bands)
    fills = [item.brush().color().getRgb()[:3] for item in area.overlay.items]
    assert len(fills) == len(bands)
    legend = area.legend.text()                           # the bands' own legend, under the option
    assert all(f"#%02x%02x%02x" % b in legend for b in bands)
    assert not any(f"#%02x%02x%02x" % t in legend for t in tree)
    assert area.legend is not trees(window).legend
    grab(window, "service-area")


def test_one_extreme_arc_does_not_make_the_land_one_colour(qtbot, window, network):
    g = with_far_ferries(network)             # two ferries to Corsica from the southernmost node
    load_graph(qtbot, window, g)
    answer = show_tree(qtbot, window, middle(g), TIMEOUT_MS)
    d, bins = answer.tree.distance, window.session.tree_bins
    land = d[:network.num_nodes]
    assert d[network.num_nodes:].min() > 20 * land.max()     # the ferries are extreme
    assert np.unique(bins.of(land)).size >= MIN_LAND_COLOURS
    sizes = window.map_view.tree_curve_sizes()
    assert sum(n > 0 for n in sizes[:-1]) >= MIN_LAND_COLOURS
    grab(window, "tree-with-ferries")
    labels = trees(window).legend.text()
    assert bins.labels()[-1] in labels and " km" in bins.labels()[-1]   # the far side's true distance


def test_bins_split_at_a_jump_and_keep_nice_widths():
    minutes = display_unit({"t": "ds"}, "t")
    rng = np.random.default_rng(0)
    land = rng.uniform(0, 25 * 600, 5000)
    island = 165 * 600 + rng.uniform(0, 15 * 600, 300)
    d = np.r_[0, land, island, [-1] * 5]
    assert [n for _, _, n in bodies(d)] == [5001, 300]
    bins = make_bins(d, minutes)
    assert bins.labels()[:2] == ["0 – 2 min", "2 – 4 min"] and bins.labels()[-1] == "165 – 180 min"
    assert np.unique(bins.of(land)).size == bins.count - 1 >= 12
    assert bins.of(np.array([-1]))[0] == bins.count
    one = make_bins(np.r_[0, land, 180 * 600], minutes)            # one far node: one bin of its own
    assert one.labels()[-1] == "180 – 182 min" and np.unique(one.of(land)).size >= 12
    plain = make_bins(np.r_[0, land], minutes)                     # no jump: as for the range alone
    assert plain.labels() == make_bins(land.max(), minutes).labels()
    grid = np.array([0, 200, 200, 400, 400, 400, 600, 600, 800])  # blocks are no jump
    assert len(bodies(grid)) == 1
