"""Load times and the reference Dijkstra."""
from __future__ import annotations

import statistics
from pathlib import Path

from benchmarks.common import DATA, best_of, timed


def bench_load() -> tuple[list[str], list[list[str]]]:
    """Load times: DIMACS NY (both metrics + coordinates), its cache, Porto OSM, generated."""
    from engine.generate.network import generate_road_network
    from engine.io import load
    from engine.io.cache import save_cache

    rows = []
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if ny.exists():
        g, s = best_of(2, load, [ny])
        rows.append(["DIMACS NY .gr.gz x2 + .co.gz", f"{g.num_nodes:,}", f"{g.num_arcs:,}", f"{s:.2f} s", "≤ 3 s"])
        cache = Path("/tmp/routelab-bench-ny.rlg")
        save_cache(g, cache)
        h, s = best_of(3, load, [cache])
        rows.append(["NY from the native cache", f"{h.num_nodes:,}", f"{h.num_arcs:,}", f"{s:.3f} s", "≤ 0.5 s"])
        cache.unlink()
    porto = DATA / "osm" / "porto_portugal.osm.pbf"
    if porto.exists():
        g, s = best_of(1, load, [porto])
        rows.append(["Porto OSM .pbf", f"{g.num_nodes:,}", f"{g.num_arcs:,}", f"{s:.1f} s", "≤ 30 s"])
    g, s = best_of(2, generate_road_network, 100_000, seed=1)
    rows.append(["generated default (100 k)", f"{g.num_nodes:,}", f"{g.num_arcs:,}", f"{s:.2f} s", "≤ 2 s"])
    g, s = best_of(1, generate_road_network, 2_000_000, seed=1)
    rows.append(["generated 2 M", f"{g.num_nodes:,}", f"{g.num_arcs:,}", f"{s:.1f} s", "≤ 60 s"])
    return ["graph", "nodes", "arcs", "load time (best of runs)", "target"], rows


def bench_dijkstra() -> tuple[list[str], list[list[str]]]:
    """Reference one-to-all Dijkstra (scipy) on NY, median over 20 random sources."""
    import numpy as np

    from engine.io import load
    from engine.routing.reference import scipy_matrix, sssp

    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return ["graph", "note"], [["NY", "shared data absent"]]
    g = load([ny])
    rows = []
    rng = np.random.default_rng(7)
    sources = rng.integers(0, g.num_nodes, 20)
    for metric in g.metric_names:
        matrix = scipy_matrix(g, metric)     # built once, like the engine does
        sssp(g, 0, metric, matrix)           # warm-up
        times = [timed(sssp, g, int(s), metric, matrix)[1] for s in sources]
        rows.append([f"NY {metric}", f"{g.num_nodes:,}", "20",
                     f"{statistics.median(times) * 1000:.1f} ms",
                     f"{min(times) * 1000:.1f}–{max(times) * 1000:.1f} ms"])
    return ["graph", "nodes", "sources", "median one-to-all (tree + parent arcs)", "range"], rows


def bench_info() -> tuple[list[str], list[list[str]]]:
    """Wall time of `routelab info` on a small file (Rome99, 3,353 nodes), as a person
    runs it: a new process each time, median of 15, beside a bare interpreter's start."""
    import subprocess
    import sys
    import time

    rome = DATA / "dimacs" / "rome99.gr"
    if not rome.exists():
        return ["command", "note"], [["routelab info", "shared data absent"]]

    def wall(args: list[str]) -> float:
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    bare = wall([sys.executable, "-c", "pass"])
    numpy = wall([sys.executable, "-c", "import numpy"])
    script = Path(sys.executable).with_name("routelab")      # the installed entry point
    command = [str(script)] if script.exists() else [sys.executable, "-m", "app.main"]
    info = wall(command + ["info", str(rome)])
    return ["command", "median wall (15 runs)", "× a bare interpreter", "target"], [
        ["python -c pass (baseline)", f"{bare * 1000:.0f} ms", "1.0", ""],
        ["python -c 'import numpy'", f"{numpy * 1000:.0f} ms", f"{numpy / bare:.1f}", ""],
        ["routelab info rome99.gr", f"{info * 1000:.0f} ms", f"{info / bare:.1f}", "≤ 400 ms"]]


SECTIONS = {"load": ("Load times", bench_load),
            "info": ("`routelab info` start-up", bench_info),
            "dijkstra": ("Reference Dijkstra (scipy, CPU)", bench_dijkstra)}
