"""Parity of every CU-CH step: one body per step, run on NumPy and on CuPy from the
same input (the CPU's level graph a few levels into a contraction, copied to the
device), arrays equal. The GPU runs the fused kernels of engine/kernels/ch.cu, the
CPU the array formulation (Numba for the witness search, SciPy for APSP)."""
from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.ch import DEFAULT_C, Contraction, witness
from engine.ch.apsp import INF, core_apsp
from engine.ch.extract import next_level_graph
from engine.ch.level_graph import broken_paths
from engine.ch.score import importance
from engine.ch.select import independent_set
from engine.ch.shortcut import Shortcuts, find_shortcuts, pair_order
from engine.ch.update import ArcTable
from engine.generate.network import generate_road_network

CPU = cpu_backend()
SNAPSHOTS = (0, 3, 10)        # levels at which every step is compared
K = 257                       # the core APSP is compared on the last level graph


class Level:
    """The CPU state at the start of a level: G_l and its live nodes."""

    def __init__(self, state: Contraction) -> None:
        self.level, self.g = state.level, state.g
        self.alive, self.live_ids = state.alive.copy(), state.live_ids.copy()
        self.out_first = self.g.out_first()
        self.score = importance(self.g, self.alive, self.out_first)
        self.chosen = independent_set(self.g, self.live_ids, self.score, DEFAULT_C, self.level)


def _levels(graph, metric):
    state = Contraction(graph, metric, CPU)
    levels = []
    while state.live >= K:
        if state.level in SNAPSHOTS:
            levels.append(Level(state))
        state.contract_level(DEFAULT_C)
    return levels, state


@pytest.fixture(scope="module", params=["generated", "ny"])
def contraction(request):
    if request.param == "ny":
        return _levels(request.getfixturevalue("ny"), "distance")
    return _levels(generate_road_network(100_000, seed=6), "travel_time")


def each_level(contraction, gpu):
    """(CPU level, the same arrays on the GPU: g, alive, live_ids, out_first, chosen)."""
    for lv in contraction[0]:
        on = gpu.to_device
        yield lv, (lv.g.on(gpu), on(lv.alive), on(lv.live_ids), on(lv.out_first), on(lv.chosen))


def same(cpu_array, gpu_array, what):
    assert np.array_equal(np.asarray(cpu_array), gpu_array.get()), what


def test_score(contraction, gpu):
    for lv, (g, alive, live_ids, out_first, _) in each_level(contraction, gpu):
        score = importance(g, alive, out_first)
        same(lv.score[lv.live_ids], score[live_ids], f"importance at level {lv.level}")
        assert g.level_counts(lv.chosen, out_first)[1] == lv.g.level_counts(lv.chosen, lv.out_first)[1]


def test_select(contraction, gpu):
    for lv, (g, _, live_ids, out_first, _) in each_level(contraction, gpu):
        chosen = independent_set(g, live_ids, gpu.to_device(lv.score), DEFAULT_C, lv.level)
        same(lv.chosen, chosen, f"U_l at level {lv.level}")
        assert g.level_counts(chosen, out_first)[0] == int(lv.chosen.sum())


def _shortcuts_equal(a: Shortcuts, b: Shortcuts, level: int) -> None:
    for f in fields(Shortcuts):
        if f.name == "candidates":
            assert a.candidates == b.candidates, level
        else:
            same(getattr(a, f.name), getattr(b, f.name), f"shortcut {f.name} at level {level}")


def test_shortcut(contraction, gpu):
    for lv, (g, _, _, out_first, chosen) in each_level(contraction, gpu):
        _shortcuts_equal(find_shortcuts(lv.g, lv.chosen, lv.out_first),
                         find_shortcuts(g, chosen, out_first), lv.level)


def test_witness(contraction, gpu):
    """Every broken path is a candidate (no 1- or 2-hop test first), so many are
    witnessed; the cheapest of each pair is asked, as in SHORTCUT."""
    witnessed = 0
    for lv, (g, _, _, out_first, chosen) in each_level(contraction, gpu):
        u, w, v, length, _, _ = broken_paths(lv.g, lv.chosen, lv.out_first)
        order, first = pair_order(lv.g, u, w, v, length)
        rows = (u[order], v[order], length[order], first)
        expected = witness.witnessed(lv.g, lv.chosen, lv.out_first, *rows)
        got = witness.witnessed(g, chosen, out_first, *(gpu.to_device(a) for a in rows))
        same(expected, got, f"witnessed at level {lv.level}")
        witnessed += int(expected.sum())
    assert witnessed > 0


def _on(sc: Shortcuts, backend) -> Shortcuts:
    return replace(sc, **{f.name: backend.to_device(getattr(sc, f.name))
                          for f in fields(Shortcuts) if f.name != "candidates"})


def test_update(contraction, gpu):
    for lv, (g, _, _, _, chosen) in each_level(contraction, gpu):
        sc = find_shortcuts(lv.g, lv.chosen, lv.out_first)
        known = int(lv.g.harc.max()) + 1        # a table with room for G_l's arc ids
        tables = []
        for backend, graph, contracted, shortcuts in ((CPU, lv.g, lv.chosen, sc),
                                                      (gpu, g, chosen, _on(sc, gpu))):
            ends = backend.xp.zeros(known, dtype=np.int64)
            table = ArcTable(backend, ends, ends)
            ids = table.add_shortcuts(graph, shortcuts)
            table.record_leaving(graph, contracted, lv.level)
            tables.append((table, ids))
        (cpu_table, cpu_ids), (gpu_table, gpu_ids) = tables
        same(cpu_ids, gpu_ids, "shortcut ids")
        same(cpu_table.leave, gpu_table.leave, f"leave at level {lv.level}")


def test_level_arcs(contraction, gpu):
    """UPDATE's final gathering: the same up/down lists from the same arc table."""
    state = contraction[1]
    node_level = state.node_level.copy()
    node_level[state.live_ids] = state.level
    table = state.table
    on_gpu = ArcTable(gpu, gpu.to_device(table.original_ends["tail"]),
                      gpu.to_device(table.original_ends["head"]))
    on_gpu.shortcuts = {name: [gpu.to_device(c) for c in chunks]
                        for name, chunks in table.shortcuts.items()}
    on_gpu.size, on_gpu.leave = table.size, gpu.to_device(table.leave)
    for a, b in zip(table.level_arcs(node_level, state.level),
                    on_gpu.level_arcs(gpu.to_device(node_level), state.level)):
        same(a, b, "level_arcs")


def test_extract(contraction, gpu):
    for lv, (g, _, _, out_first, chosen) in each_level(contraction, gpu):
        sc = find_shortcuts(lv.g, lv.chosen, lv.out_first)
        ids = np.arange(10**6, 10**6 + sc.tail.size, dtype=np.int64)
        expected = next_level_graph(lv.g, lv.chosen, sc, ids, lv.out_first)
        got = next_level_graph(g, chosen, _on(sc, gpu), gpu.to_device(ids), out_first)
        for name in ("tail", "head", "weight", "harc"):
            same(getattr(expected, name), getattr(got, name), f"{name} at level {lv.level}")


def test_apsp(contraction, gpu):
    """Equal distances; predecessors may differ between equally short core paths,
    so each GPU predecessor is checked to lie on a shortest path."""
    state = contraction[1]
    dist, pred = core_apsp(state.g, state.live_ids, CPU)
    gd, gp = core_apsp(state.g.on(gpu), gpu.to_device(state.live_ids), gpu)
    same(dist, gd, "core distances")
    gp = gp.get()
    k = dist.shape[0]
    position = np.full(state.g.n, -1)
    position[state.live_ids] = np.arange(k)
    arc = {(int(position[t]), int(position[h])): int(w)
           for t, h, w in zip(state.g.tail, state.g.head, state.g.weight)}
    i, j = np.nonzero((dist != INF) & ~np.eye(k, dtype=bool))
    p = gp[i, j]
    assert np.all(p >= 0)
    assert all(dist[a, c] + arc[(c, b)] == dist[a, b] for a, b, c in zip(i, j, p))
