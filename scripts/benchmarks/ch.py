"""CU-CH contraction and PHAST queries."""
from __future__ import annotations

import statistics
import time

from benchmarks.common import BIG, DATA, timed


def bench_ch() -> tuple[list[str], list[list[str]]]:
    """CU-CH on NY: contraction and PHAST trees beside scipy Dijkstra, the CPU backend
    and RoutingKit's CH (ch-router), all in this process; then C and K sweeps."""
    from engine import backend as backends
    from engine.io import load

    backend = backends.select("auto")
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return ["graph", "what", "time", "notes"], [["NY", "missing", str(ny), ""]]
    g = load([ny])
    rows = ch_rows("NY distance", g, "distance", backend)
    rows += ch_sweep_rows(g, "distance", backend)
    return ["graph", "what", "time", "notes"], rows


def bench_ch_big() -> tuple[list[str], list[list[str]]]:
    """CU-CH on the generated 2 M-node network, the same rows as bench_ch, by travel
    time: its road classes give it a hierarchy. (By distance the generated grid has
    none: every street is as good as a motorway, and the overlay densifies.)"""
    from engine import backend as backends
    from engine.generate import generate_road_network

    g = generate_road_network(BIG, seed=1)
    rows = ch_rows(f"generated {g.num_nodes:,} (travel time)", g, "travel_time", backends.select("auto"))
    return ["graph", "what", "time", "notes"], rows


def ch_rows(label, g, metric, backend) -> list[list[str]]:
    import numpy as np

    from engine import phast
    from engine.backend import cpu_backend
    from engine.ch import contract
    from engine.reference import scipy_matrix, sssp

    rows = []
    sources = np.random.default_rng(5).integers(0, g.num_nodes, 50)
    contract(g, metric, backend=backend)                           # warm-up: kernels compiled
    h, wall, built = contract_runs(g, metric, backend, 5)
    build_ms = statistics.median(wall)
    s = h.summary()
    rows.append([label, f"contract ({backend.name})",
                 f"{build_ms:.0f} ms (median of 5; fastest {min(wall):.0f}); "
                 f"{statistics.median(built):.0f} ms until complete on the device",
                 f"{s['levels']} levels, {s['shortcuts']:,} shortcuts, growth {s['edge_growth']}; "
                 f"the rest copies it to host memory"])
    if backend.is_gpu:
        _, cpu_s = timed(contract, g, metric, backend=cpu_backend())
        rows.append([label, "contract (CPU backend, NumPy + Numba)", f"{cpu_s * 1000:.0f} ms",
                     f"{cpu_s * 1000 / build_ms:.0f}x the GPU"])
    query = phast.PhastQuery(h, backend)
    query.tree(int(sources[0]))                                      # warm-up
    trees = [query.tree(int(x)) for x in sources]
    q = statistics.median(t.compute_ms for t in trees)
    q_total = statistics.median(t.total_ms for t in trees)
    matrix = scipy_matrix(g, metric)
    scipy_ms = statistics.median(timed(sssp, g, int(x), metric, matrix)[1] * 1000 for x in sources[:10])
    rows.append([label, f"PHAST tree ({backend.name})", f"{q:.2f} ms ({q_total:.2f} with copy)",
                 f"{scipy_ms / q:.0f}x scipy Dijkstra ({scipy_ms:.0f} ms)"])
    batch = sources[:32]
    query.distances(batch)
    _, bs = timed(query.distances, batch)
    rows.append([label, f"PHAST batch of 32 ({backend.name})", f"{bs * 1000 / 32:.2f} ms per tree", "distances only"])
    try:
        from routingkit_ch import CHQuery, ContractionHierarchy
        w = g.metric(metric)
        ch, ch_s = timed(ContractionHierarchy.build, g.num_nodes, g.tail.astype(np.uint32),
                         g.head.astype(np.uint32), w.astype(np.uint32))
        query = CHQuery(ch)
        pairs = np.random.default_rng(6).integers(0, g.num_nodes, (1000, 2))
        t0 = time.perf_counter()
        for a, b in pairs:
            query.reset().add_source(int(a)).add_target(int(b)).run().get_distance()
        per_query = (time.perf_counter() - t0) / len(pairs) * 1e6
        rows.append([label, "RoutingKit CH (ch-router, CPU)", f"build {ch_s * 1000:.0f} ms",
                     f"{ch_s * 1000 / build_ms:.0f}x the GPU contraction; "
                     f"point-to-point query {per_query:.1f} µs (no one-to-all query)"])
    except ImportError:
        rows.append([label, "RoutingKit CH (ch-router)", "not installed", "pip install ch-router"])
    return rows


def ch_sweep_rows(g, metric, backend) -> list[list[str]]:
    from engine import phast

    rows = []
    for name, value in [("C", C) for C in (0.1, 0.2, 0.4, 0.5)] + [("K", K) for K in (257, 513, 2049, 4097)]:
        h, wall, built = contract_runs(g, metric, backend, 3, **{name: value})
        query = phast.PhastQuery(h, backend)
        q = statistics.median(query.tree(int(x)).compute_ms for x in range(0, g.num_nodes, g.num_nodes // 20))
        rows.append(["NY distance", f"{name} = {value}",
                     f"{statistics.median(wall):.0f} ms ({statistics.median(built):.0f} on the device; median of 3)",
                     f"{h.num_levels} levels, growth {h.edge_growth:.3f}, PHAST {q:.2f} ms"])
    return rows


def contract_runs(g, metric, backend, runs: int, **params):
    """(last hierarchy, wall ms per run, ms until complete on the device per run);
    one hierarchy alive at a time, as in the app."""
    from engine.ch import contract
    h, wall, built = None, [], []
    for _ in range(runs):
        h = None
        h, seconds = timed(contract, g, metric, backend=backend, **params)
        wall.append(seconds * 1000)
        built.append(h.params.get("built_ms", seconds * 1000))
    return h, wall, built


SECTIONS = {"ch": ("CU-CH contraction and PHAST queries (NY)", bench_ch),
            "ch_big": ("CU-CH contraction and PHAST queries (generated 2 M nodes)", bench_ch_big)}
