"""Continental test networks from files (issue #37, item 1): generate N nodes, write them
as .rlg, DIMACS text and .osm.pbf, and load each file back in a fresh process, so that
every peak RSS is that step's own.

    ROUTELAB_BENCH_CONTINENTAL=24000000 python scripts/bench.py --only continental_io

N defaults to 1 M; the files go to ROUTELAB_BENCH_DIR (default: a temporary folder,
removed afterwards; 24 M nodes take about 7 GB of disk). ROUTELAB_BENCH_FORMATS (say
``pbf``) names the formats to write and load, all three (rlg,dimacs,pbf) by default;
ROUTELAB_BENCH_SOURCE (a .rlg of the same network, say the continental section's)
is loaded instead of generating again. It runs where PySide6 and
shapely are absent; without osmium (the GPU host) the PBF rows say so.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

NODES = int(float(os.environ.get("ROUTELAB_BENCH_CONTINENTAL", 1_000_000)))
FORMATS = os.environ.get("ROUTELAB_BENCH_FORMATS", "rlg,dimacs,pbf").split(",")
HERE = Path(__file__).resolve()


def _peak_rss() -> int:
    """This process's own peak RSS in bytes: VmHWM (getrusage's ru_maxrss would carry
    the parent's peak across fork and exec)."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux: KiB


def probe_write(nodes: int, folder: str) -> dict:
    """In a fresh process: generate, then write each format; seconds, sizes, peak RSS."""
    from engine.generate.network import generate_road_network
    from engine.io.cache import save_cache
    from engine.io.dimacs_write import write_dimacs
    t0, c0 = time.perf_counter(), time.process_time()
    source = os.environ.get("ROUTELAB_BENCH_SOURCE")
    if source:
        from engine.io.cache import load_cache
        g = load_cache(source)
    else:
        g = generate_road_network(nodes, seed=1)
    out = {"nodes": g.num_nodes, "arcs": g.num_arcs, "generate_s": time.perf_counter() - t0,
           "generate_cpu_s": time.process_time() - c0,
           "generate_rss": _peak_rss(), "files": {}, "graph_bytes": _graph_bytes(g)}
    base = Path(folder)
    steps = [("rlg", lambda: [save_cache(g, base / "gen.rlg")]),
             ("dimacs", lambda: write_dimacs(g, base / "gen-d.net.gr"))]
    try:
        import osmium  # noqa: F401
        from engine.generate.osm_writer import write_osm_pbf
        if "pbf" in FORMATS:
            # a small file of the same kind first: its load fills Numba's on-disk cache, so
            # the timed load does not compile (as a second start of the program would not)
            write_osm_pbf(generate_road_network(2000, seed=2), base / "warm.osm.pbf")
        steps.append(("pbf", lambda: [write_osm_pbf(g, base / "gen.osm.pbf")]))
    except ImportError:
        out["files"]["pbf"] = None
    for name, write in steps:
        if name not in FORMATS:
            continue
        t, c = time.perf_counter(), time.process_time()
        paths = write()
        out["files"][name] = {"seconds": time.perf_counter() - t, "cpu_s": time.process_time() - c,
                              "bytes": sum(os.path.getsize(p) for p in paths),
                              "paths": [str(p) for p in paths]}
    out["write_rss"] = _peak_rss()
    return out


def _graph_bytes(g) -> int:
    """Bytes of every array of the graph (what a loader must at least hold)."""
    arrays = [g.first_out, g.head, g.node_id, g.lon, g.lat, g.geometry_first, g.geometry_lonlat,
              *g.metrics.values(), *g.arc_attrs.values()]
    if g.turn_restrictions is not None:
        arrays += [g.turn_restrictions.from_arc, g.turn_restrictions.to_arc]
    return sum(a.nbytes for a in arrays if a is not None)


def probe_load(path: str) -> dict:
    """In a fresh process: load one file (its siblings too) through engine.io.load."""
    t = time.perf_counter()
    from engine.io import load
    imported, cpu = time.perf_counter(), time.process_time()
    g = load([path])
    return {"seconds": time.perf_counter() - imported, "import_s": imported - t,
            "cpu_s": time.process_time() - cpu,
            "nodes": g.num_nodes, "arcs": g.num_arcs, "metrics": list(g.metrics),
            "restrictions": len(g.turn_restrictions or ()), "rss": _peak_rss()}


def _child(*args: str, timeout: float = 3600) -> dict:
    from benchmarks.common import child_json
    return child_json(HERE, *args, timeout=timeout)


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e9:.2f} GB" if nbytes >= 1e8 else f"{nbytes / 1e6:.1f} MB"


def bench_continental_io() -> tuple[list[str], list[list[str]]]:
    from engine.io.limits import memory_budget
    folder = os.environ.get("ROUTELAB_BENCH_DIR") or tempfile.mkdtemp(prefix="routelab-cio-")
    os.makedirs(folder, exist_ok=True)
    try:
        return _rows(folder, memory_budget())
    finally:
        if not os.environ.get("ROUTELAB_BENCH_DIR"):
            shutil.rmtree(folder, ignore_errors=True)


def _rows(folder: str, budget: int) -> tuple[list[str], list[list[str]]]:
    w = _child("write", str(NODES), folder)
    size = f"{w['nodes']:,} nodes, {w['arcs']:,} arcs"
    made = "load the source .rlg" if os.environ.get("ROUTELAB_BENCH_SOURCE") else "generate (in memory)"
    rows = [[made, size, f"{w['generate_s']:.1f} s (CPU {w['generate_cpu_s']:.1f} s)",
             "", _gb(w["generate_rss"]), ""]]
    names = {"rlg": ".rlg", "dimacs": "DIMACS -d/-t .gr + .co", "pbf": ".osm.pbf"}
    names = {k: v for k, v in names.items() if k in FORMATS}
    for key, label in names.items():
        f = w["files"][key]
        if f is None:
            rows.append([f"write {label}", size, "skipped: osmium is not installed here", "", "", ""])
            continue
        rows.append([f"write {label}", size, f"{f['seconds']:.1f} s (CPU {f['cpu_s']:.1f} s)",
                     _gb(f["bytes"]),
                     _gb(w["write_rss"]) + " (whole process)", ""])
    targets = {"rlg": "≤ 5 s", "dimacs": "≤ 90 s", "pbf": "≥ 25 MB/s"}
    for key, label in names.items():
        f = w["files"][key]
        if f is None:
            rows.append([f"load {label}", size, "skipped: osmium is not installed here", "", "", targets[key]])
            continue
        if key == "pbf":
            _child("load", str(Path(folder) / "warm.osm.pbf"))      # untimed: compilation
        r = _child("load", f["paths"][0])
        rate = f", {f['bytes'] / 1e6 / r['seconds']:.1f} MB/s" if key == "pbf" else ""
        rows.append([f"load {label}", f"{r['nodes']:,} nodes, {r['arcs']:,} arcs, "
                     f"{len(r['metrics'])} metrics, {r['restrictions']:,} banned turns",
                     f"{r['seconds']:.1f} s{rate} (CPU {r['cpu_s']:.1f} s)", _gb(f["bytes"]),
                     f"{_gb(r['rss'])} ({r['rss'] / w['graph_bytes']:.1f}x the generated "
                     f"graph's arrays, {_gb(w['graph_bytes'])})", targets[key]])
    rows.append(["memory budget (ROUTELAB_MEMORY_BUDGET or half the RAM)", "", "", "", _gb(budget), ""])
    return ["step", "graph", "time", "file size", "peak RSS", "target (24 M)"], rows


SECTIONS = {"continental_io": (f"Continental test networks from files ({NODES:,} generated "
                               "nodes): write and load .rlg, DIMACS, OSM PBF",
                               bench_continental_io)}

if __name__ == "__main__":
    if sys.argv[1] == "write":
        print(json.dumps(probe_write(int(sys.argv[2]), sys.argv[3])), flush=True)
    elif sys.argv[1] == "load":
        print(json.dumps(probe_load(sys.argv[2])), flush=True)
