"""The turn-aware model (issue #34): per graph, the expanded graph, the turn-aware
contraction (GPU and its CPU twin), its file, the turn-aware CH query and bidirectional
Dijkstra, each beside the node-based figure measured in the same run on the same pairs.
NY has no restrictions: its turn-aware model is forced with every turn free (the same
distances, checked), to measure the model's cost on the paper's graph."""
from __future__ import annotations

import os
import statistics
import tempfile
import time

import numpy as np

from benchmarks.common import BIG, DATA, ROOT
from benchmarks.route import stats, timed_pass

HEADER = ["graph", "what", "figure", "node-based, same run", "notes"]
CH_PAIRS, DIJKSTRA_PAIRS = 2_000, 200


def bench_turns() -> tuple[list[str], list[list[str]]]:
    rows = []
    for name, graph in _graphs():
        try:
            rows += graph_rows(name, graph)
        except MemoryError as e:               # CuPy's OutOfMemoryError is one
            rows.append([name, "turn-aware contraction", "out of memory", "",
                         f"{type(e).__name__}: {str(e)[:160]}"])
        _free_device_memory()
    return HEADER, rows


def _free_device_memory() -> None:
    from engine.core import backend as backends
    try:
        backends.gpu_backend().xp.get_default_memory_pool().free_all_blocks()
    except backends.BackendError:
        pass


def _graphs():
    from engine.io import load
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if ny.exists():
        yield "NY distance", load([ny, DATA / "dimacs" / "USA-road-d.NY.co.gz"])
    for porto in (DATA / "osm" / "porto_portugal.osm.pbf", DATA / "osm" / "porto_portugal.rlg",
                  ROOT / ".data" / "osm" / "porto_portugal.rlg"):
        if porto.exists():
            yield "Porto distance", load([porto])
            break
    if os.environ.get("ROUTELAB_BENCH_TURNS_BIG") == "1":
        from engine.generate.network import generate_road_network
        yield f"generated {BIG:,} distance", generate_road_network(BIG, seed=1)


def graph_rows(name: str, g) -> list[list[str]]:
    from engine.core import backend as backends
    from engine.workspace import Workspace
    ws = Workspace(g, backends.cpu_backend())
    t0 = time.perf_counter()
    model = ws.turn_model(("distance",), force=True)
    build_s = time.perf_counter() - t0
    x = model.expanded
    rows = [[name, "turn model: expanded graph", f"{x.num_nodes:,} nodes, {x.num_arcs:,} edges",
             f"{g.num_nodes:,} nodes, {g.num_arcs:,} arcs",
             f"{model.turns.num_turns:,} turns, {model.restrictions:,} banned; built in {build_s:.2f} s"]]
    h, contract_rows = _contractions(name, g, model)
    rows += contract_rows
    big = g.num_nodes > 1_000_000                 # its file is GBs: saved and loaded by 'ch'
    rows += [] if big else _file_rows(name, g, h)
    rows += _query_rows(name, g, ws, model, h, dijkstra_pairs=20 if big else DIJKSTRA_PAIRS)
    return rows


def _contractions(name: str, g, model):
    """The turn-aware contraction on each backend (after a small graph's, which
    compiles), beside the node-based contraction of the road graph on the same backend."""
    from engine.ch import contract
    from engine.core import backend as backends
    from engine.model.hierarchy import bytes_per_arc, contract_turn_aware
    rows, kept = [], None
    chosen = [backends.cpu_backend()]
    try:
        chosen.insert(0, backends.gpu_backend())
    except backends.BackendError:
        pass
    for b in chosen:
        if not b.is_gpu and g.num_nodes > 1_000_000:
            continue                                    # the CPU twin takes minutes there
        _warm_up(b)
        t0 = time.perf_counter()
        h = contract_turn_aware(model, "distance", backend=b)
        turn_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        plain = contract(g, "distance", backend=b)
        plain_s = time.perf_counter() - t0
        rows.append([name, f"turn-aware contraction ({b.describe()})", f"{turn_s:.2f} s",
                     f"{plain_s:.2f} s", f"{h.num_levels} levels, core {h.core_nodes.size:,}, "
                     f"{h.num_shortcuts:,} shortcuts, {bytes_per_arc(h, g.num_arcs):.0f} B per road "
                     f"arc (node-based: {bytes_per_arc(plain, g.num_arcs):.0f}); after a warm-up"])
        kept = kept or h
    return kept, rows


def _warm_up(backend) -> None:
    """Compile every step on a small network first (kernels, Numba)."""
    from engine.generate.network import generate_road_network
    from engine.model.hierarchy import contract_turn_aware
    from engine.workspace import Workspace
    small = Workspace(generate_road_network(2000, seed=1), backend)
    contract_turn_aware(small.turn_model(("distance",), force=True), "distance", backend=backend)


def _file_rows(name: str, g, h) -> list[list[str]]:
    from engine.ch import Hierarchy
    with tempfile.TemporaryDirectory() as folder:
        path = h.save(f"{folder}/t.rlh")
        size = os.path.getsize(path)
        Hierarchy.load(path)
        loads = []
        for _ in range(3):
            t0 = time.perf_counter()
            Hierarchy.load(path)
            loads.append(time.perf_counter() - t0)
    return [[name, "turn-aware .rlh: load (validated)", f"{statistics.median(loads):.2f} s", "",
             f"{size / 1e6:.1f} MB, {size / g.num_arcs:.0f} B per road arc; median of 3"]]


def _query_rows(name: str, g, ws, model, h, dijkstra_pairs: int) -> list[list[str]]:
    from engine.ch import contract
    from engine.ch.query import ChQuery
    from engine.model.router import turn_aware_router
    from engine.routing.bidirectional import BidirectionalDijkstra
    rng = np.random.default_rng(31)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, g.num_nodes, (CH_PAIRS, 2))]
    ws.set_hierarchy(h)
    turn_ch = ws.router("distance")
    t0 = time.perf_counter()
    turn_aware_router(model, "distance", h)
    init_ms = (time.perf_counter() - t0) * 1000
    node_ch = ChQuery(contract(g, "distance"))
    ours, dist = timed_pass(pairs, lambda s, t: _distance(turn_ch, s, t))
    theirs, _ = timed_pass(pairs, lambda s, t: _distance(node_ch, s, t))
    dijkstra = turn_aware_router(model, "distance")
    plain = BidirectionalDijkstra(g, "distance")
    some = pairs[:dijkstra_pairs]
    d_ours, d_dist = timed_pass(some, lambda s, t: _distance(dijkstra, s, t))
    d_theirs, _ = timed_pass(some, lambda s, t: _distance(plain, s, t))
    assert d_dist == dist[:dijkstra_pairs], f"{name}: turn-aware CH and Dijkstra disagree"
    med, p99 = stats(ours)
    nmed, _ = stats(theirs)
    dmed, dp99 = stats(d_ours / 1000)
    pmed, _ = stats(d_theirs / 1000)
    return [[name, "turn-aware CH query: route with path", f"{med:.1f} µs (p99 {p99:.0f})",
             f"{nmed:.1f} µs", f"{CH_PAIRS:,} random pairs, {med / nmed:.1f}x node-based; "
             f"init {init_ms:.0f} ms; target ≤ 100 µs on NY"],
            [name, "turn-aware bidirectional Dijkstra", f"{dmed:.1f} ms (p99 {dp99:.0f})",
             f"{pmed:.1f} ms", f"{dijkstra_pairs} of the pairs, equal to the CH's; {dmed / pmed:.1f}x "
             "node-based; target ≤ 40 ms on NY"]]


def _distance(router, s: int, t: int) -> int:
    from engine.core.paths import Unreachable
    try:
        return router.route(s, t).distance
    except Unreachable:
        return -1


SECTIONS = {"turns": ("Turn-aware routing: the expanded graph, its contraction and queries", bench_turns)}
