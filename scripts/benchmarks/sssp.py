"""Shortest-path trees without preprocessing (engine/sssp)."""
from __future__ import annotations

import statistics

from benchmarks.common import BIG, DATA, timed


def bench_sssp() -> tuple[list[str], list[list[str]]]:
    """Direct SSSP trees: every variant on the current backend beside scipy Dijkstra.

    Median over 50 random sources after a warm-up run per variant (kernels compiled,
    tuning measured); scipy over the same sources, in the same process.
    """
    import numpy as np

    from engine.core import backend as backends
    from engine.generate.network import generate_road_network
    from engine.io import load
    from engine.routing.reference import scipy_matrix, sssp
    from engine.sssp import METHODS, TreeQuery

    backend = backends.select("auto")
    graphs = []
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if ny.exists():
        g = load([ny])
        graphs += [("NY distance", g, "distance"), ("NY travel_time", g, "travel_time")]
    big = generate_road_network(BIG, seed=1)
    graphs.append(("generated 2 M (distance)", big, "distance"))
    rows = []
    for label, g, metric in graphs:
        sources = np.random.default_rng(3).integers(0, g.num_nodes, 50)
        matrix = scipy_matrix(g, metric)
        scipy_sources = sources[:20] if g.num_nodes > 1_000_000 else sources
        scipy_ms = statistics.median(timed(sssp, g, int(s), metric, matrix)[1] * 1000 for s in scipy_sources)
        rows.append([label, "scipy Dijkstra (CPU)", f"{scipy_ms:.1f}", "", "1.0x", ""])
        variants = [(name, {}) for name in METHODS]
        variants += [("kstep", {"k": k}) for k in (1, 2, 3, 5, 6)]   # k = 4 is the default row
        variants += [("near_far", {"delta_factor": f}) for f in (4, 16, 32, 64)]
        query = TreeQuery(g, metric, backend)
        for name, options in variants:
            query.tree(int(sources[0]), name, **options)   # warm-up
            results = [query.tree(int(s), name, **options) for s in sources]
            compute = statistics.median(r.compute_ms for r in results)
            total = statistics.median(r.total_ms for r in results)
            label_name = " ".join([name] + [f"{k}={v:g}" for k, v in options.items()])
            rounds = statistics.median(r.stats.get("rounds", r.stats.get("iterations", 0)) for r in results)
            arcs_per_s = g.num_arcs / (compute / 1000)
            rows.append([label, f"{label_name} ({backend.name})", f"{compute:.2f}", f"{total:.2f}",
                         f"{scipy_ms / total:.1f}x", f"{rounds:.0f}", f"{arcs_per_s / 1e9:.2f}"])
    return ["graph", "method", "tree compute ms (median)", "incl. copy to host ms",
            "speed-up vs scipy (incl. copy)", "rounds / iterations (median)",
            "G arcs/s (m / compute)"], rows


def bench_near_far_grid() -> tuple[list[str], list[list[str]]]:
    """near-far grid shape and bucket width: median of 20 sources, NY and generated 2 M."""
    import numpy as np

    from engine.core import backend as backends
    from engine.generate.network import generate_road_network
    from engine.io import load
    from engine.sssp import TreeQuery

    backend = backends.select("gpu")
    graphs = [("generated 2 M", generate_road_network(2_000_000, seed=1))]
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if ny.exists():
        graphs.insert(0, ("NY", load([ny])))
    rows = []
    for label, g in graphs:
        sources = np.random.default_rng(4).integers(0, g.num_nodes, 20)
        query = TreeQuery(g, "distance", backend)
        for blocks in (16, 33, 66, 132):
            for threads in (256, 1024):
                for factor in (16, 32, 64):
                    options = dict(blocks=blocks, threads=threads, delta_factor=factor)
                    query.tree(int(sources[0]), "near_far", **options)
                    ms = statistics.median(query.tree(int(s), "near_far", **options).compute_ms
                                           for s in sources)
                    rows.append([label, str(blocks), str(threads), str(factor), f"{ms:.2f}"])
    return ["graph", "blocks", "threads", "delta factor", "median ms"], rows


SECTIONS = {"sssp": ("Shortest-path trees without preprocessing (engine/sssp)", bench_sssp),
            "near_far_grid": ("near-far tuning: grid shape and bucket width (GPU)", bench_near_far_grid)}
