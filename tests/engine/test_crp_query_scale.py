"""The CRP query on many top cells (issue #37): the top-level upper bound of
bounds.top_upper, which lets the search prune from the start, keeps every route
exact (against the arc-to-arc oracle of tests/turn_oracle.py), and the bound it
gives is a real path's cost, never below the optimum."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.paths import Unreachable
from engine.crp.metric import FORBIDDEN
from engine.crp.query.bounds import top_upper
from engine.generate.network import generate_road_network
from tests.engine.test_crp import compare_with_oracle, crp_setup

# cells of 2^8 nodes on top: ~90 top cells on 24,000 nodes, as a continental graph
# has on its top level, so most random pairs search through many top cells
LEVELS = (4, 6, 8)


@pytest.fixture(scope="module")
def many_top_cells():
    g = generate_road_network(24_000, seed=11)
    return g, crp_setup(g, "car-fastest", levels=LEVELS)


def test_many_top_cells_match_the_oracle(many_top_cells):
    g, (overlay, metric, query) = many_top_cells
    assert overlay.levels[-1].num_cells >= 60
    assert compare_with_oracle(g, overlay, metric, query, 15, 20, seed=3) == 300


def test_many_top_cells_other_decoder_matches_the_oracle():
    g = generate_road_network(15_000, seed=12)
    overlay, metric, query = crp_setup(g, "delivery", levels=LEVELS)
    assert compare_with_oracle(g, overlay, metric, query, 10, 20, seed=4) == 200


def test_top_upper_is_a_real_path_never_below_the_optimum(many_top_cells):
    g, (overlay, metric, query) = many_top_cells
    q = query.space
    rng = np.random.default_rng(8)
    found = 0
    for s, t in rng.integers(0, g.num_nodes, (60, 2)):
        try:
            cost = query.route(int(s), int(t)).distance
        except Unreachable:
            continue
        cs, ct = query._node_cell[s], query._node_cell[t]
        bounds = query._bounds.get(cs, ct, query.shortcuts)
        # the finished search's costs seed it (the search itself calls it midway)
        upper = top_upper(query._dist, query._touched, query._ntouched, q.head_rec, q.exit_first,
                          q.exit_q, query.shortcuts, bounds, cs, ct, FORBIDDEN, 10**9)
        assert upper >= cost, (int(s), int(t), upper, cost)
        found += upper < FORBIDDEN
    assert found >= 20                     # it does find paths, not only FORBIDDEN
