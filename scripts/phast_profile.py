"""Where a PHAST query's time goes on one graph: contraction, then the median of
per-level sweep times, the distances-only time and the whole tree.

    python scripts/phast_profile.py GRAPH_FILE... [--backend gpu] [--sources 20]
    python scripts/phast_profile.py --generated 2000000 [--backend gpu] [--metric travel_time]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from engine import backend as backends  # noqa: E402
from engine import phast  # noqa: E402
from engine.ch import contract  # noqa: E402
from engine.io import load  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--generated", type=int, help="a generated graph of this many nodes instead")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--metric", help="default: the graph's first metric")
    ap.add_argument("--sources", type=int, default=20)
    args = ap.parse_args()
    backend = backends.select(args.backend)
    if args.generated:
        from engine.generate import generate_road_network
        g = generate_road_network(args.generated, seed=1)
    else:
        g = load(args.files)
    contract(g, args.metric, backend=backend)                     # warm-up (compiles kernels)
    t0 = time.perf_counter()
    h = contract(g, args.metric, backend=backend)
    print(f"contract {1000 * (time.perf_counter() - t0):.1f} ms wall, {h.num_levels} levels, "
          f"{h.summary()['shortcuts']:,} shortcuts, growth {h.edge_growth:.3f}")
    steps = {}
    for r in h.iterations:
        for k, v in r["ms"].items():
            steps[k] = steps.get(k, 0.0) + v
    print("step sums (ms):", {k: round(v, 1) for k, v in steps.items()}, "apsp", h.params["apsp_ms"])
    sources = np.random.default_rng(7).integers(0, g.num_nodes, args.sources)
    query = phast.PhastQuery(h, backend)
    query.tree(int(sources[0]))
    trees = [query.tree(int(s)) for s in sources]
    levels = [query.tree(int(s), per_level=True).level_ms for s in sources]
    med = statistics.median
    print(f"PHAST tree: compute {med(t.compute_ms for t in trees):.3f} ms, "
          f"with copy {med(t.total_ms for t in trees):.3f} ms")
    if levels[0]:
        up = med(sum(x["up"]) for x in levels)
        down = med(sum(x["down"]) for x in levels)
        core = med(x.get("core", 0.0) for x in levels)
        print(f"  one launch at a time: up {up:.3f} ms ({len(levels[0]['up'])} levels), "
              f"core {core:.3f} ms, down {down:.3f} ms ({len(levels[0]['down'])} levels)")
    t0 = time.perf_counter()
    query.distances(sources[:1])
    reps = 20
    t0 = time.perf_counter()
    for s in sources[:reps]:
        query.distances([int(s)])
    print(f"  distances only (batch of 1, host copy included): {(time.perf_counter() - t0) * 1000 / reps:.3f} ms")


if __name__ == "__main__":
    main()
