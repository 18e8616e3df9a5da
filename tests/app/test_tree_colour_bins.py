"""The window colours a tree from the engine's bins, one byte per node (issue #37, PHAST
at scale): a PHAST tree's bins are made where the tree is, and every drawn road gets
exactly the colour the host distances gave it before (the bin of its farther end)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from PySide6.QtCore import Qt

from engine.routing.reference import sssp
from app.features.tree.distance_bins import make_bins, segment_distance
from tests.app.helpers import ch, load_graph, show_tree

TREE_TIMEOUT_MS = 30_000
CONTRACT_TIMEOUT_MS = 120_000
K = 64


@pytest.fixture(scope="module")
def plain_network():
    """A node-based network (no turn information): PHAST runs on the road graph itself."""
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=3000, seed=4)
    return dataclasses.replace(g, turn_restrictions=None, arc_attrs={})


def test_phast_tree_is_coloured_from_the_engines_node_bins(qtbot, window, plain_network):
    g = plain_network
    load_graph(qtbot, window, g)
    ch(window).panel.k_spin.setValue(K)
    with qtbot.waitSignal(ch(window).hierarchy_shown, timeout=CONTRACT_TIMEOUT_MS,
                          check_params_cb=lambda h: h is not None):
        qtbot.mouseClick(ch(window).panel.contract_button, Qt.LeftButton)
    source = int(np.argmin(np.hypot(*(g.xy - g.xy.mean(axis=0)).T)))
    answer = show_tree(qtbot, window, source, TREE_TIMEOUT_MS)
    assert answer.method == "phast" and answer.bins is not None
    assert np.array_equal(answer.tree.distance, sssp(g, source, answer.tree.metric).distance)
    bins = window.session.tree_bins
    assert bins.node_bin is not None and bins.node_bin.dtype == np.uint8
    before = make_bins(answer.tree.distance, bins.unit)          # the host colouring
    assert np.array_equal(bins.lows, before.lows) and np.array_equal(bins.highs, before.highs)
    colouring = window.map_view._colouring
    for level in window.session.drawing.levels:
        want = before.of(segment_distance(level.end_a, level.end_b, answer.tree.distance))
        assert np.array_equal(colouring.segment_bins(level), want)
