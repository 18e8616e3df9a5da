"""The CRP query's speed-ups keep it exact (engine/crp/query: the top-level lower
bounds of bounds.py prune the search, search.py keeps per-arc records reset only where
touched, unpack.py recomputes the steps' levels and walks the customization's
shortest-path trees, customization/trees.py): several hundred random pairs on NY
and on an OSM extract with restrictions against the independent arc-to-arc oracle
(tests/turn_oracle.py, SciPy), every path walked for banned turns and its cost."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.paths import Unreachable
from engine.crp import CrpQuery, Overlay, load_decoder, partition_graph
from engine.crp.customization.customize import customize
from engine.generate.network import generate_road_network
from engine.io import load
from tests.conftest import NY_T, PORTO, need
from engine.crp.metric import FORBIDDEN
from tests.engine.test_crp import check_path, compare_with_oracle, crp_setup, turn_lookup
from tests.turn_oracle import EdgeOracle


@pytest.mark.slow
def test_ny_several_hundred_pairs_match_the_oracle():
    g = load([need(NY_T)])
    overlay, metric, query = crp_setup(g, "dimacs-time")
    assert compare_with_oracle(g, overlay, metric, query, 20, 25, seed=34) == 500


@pytest.mark.slow
def test_porto_with_restrictions_matches_the_oracle():
    g = load([need(PORTO)])
    assert len(g.turn_restrictions) > 0
    overlay = Overlay(g, partition_graph(g, seed=0))
    metric = customize(overlay, load_decoder("car-fastest"))
    query = CrpQuery(overlay, metric)
    assert compare_with_oracle(g, overlay, metric, query, 20, 20, seed=34) == 400
    other = customize(overlay, load_decoder("delivery"))
    query.set_metric(other)          # the bounds of the old metric must not survive
    assert compare_with_oracle(g, overlay, other, query, 10, 20, seed=35) == 200


def test_bounds_never_exceed_the_costs_they_bound():
    """bounds.py: to[C][y] is at most the cost from top arc y to a node of C, and
    from[C][y] at most the cost from a node of C to y (arc distances of the oracle)."""
    from scipy.sparse import csgraph
    from engine.crp.metric.costs import decode
    g = generate_road_network(6_000, seed=21)
    overlay, metric, query = crp_setup(g, "car-fastest")
    b, q = query._bounds, query.space
    assert b.btop > 0
    costs = decode(g, overlay.turns, metric.decoder)
    oracle = EdgeOracle(g, costs.arc_cost, costs.program.turn_cost)
    top_arcs = q.arc_of_q[:b.btop]
    checked = 0
    for v in np.random.default_rng(3).integers(0, g.num_nodes, 6):
        cells = query._node_cell[v]
        to_v, from_v = b.get(cells, cells, query.shortcuts)[:2]
        out = np.arange(g.first_out[v], g.first_out[v + 1])
        into = g.backward.in_arc[g.backward.first_in[v]:g.backward.first_in[v + 1]]
        if out.size == 0 or into.size == 0:
            continue
        # cost from v up to and including each arc; from each arc to v (after it)
        after_v = (csgraph.dijkstra(oracle.matrix, indices=out)
                   + oracle.arc_cost[out][:, None]).min(axis=0)[top_arcs]
        before_v = csgraph.dijkstra(oracle.matrix.T.tocsr(), indices=into).min(axis=0)[top_arcs]
        for lb, cost in ((from_v, after_v), (to_v, before_v)):
            ok = (lb >= 0) & np.isfinite(cost)
            assert np.all(lb[ok] <= cost[ok] + 1e-3)
            checked += int(ok.sum())
    assert checked > 0


@pytest.mark.parametrize("decoder, seed", [("car-fastest", 40), ("delivery", 41)])
def test_two_stage_search_between_top_cells_matches_the_oracle(decoder, seed):
    """staged.py (s and t in different top cells: each cell explored alone, then an A*
    over the top level) on a network with banned turns and many small top cells: every
    cost equals the oracle's, every path is valid, and most pairs took that search."""
    g = generate_road_network(12_000, seed=seed)
    assert len(g.turn_restrictions) > 0
    overlay, metric, query = crp_setup(g, decoder, levels=(4, 7, 9))
    top = overlay.num_levels - 1
    assert overlay.levels[top].num_cells >= 16
    assert compare_with_oracle(g, overlay, metric, query, 15, 20, seed=seed) == 300
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, g.num_nodes, (300, 2))
    apart = overlay.cell_of[top, pairs[:, 0]] != overlay.cell_of[top, pairs[:, 1]]
    assert apart.mean() > 0.8


def test_top_exit_costs_place_every_top_arc_once_and_are_cleared_after_each_route():
    """The A*'s copy of the top arcs' forward costs in the top cells' exit order
    (bounds._top_exits, staged._expand reads a top row's from it): each top arc has one
    place, at its own index in its tail cell's exit list, and the copy is all FORBIDDEN
    again after every route, found or not (the next query relies on it)."""
    g = generate_road_network(12_000, seed=43)
    overlay, metric, query = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    q, bounds = query.space, query._bounds
    pos, costs, first = bounds.exits
    top, btop = bounds.top, bounds.btop
    assert np.array_equal(np.sort(pos[:btop]), np.arange(btop))
    exits = q.exit_q[first:first + btop]
    assert np.array_equal(pos[exits], np.arange(btop))
    assert np.all(q.tail_rec[exits, top, 0] - bounds.base
                  == np.searchsorted(q.exit_first[bounds.base:bounds.base + bounds.cells + 1] - first,
                                     np.arange(btop), side="right") - 1)
    apart = 0
    for s, t in np.random.default_rng(43).integers(0, g.num_nodes, (60, 2)):
        apart += overlay.cell_of[top, s] != overlay.cell_of[top, t]
        try:
            query.route(int(s), int(t))
        except Unreachable:
            pass
        assert np.all(costs == FORBIDDEN)
    assert apart > 40


def _top_step_through_end_cell(query) -> bool:
    """Whether the last route's search path took a top-level step out of the source's or
    the target's top cell (staged.py's A* crosses them by their top rows; the step's
    stamp tells unpacking so: search.free_level would pick a lower level there)."""
    from engine.crp.query.search import free_level
    from engine.crp.query.unpack import search_steps
    lv = query._levels_of
    arc_level, query_level, head_rec, _, cs, ct, stamps, number, top = lv
    arcs, _ = search_steps(query._meet, query._rec, lv)
    return any(x < stamps.size and stamps[x] == number
               and free_level(p, arc_level, query_level, head_rec, cs, ct) != top
               for p, x in zip(arcs[:-1], arcs[1:]))


def test_across_stage_crosses_the_end_cells_by_top_rows_and_stays_exact():
    """Paths that enter the target's top cell and leave it again (or go back through the
    source's) cross it by its top row in the A*; such routes still match the oracle
    and unpack to valid paths, and the pairs include enough of them to say so."""
    g = generate_road_network(12_000, seed=44)
    overlay, metric, query = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    crossed, route = [], query.route

    def counting(s, t):
        path = route(s, t)
        crossed.append(_top_step_through_end_cell(query))
        return path

    query.route = counting
    assert compare_with_oracle(g, overlay, metric, query, 10, 30, seed=44) == 300
    assert sum(crossed) >= 15


def test_stage_one_on_two_threads_equals_it_on_one():
    """staged.py runs the backward search of stage 1 on a side thread: neither search
    reads the other's costs, so every cost and every path equals the one-thread run's,
    query after query (the arcs both reached are met afterwards, each listed once)."""
    from concurrent.futures import ThreadPoolExecutor
    g = generate_road_network(12_000, seed=42)
    overlay, metric, query = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    pairs = np.random.default_rng(42).integers(0, g.num_nodes, (120, 2))
    answers = []
    for side in (None, ThreadPoolExecutor(1), None):
        query._side = side
        got = []
        for s, t in pairs:
            try:
                p = query.route(int(s), int(t))
                got.append((p.distance, p.arcs.tolist()))
            except Unreachable:
                got.append(None)
            listed = query._touched[:query._ntouched]
            assert np.unique(listed).size >= listed.size - 8     # the seeds at most twice
        answers.append(got)
    assert answers[0] == answers[1] == answers[2]
    assert sum(a is not None for a in answers[0]) > 100


def test_tables_built_together_equal_tables_built_one_by_one():
    """bounds.py builds every top cell's two tables at the first query, in parallel: each
    equals that table built alone, and a new metric builds them again."""
    from engine.crp.query.bounds import top_dijkstra
    g = generate_road_network(6_000, seed=21)
    overlay, metric, query = crp_setup(g, "car-fastest")
    b, q = query._bounds, query.space
    query.route(0, g.num_nodes - 1)
    assert b.done.all() and b.build_ms > 0
    rec, heap = np.full((b.btop, 2), -1, np.int32), np.empty(b.btop, np.int64)
    for f in (0, 1):
        for c in range(b.cells):
            lb, cell_lb = np.empty(b.btop, np.int32), np.empty(b.cells, np.int32)
            top_dijkstra(f, b.base + c, b.top, q.head_rec, q.tail_rec, q.entry_first, q.entry_q,
                         q.exit_first, q.exit_q, query.shortcuts, lb, cell_lb, b.base, rec, heap)
            assert np.array_equal(lb, b.lb[f, c]) and np.array_equal(cell_lb, b.cell_lb[f, c])
    query.set_metric(customize(overlay, load_decoder("delivery")))
    assert not b.done.any() and b.build_ms == 0
    query.route(0, g.num_nodes - 1)
    assert b.done.all()


def test_entry_group_tables_are_top_level_distances():
    """bounds.py's group tables: the top-level distance (SciPy over the top cells'
    matrices) from every top arc to the entries of one top cell that lead into one
    subcell; each cell's groups are its subcells, and the least over them is to[C]."""
    from scipy import sparse
    from scipy.sparse import csgraph
    g = generate_road_network(12_000, seed=22)
    overlay, metric, query = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    b, q = query._bounds, query.space
    query.route(0, g.num_nodes - 1)
    top, btop = b.top, b.btop
    rows, cols, costs = [], [], []
    for y in range(btop):                   # the top level: entry y -> its cell's exits
        cell, row = q.head_rec[y, top]
        lo, hi = q.exit_first[cell], q.exit_first[cell + 1]
        w = query.shortcuts[row:row + hi - lo]
        keep = w < FORBIDDEN
        rows += [y] * int(keep.sum())
        cols += q.exit_q[lo:hi][keep].tolist()
        costs += w[keep].tolist()
    reverse = sparse.csr_matrix((np.asarray(costs, float) + 1e-9, (cols, rows)),
                                shape=(btop, btop))    # + 1e-9: zero costs stay arcs
    cell_of = q.head_rec[:btop, top, 0] - b.base
    sub = q.head_rec[:btop, top - 1, 0]
    assert b.groups == max(np.unique(sub[cell_of == c]).size for c in range(b.cells)) >= 2
    for c in range(b.cells):
        for k, subcell in enumerate(np.unique(sub[cell_of == c])):
            entries = np.flatnonzero((cell_of == c) & (sub == subcell))
            assert np.all(b.group[entries] == k)
            want = csgraph.dijkstra(reverse, indices=entries, min_only=True)
            got = b.group_lb[c, :, k].astype(float)
            got[got >= FORBIDDEN] = np.inf
            assert np.allclose(got, want, atol=1e-3), (c, k)
        inside = cell_of == c
        assert np.array_equal(b.lb[0, c][~inside], b.group_lb[c].min(axis=1)[~inside])


def test_steps_and_unpacking_after_pruned_searches():
    g = generate_road_network(10_000, seed=8)
    overlay, metric, query = crp_setup(g, "delivery")
    rng = np.random.default_rng(1)
    for s, t in rng.integers(0, g.num_nodes, (80, 2)):
        try:
            p = query.route(int(s), int(t))
        except Unreachable:
            assert query.steps() is None
            continue
        arcs, levels = query.steps()
        assert arcs[0] == p.arcs[0] and arcs[-1] == p.arcs[-1]
        assert set(arcs.tolist()) <= set(p.arcs.tolist())
        assert levels[0] == -1 and levels.max() < overlay.num_levels


def test_unpacking_hints_are_each_entry_s_shortest_path_tree():
    """customization/trees.py: walking a level-l tree from exit j back to entry r
    follows local edges whose level-(l-1) weights add up to S_l[c][r][j]."""
    from engine.crp.customization.trees import tree_layout
    g = generate_road_network(6_000, seed=21)
    overlay, metric, _ = crp_setup(g, "car-fastest")
    layout = tree_layout(overlay)
    assert metric.trees is not None and metric.trees.size == layout.size
    checked = 0
    for t in overlay.levels[1:]:
        weights = metric.level_weights(t.level)
        for c in range(0, t.num_cells, max(1, t.num_cells // 8)):
            ne, nx, nv = t.counts(c)
            v0 = int(t.vertex_first[c])
            s = metric.cell_matrix(t.level, c)
            for r in range(ne):
                row = int(layout.first[t.level][c]) + r * (nv - ne) - ne
                for j in range(nx):
                    if s[r, j] == FORBIDDEN:
                        continue
                    v, cost = nv - nx + j, 0
                    while v != r:
                        u = int(metric.trees[row + v])
                        lo, hi = t.edge_first[v0 + u], t.edge_first[v0 + u + 1]
                        k = lo + np.flatnonzero(t.edge_to[lo:hi] == v0 + v)
                        cost += int(weights[t.edge_weight[k]].min())
                        v = u
                    assert cost == s[r, j]
                    checked += 1
    assert checked > 100


def test_routes_without_hints_equal_routes_with_them():
    """A metric with no unpacking hints (the GPU customizer's) unpacks by search: the
    same costs, valid paths."""
    import dataclasses
    g = generate_road_network(8_000, seed=4)
    overlay, metric, query = crp_setup(g, "car-fastest")
    bare = CrpQuery(overlay, dataclasses.replace(metric, trees=None))
    assert bare._hints[4].size == 0 and query._hints[4].size > 0
    turns = turn_lookup(overlay, metric)
    for s, t in np.random.default_rng(2).integers(0, g.num_nodes, (150, 2)):
        try:
            a = query.route(int(s), int(t))
        except Unreachable:
            with pytest.raises(Unreachable):
                bare.route(int(s), int(t))
            continue
        b = bare.route(int(s), int(t))
        assert a.distance == b.distance
        check_path(g, metric, turns, b, set())
        check_path(g, metric, turns, a, set())


def test_routes_without_hints_on_four_levels_match_the_oracle():
    """Unpacking without hints searches each shortcut's cell from both ends (unpack.py):
    on four levels and banned turns every cost equals the oracle's and every path is
    valid."""
    import dataclasses
    g = generate_road_network(12_000, seed=43)
    overlay, metric, _ = crp_setup(g, "car-fastest", levels=(4, 7, 9))
    bare = dataclasses.replace(metric, trees=None)
    query = CrpQuery(overlay, bare)
    assert compare_with_oracle(g, overlay, bare, query, 15, 20, seed=43) == 300
    urec, _, _, brec, _, _ = query._lanes.scratch(0)       # sized by the arcs crossing level 0
    assert urec.shape[0] == brec[0].shape[0] == query.space.crossing[0]


def test_row_chunk_test_flags_exactly_the_chunks_with_an_improving_exit():
    """staged._improves (the A*'s vector pre-test of ROW_CHUNK exits): True iff some exit
    j in [lo, hi) has d + row[j] below both its own cost and best, FORBIDDEN weights and
    costs included (sums are int64: no wrap)."""
    from engine.crp.query.staged import _improves
    rng = np.random.default_rng(3)
    for _ in range(400):
        n = int(rng.integers(1, 90))
        shortcuts = rng.integers(0, 1000, n + 40).astype(np.int32)
        shortcuts[rng.random(shortcuts.size) < 0.2] = FORBIDDEN
        fc = rng.integers(0, 1500, n + 40).astype(np.int32)
        fc[rng.random(fc.size) < 0.3] = FORBIDDEN
        base, k0 = int(rng.integers(0, 40)), int(rng.integers(0, 40))
        d, best = np.int64(rng.integers(0, 800)), np.int64(rng.choice([FORBIDDEN, 1200]))
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo, n + 1))
        want = any(d + shortcuts[base + j] < min(fc[k0 + j], best) for j in range(lo, hi))
        assert _improves(shortcuts, base, fc, k0, d, best, lo, hi) == want
