"""Path unpacking on several threads (engine/crp/query/lanes.py): the step runs cover the
path in order, several lanes give the arcs one lane gives, and the column-major copy's
stamps (search._column) let a lane read only what an earlier query filled or what it
filled itself."""
from __future__ import annotations

import dataclasses

import numpy as np

from engine.core.paths import Unreachable
from engine.crp.query import lanes
from engine.crp.query.lanes import split_runs
from engine.crp.query.search import _column
from engine.generate.network import generate_road_network
from tests.engine.test_crp import check_path, crp_setup, turn_lookup


def test_runs_cover_the_steps_in_order_with_about_equal_weight():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        levels = rng.integers(-1, 5, n)
        for count in (1, 2, 3, 4):
            runs = split_runs(levels, count)
            assert runs[0][0] == 0 and runs[-1][1] == n and len(runs) <= count
            assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(runs, runs[1:]))
    # 8 top steps (weight 8^4 each) and small ones: four lanes take two top steps each
    levels = np.array([-1] + [4, 0, -1] * 8)
    runs = split_runs(levels, 4)
    assert [int((levels[lo:hi] == 4).sum()) for lo, hi in runs] == [2, 2, 2, 2]
    assert split_runs(np.array([-1, 0, 1, -1]), 4) == [(0, 4)]       # too little work


def test_several_lanes_unpack_the_same_arcs_as_one(monkeypatch):
    """A metric without trees (the GPU's) unpacks by searches: on 3 lanes every path
    equals the one-lane path, arc for arc, and is valid; most paths are split."""
    monkeypatch.setattr(lanes, "MIN_PARALLEL", 0)
    g = generate_road_network(12_000, seed=44)
    overlay, metric, _ = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    bare = dataclasses.replace(metric, trees=None)
    from engine.crp import CrpQuery
    one, three = CrpQuery(overlay, bare), CrpQuery(overlay, bare)
    one._lanes.count, three._lanes.count = 1, 3
    turns = turn_lookup(overlay, bare)
    split = routes = 0
    for s, t in np.random.default_rng(44).integers(0, g.num_nodes, (150, 2)):
        try:
            a = one.route(int(s), int(t))
        except Unreachable:
            continue
        b = three.route(int(s), int(t))
        assert a.distance == b.distance and a.arcs.tolist() == b.arcs.tolist()
        check_path(g, bare, turns, b, set())
        _, levels = three.steps()
        routes += 1
        split += len(split_runs(levels, 3)) > 1
    assert routes > 100 and split > routes // 2


def test_a_lane_reads_earlier_fills_and_refills_what_another_lane_of_its_phase_stamped():
    # one cell: 2 entries x 3 exits, row-major [[1, 2, 3], [4, 5, 6]]
    shortcuts = np.arange(1, 7, dtype=np.int32)
    entry_first, exit_first = np.array([0, 2]), np.array([0, 3])
    col, filled = np.zeros(6, np.int32), np.zeros(1, np.int64)
    clique_first = np.array([0, 6])

    def read(me):
        mat, base = _column(0, 1, shortcuts, entry_first, exit_first,
                            (col, filled, clique_first, np.array([me])))
        return mat[base:base + 2].tolist()                 # exit 1's column: [2, 5]

    assert read(8 * 5 + 1) == [2, 5] and filled[0] == 8 * 5 + 1    # unfilled: fills
    col[:] = -1                                                     # (a stale copy)
    assert read(8 * 5 + 1) == [-1, -1]                  # its own fill: read as it is
    assert read(8 * 5 + 2) == [2, 5] and filled[0] == 8 * 5 + 2    # another lane, same
    col[:] = -1                                                     # phase: refilled
    assert read(8 * 6 + 0) == [-1, -1]                  # a later phase: read as it is
