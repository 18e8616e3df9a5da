"""The OSM loader at scale (issue #37, item 1): MB of PBF per second and peak RSS of the
fast reader (engine.io.osm_pbf) beside libosmium's reader (engine.io.osm._read), each
load in a fresh process, on Porto, Heidelberg and a generated network written by
``routelab generate`` (engine.generate.osm_writer).

    ROUTELAB_BENCH_OSM_NODES=4000000 python scripts/bench.py --only osm_scale
    ROUTELAB_BENCH_OSM_FILE=/path/big.osm.pbf python scripts/bench.py --only osm_scale

The generated network has ROUTELAB_BENCH_OSM_NODES nodes (default 1 M, about 16 MB of
PBF); ROUTELAB_BENCH_OSM_FILE names an existing file instead. ROUTELAB_BENCH_OSM_SLOW=0
skips libosmium's reader on the generated file (about 20 s of CPU per million nodes).
"Graph arrays" is the bytes of every array of the loaded RoadGraph; the target is a
peak RSS at most 3 times that.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

NODES = int(float(os.environ.get("ROUTELAB_BENCH_OSM_NODES", 1_000_000)))
HERE = Path(__file__).resolve()


def _peak_rss() -> int:
    """This process's own peak RSS in bytes (VmHWM: ru_maxrss would carry the parent's)."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def graph_bytes(g) -> int:
    """Bytes of every array the RoadGraph holds."""
    arrays = [g.first_out, g.head, g.node_id, g.lon, g.lat, g.geometry_first, g.geometry_lonlat,
              *g.metrics.values(), *g.arc_attrs.values()]
    if g.turn_restrictions is not None:
        arrays += [g.turn_restrictions.from_arc, g.turn_restrictions.to_arc]
    return sum(a.nbytes for a in arrays if a is not None)


def probe(path: str, reader: str) -> dict:
    """In a fresh process: one load through the named reader (after a warm-up load of a
    tiny file, so that Numba's cached functions are loaded, not timed)."""
    from engine.io import osm
    data = Path(os.environ.get("ROUTELAB_DATA", HERE.parents[3] / "shared" / "data"))
    warm = data / "osm" / "monaco.osm.pbf"
    if reader == "fast" and warm.exists():
        osm._load_report(warm, fast=True)
    rss0 = _peak_rss()
    t, cpu = time.perf_counter(), time.process_time()
    g, _ = osm._load_report(Path(path), fast=reader == "fast")
    return {"seconds": time.perf_counter() - t, "cpu_s": time.process_time() - cpu,
            "nodes": g.num_nodes, "arcs": g.num_arcs, "rss": _peak_rss(), "rss_before": rss0,
            "graph_bytes": graph_bytes(g)}


def _child(*args: str, timeout: float = 3600) -> dict:
    from benchmarks.common import child_json
    return child_json(HERE, *args, timeout=timeout)


def _files(folder: str) -> list[tuple[str, Path, bool]]:
    """(label, path, run libosmium's reader too) of every file measured."""
    from benchmarks.common import DATA
    out = [(n, DATA / "osm" / f, True) for n, f in
           (("Porto", "porto_portugal.osm.pbf"), ("Heidelberg", "heidelberg.ors-test.osm.pbf"))
           if (DATA / "osm" / f).exists()]
    slow = os.environ.get("ROUTELAB_BENCH_OSM_SLOW", "1") != "0"
    named = os.environ.get("ROUTELAB_BENCH_OSM_FILE")
    if named:
        return out + [(Path(named).name, Path(named), slow)]
    from engine.generate.network import generate_road_network
    from engine.generate.osm_writer import write_osm_pbf
    path = Path(folder) / f"generated-{NODES}.osm.pbf"
    write_osm_pbf(generate_road_network(NODES, seed=1), path)
    return out + [(f"generated, {NODES:,} nodes", path, slow)]


def bench_osm_scale() -> tuple[list[str], list[list[str]]]:
    folder = tempfile.mkdtemp(prefix="routelab-osm-")
    try:
        rows = []
        for label, path, slow in _files(folder):
            mb = path.stat().st_size / 1e6
            for reader in (("libosmium", "fast") if slow else ("fast",)):
                r = _child("load", str(path), reader)
                rows.append([label, f"{mb:.1f} MB", reader, f"{r['nodes']:,} / {r['arcs']:,}",
                             f"{r['seconds']:.2f} s (CPU {r['cpu_s']:.2f} s)",
                             f"{mb / r['seconds']:.1f}",
                             f"{r['rss'] / 1e6:,.0f} MB (+{(r['rss'] - r['rss_before']) / 1e6:,.0f})",
                             f"{r['graph_bytes'] / 1e6:,.0f} MB",
                             f"{r['rss'] / r['graph_bytes']:.1f}x"])
        return ["file", "PBF", "reader", "nodes / arcs", "load", "MB/s",
                "peak RSS (+ over the process before loading)",
                "graph arrays", "RSS / arrays (target ≤ 3x)"], rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


SECTIONS = {"osm_scale": ("OSM PBF loading at scale: the fast reader and libosmium's, MB/s "
                          f"and peak RSS ({os.cpu_count()} cores)", bench_osm_scale)}

if __name__ == "__main__":
    if sys.argv[1] == "load":
        print(json.dumps(probe(sys.argv[2], sys.argv[3])), flush=True)
