#!/usr/bin/env python3
"""RouteLab benchmarks: every speed figure the project claims comes from here.

    python scripts/bench.py                      # all sections, print the tables
    python scripts/bench.py --only load --write  # one section, also into docs/benchmarks.md

Each section prints a Markdown table; ``--write`` replaces that section in
docs/benchmarks.md (between ``<!-- bench:NAME -->`` markers) with the table, the
command, the machine and the date, so figures from different machines coexist.
Targets are listed beside each figure; they are goals, not test assertions.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("ROUTELAB_DATA", ROOT.parent / "shared" / "data"))
DOC = ROOT / "docs" / "benchmarks.md"
# The large generated graph of the GPU sections; smaller only to smoke-test this script.
BIG = int(os.environ.get("ROUTELAB_BENCH_BIG", 2_000_000))


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t0


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    try:
        from engine.backend import gpu_backend
        text += f", GPU {gpu_backend().describe()}"
    except Exception:
        pass
    return text


# ---------------------------------------------------------------- sections
def bench_load() -> tuple[list[str], list[list[str]]]:
    """Load times: DIMACS NY (both metrics + coordinates), its cache, Porto OSM, generated."""
    from engine.generate import generate_road_network
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
    from engine.reference import scipy_matrix, sssp

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


def bench_sssp() -> tuple[list[str], list[list[str]]]:
    """Direct SSSP trees: every variant on the current backend beside scipy Dijkstra.

    Median over 50 random sources after a warm-up run per variant (kernels compiled,
    tuning measured); scipy over the same sources, in the same process.
    """
    import numpy as np

    from engine import backend as backends
    from engine.generate import generate_road_network
    from engine.io import load
    from engine.reference import scipy_matrix, sssp
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

    from engine import backend as backends
    from engine.generate import generate_road_network
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


def best_of(runs: int, fn, *args, **kwargs):
    best = None
    for _ in range(runs):
        result, seconds = timed(fn, *args, **kwargs)
        best = seconds if best is None else min(best, seconds)
    return result, best


SECTIONS = {"load": bench_load, "dijkstra": bench_dijkstra, "sssp": bench_sssp,
            "near_far_grid": bench_near_far_grid, "ch": bench_ch, "ch_big": bench_ch_big}
TITLES = {"load": "Load times", "dijkstra": "Reference Dijkstra (scipy, CPU)",
          "sssp": "Shortest-path trees without preprocessing (engine/sssp)",
          "near_far_grid": "near-far tuning: grid shape and bucket width (GPU)",
          "ch": "CU-CH contraction and PHAST queries (NY)",
          "ch_big": "CU-CH contraction and PHAST queries (generated 2 M nodes)"}


# ----------------------------------------------------------------- output
def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def write_section(doc: Path, name: str, body: str) -> None:
    doc.parent.mkdir(exist_ok=True)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\nEvery figure here was produced by `scripts/bench.py`; each section says how, where and when.\n"
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    parser.add_argument("--write", action="store_true", help="also write the sections into docs/benchmarks.md")
    parser.add_argument("--doc", type=Path, default=DOC, help="the Markdown file --write updates")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    command = "python scripts/bench.py --only " + ",".join(names) + (" --write" if args.write else "")
    for name in names:
        header, rows = SECTIONS[name]()
        body = (f"## {TITLES[name]}\n\n{table(header, rows)}\n\n"
                f"Command: `{command}` · machine: {machine()} · "
                f"date: {dt.date.today().isoformat()}\n")
        print(body)
        if args.write:
            write_section(args.doc, name, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
