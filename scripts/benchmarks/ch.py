"""CU-CH contraction and PHAST queries, and where their time goes (the profiles).

    python scripts/bench.py --only ch,ch_big              # the figures
    python scripts/bench.py --only ch_profile,phast_profile   # where the time goes
    # device time per kernel, under Nsight Compute (see bench_ch_kernels):
    ncu --metrics gpu__time_duration.sum --csv --log-file K.csv \
        python scripts/bench.py --only ch_kernels
    ROUTELAB_NCU_CSV=K.csv python scripts/bench.py --only ch_kernels
"""
from __future__ import annotations

import os
import statistics
import time

from benchmarks.common import BIG, DATA, timed

NY = DATA / "dimacs" / "USA-road-d.NY.gr.gz"


def bench_ch() -> tuple[list[str], list[list[str]]]:
    """CU-CH on NY: contraction and PHAST trees beside scipy Dijkstra, the CPU backend
    and RoutingKit's CH (ch-router), all in this process; then C and K sweeps."""
    from engine.core import backend as backends
    from engine.io import load

    backend = backends.select("auto")
    if not NY.exists():
        return ["graph", "what", "time", "notes"], [["NY", "missing", str(NY), ""]]
    g = load([NY])
    rows = ch_rows("NY distance", g, "distance", backend)
    rows += ch_sweep_rows(g, "distance", backend)
    return ["graph", "what", "time", "notes"], rows


def bench_ch_big() -> tuple[list[str], list[list[str]]]:
    """CU-CH on the generated 2 M-node network, the same rows as bench_ch, by travel
    time: its road classes give it a hierarchy. (By distance the generated grid has
    none: every street is as good as a motorway, and the overlay densifies.)"""
    from engine.core import backend as backends
    from engine.generate.network import generate_road_network

    g = generate_road_network(BIG, seed=1)
    rows = ch_rows(f"generated {g.num_nodes:,} (travel time)", g, "travel_time", backends.select("auto"))
    return ["graph", "what", "time", "notes"], rows


def ch_rows(label, g, metric, backend) -> list[list[str]]:
    import numpy as np

    from engine.ch import phast
    from engine.core.backend import cpu_backend
    from engine.ch import contract
    from engine.routing.reference import scipy_matrix, sssp

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
    from engine.ch import phast

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


def step_sums(h) -> dict:
    """Device ms per contraction step (score, select, ...) summed over the levels."""
    steps = {}
    for record in h.iterations:
        for step, ms in record["ms"].items():
            steps[step] = steps.get(step, 0.0) + ms
    return steps


def _sums_text(sums: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in sums.items())


PROFILE_HEADER = ["run", "wall ms", "levels", "core APSP", "arc lists", "copy to host",
                  "device ms of the level steps"]


def bench_ch_profile() -> tuple[list[str], list[list[str]]]:
    """Where a contraction's wall time goes (NY by distance, the auto backend): six
    runs after a warm-up, alternately with Python's garbage collector on and off,
    split into the levels, the core APSP, the upward/downward arc lists and the
    copy to host memory, with the device time of the level steps (CUDA events on
    the GPU) beside them; then the step sums of the last run and the host functions
    that cost most in one more run (cProfile: launch overhead and waits)."""
    import gc

    from engine.core import backend as backends
    from engine.ch import contract
    from engine.io import load

    if not NY.exists():
        return PROFILE_HEADER, [["NY missing", str(NY), "", "", "", "", ""]]
    backend, g = backends.select("auto"), load([NY])
    contract(g, "distance", backend=backend)                      # warm-up: kernels compiled
    rows, h = [], None
    for run in range(6):
        collect = run % 2 == 0
        gc.collect()
        (gc.enable if collect else gc.disable)()
        h = None                                                 # one hierarchy alive at a time
        try:
            h, seconds = timed(contract, g, "distance", backend=backend)
        finally:
            gc.enable()
        p = h.params
        rows.append([f"{run} ({backend.name}, gc {'on' if collect else 'off'})",
                     f"{seconds * 1000:.1f}", f"{p['levels_ms']:.1f}", f"{p['apsp_ms']:.1f}",
                     f"{p['built_ms'] - p['levels_ms'] - p['apsp_ms']:.1f}",
                     f"{p['wall_ms'] - p['built_ms']:.1f}", f"{sum(step_sums(h).values()):.1f}"])
    rows.append(["device ms by step (last run)", "", "", "", "", "", _sums_text(step_sums(h))])
    return PROFILE_HEADER, rows + _host_profile_rows(lambda: contract(g, "distance", backend=backend))


def _host_profile_rows(run, top: int = 8) -> list[list[str]]:
    """The ``top`` functions by own time in one ``run()`` (cProfile), as table rows."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    run()
    profile.disable()
    stats = pstats.Stats(profile).stats          # (file, line, name) -> (cc, calls, own, cumulative, _)
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    return [[f"host: {os.path.basename(file)}:{line} {name}", f"{own * 1000:.1f} own",
             f"{calls:,} calls", f"{cumulative * 1000:.1f} cumulative", "", "", ""]
            for (file, line, name), (_, calls, own, cumulative, _) in ranked]


def bench_phast_profile() -> tuple[list[str], list[list[str]]]:
    """Where a PHAST query's time goes (NY by distance, the auto backend): the tree
    (compute, and with the copy to host), then the same launches one at a time
    between events: the upward search, the core and the downward sweep (medians
    over 20 sources), and distances only for a batch of one (host copy included)."""
    import numpy as np

    from engine.core import backend as backends
    from engine.ch import phast
    from engine.ch import contract
    from engine.io import load

    header = ["graph", "what", "ms (median of 20 sources)", "notes"]
    if not NY.exists():
        return header, [["NY", "missing", str(NY), ""]]
    backend, g = backends.select("auto"), load([NY])
    contract(g, "distance", backend=backend)                      # warm-up (compiles kernels)
    h = contract(g, "distance", backend=backend)
    label = f"NY distance ({backend.name})"
    rows = [[label, "contraction", f"{h.params['wall_ms']:.1f}",
             f"{h.num_levels} levels, growth {h.edge_growth:.3f}; device ms by step: "
             f"{_sums_text(step_sums(h))}, apsp {h.params['apsp_ms']:.1f}"]]
    sources = [int(s) for s in np.random.default_rng(7).integers(0, g.num_nodes, 20)]
    query = phast.PhastQuery(h, backend)
    query.tree(sources[0])                                        # warm-up (captures the launches)
    trees = [query.tree(s) for s in sources]
    med = statistics.median
    rows.append([label, "tree", f"{med(t.compute_ms for t in trees):.3f}",
                 f"{med(t.total_ms for t in trees):.3f} with the copy to host"])
    levels = [query.tree(s, per_level=True).level_ms for s in sources]
    for part in ("up", "core", "down"):
        parts = [sum(x[part]) if part != "core" else x.get("core", 0.0) for x in levels]
        count = len(levels[0][part]) if part != "core" else 1
        rows.append([label, f"{part} (one launch at a time)", f"{med(parts):.3f}",
                     f"{count} launch{'es' if count > 1 else ''}"])
    query.distances(sources[:1])
    _, seconds = timed(lambda: [query.distances([s]) for s in sources])
    rows.append([label, "distances only, batch of 1", f"{seconds * 1000 / len(sources):.3f}",
                 "mean, host copy included"])
    return header, rows


def bench_ch_kernels() -> tuple[list[str], list[list[str]]]:
    """Device time per kernel of one NY contraction, from Nsight Compute, to see which
    device work dominates (the host side: ch_profile). Run the section under ncu,
    which profiles this one contraction:

        ncu --metrics gpu__time_duration.sum --csv --log-file K.csv \
            python scripts/bench.py --only ch_kernels

    then ``ROUTELAB_NCU_CSV=K.csv python scripts/bench.py --only ch_kernels`` sums
    the durations by kernel into the table (the 30 largest)."""
    header = ["kernel", "calls", "ms"]
    csv_path = os.environ.get("ROUTELAB_NCU_CSV")
    if csv_path:
        return header, _ncu_rows(csv_path)
    from engine.core import backend as backends
    from engine.ch import contract
    from engine.io import load
    if not NY.exists():
        return header, [["NY missing", "", str(NY)]]
    try:
        backend = backends.select("gpu")
    except backends.BackendError as e:
        return header, [[f"needs a GPU: {e}", "", ""]]
    contract(load([NY]), "distance", backend=backend)
    return header, [["(one contraction ran; set ROUTELAB_NCU_CSV to ncu's CSV to sum it)", "", ""]]


def _ncu_rows(path: str) -> list[list[str]]:
    import csv
    from collections import defaultdict

    total, calls = defaultdict(float), defaultdict(int)
    with open(path) as f:
        lines = [line for line in f if line.startswith('"')]
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row["Kernel Name"][:70]
        total[name] += float(row["Metric Value"].replace(",", "")) * scale.get(row["Metric Unit"], 1e-6)
        calls[name] += 1
    rows = [[name, str(calls[name]), f"{ms:.3f}"]
            for name, ms in sorted(total.items(), key=lambda kv: -kv[1])[:30]]
    return rows + [["all", str(sum(calls.values())), f"{sum(total.values()):.3f}"]]


def bench_phast_scale() -> tuple[list[str], list[list[str]]]:
    """PHAST at scale (issue #37): a tree kept on the device and read in parts, on the
    generated network of ROUTELAB_PHAST_NODES nodes (default 2 M), by travel time:
    compute; the whole tree on the host as before (pageable copies, conversions on the
    host) and now (converted on the device, pinned); the window's colour bins (a byte
    per node); one distance; one path. Medians over 10 sources, warm; one tree is
    checked against SciPy's Dijkstra."""
    import numpy as np

    from engine.core import backend as backends
    from engine.ch import contract, phast
    from engine.generate.network import generate_road_network
    from engine.core.units import unit_of
    from engine.routing.reference import sssp

    n = int(os.environ.get("ROUTELAB_PHAST_NODES", BIG))
    backend = backends.select("auto")
    header = ["graph", "what", "ms (median of 10 sources)", "notes"]
    g, gen_s = timed(generate_road_network, n, seed=1)
    h, ch_s = timed(contract, g, "travel_time", backend=backend)
    label = f"generated {g.num_nodes:,} ({backend.name})"
    query = phast.PhastQuery(h, backend)
    factor = unit_of(g.metric_units, "travel_time").axis()[0]
    sources = [int(s) for s in np.random.default_rng(11).integers(0, g.num_nodes, 10)]
    rows = {k: [] for k in ("compute", "distances", "parents", "before", "now", "bins", "window",
                            "answer", "distance", "path")}
    arcs = []
    for s in [sources[0]] + sources:                  # the first is a warm-up
        t0 = time.perf_counter()
        kept = query.device_tree(s)
        colours = kept.bins(factor)
        window_ms = (time.perf_counter() - t0) * 1000
        _, before = timed(_copy_as_before, kept, g)
        _, now = timed(kept.to_host)
        _, bins_s = timed(kept.bins, factor)
        t0 = time.perf_counter()
        again = query.device_tree(s)
        again.bins(factor), again.to_host()
        answer_ms = (time.perf_counter() - t0) * 1000
        del again
        target = int(np.flatnonzero(colours.node_bin == colours.count - 1)[0]) if \
            colours.count else s                       # a far node: a long path
        _, dist_s = timed(kept.distance, target)
        path, path_s = timed(kept.path, target)
        arcs.append(path.num_arcs)
        for k, v in (("compute", kept.compute_ms), ("distances", kept.step_ms["distances"]),
                     ("parents", kept.step_ms["parents"]), ("before", before * 1e3), ("now", now * 1e3),
                     ("bins", bins_s * 1e3), ("window", window_ms), ("answer", answer_ms),
                     ("distance", dist_s * 1e3),
                     ("path", path_s * 1e3)):
            rows[k].append(v)
    want = sssp(g, sources[0], "travel_time").distance
    wrong = int(np.count_nonzero(query.device_tree(sources[0]).to_host().distance != want))
    med = statistics.median
    notes = {"compute": f"{h.num_levels} levels; generate {gen_s:.1f} s, contract {ch_s:.1f} s; "
                        f"{wrong} wrong nodes vs SciPy",
             "distances": "up search, core, downward sweep, and the copy that keeps the tree",
             "parents": "the least tight original arc per node (engine/sssp/parents.py)",
             "before": "16 B/node: pageable uint64 + int32 copies, -1 and parents made on the host",
             "now": "16 B/node: int64 view, parents on the device, pinned host buffers",
             "bins": "1 B/node: bodies (sort) + edges + node bins on the device, pinned copy",
             "window": "compute + bins: the window's colouring on the host (wall)",
             "answer": "compute + bins + whole tree: the tree job's answer to the window today "
                       "(hover and paths read the host tree)",
             "distance": "8 bytes copied", "path": f"walked on the device; median {med(arcs):.0f} arcs"}
    names = {"compute": "tree compute", "distances": "  distances", "parents": "  parents",
             "before": "whole tree to host, before",
             "now": "whole tree to host, now", "bins": "colour bins to host",
             "window": "window's result on the host", "answer": "tree answer with the whole tree",
             "distance": "one distance",
             "path": "one path (far node)"}
    return header, [[label, names[k], f"{med(v[1:]):.3f}", notes[k]] for k, v in rows.items()]


def _copy_as_before(kept, g):
    """The whole tree to the host as PhastQuery.tree did before the tree stayed on the
    device: pageable copies of the raw arrays, then -1 and the parents on the host."""
    import numpy as np
    d = kept.backend.to_host(kept.dist.view(np.uint64))
    parent_arc = kept.backend.to_host(kept.parent_arc)
    distance = d.astype(np.int64)
    distance[d == np.iinfo(np.uint64).max] = -1
    parent = np.full(g.num_nodes, -1, dtype=np.int32)
    has = parent_arc >= 0
    parent[has] = g.tail[parent_arc[has]]
    return distance, parent, parent_arc


SECTIONS = {"ch": ("CU-CH contraction and PHAST queries (NY)", bench_ch),
            "ch_big": ("CU-CH contraction and PHAST queries (generated 2 M nodes)", bench_ch_big),
            "ch_profile": ("Where a CU-CH contraction's time goes (NY)", bench_ch_profile),
            "phast_profile": ("Where a PHAST query's time goes (NY)", bench_phast_profile),
            "phast_scale": ("PHAST at scale: a tree kept on the device, read in parts "
                            "(generated, ROUTELAB_PHAST_NODES)", bench_phast_scale),
            "ch_kernels": ("CU-CH device time per kernel (NY, Nsight Compute)", bench_ch_kernels)}
