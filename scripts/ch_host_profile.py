"""Where a GPU contraction's wall time goes: several runs split into the levels,
the core APSP, the upward/downward arc lists and the copy to the host, with the device time
of the level steps beside them (CUDA events), with and without Python's garbage
collector; then the host profile of one run (launch overhead and waits).

    python scripts/ch_host_profile.py GRAPH... [--runs N]
"""
import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import backend as backends  # noqa: E402
from engine.ch import contract  # noqa: E402
from engine.io import load  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("graph", nargs="+")
parser.add_argument("--runs", type=int, default=6)
args = parser.parse_args()
g = load(args.graph)
backend = backends.select("gpu")
contract(g, backend=backend)
print(f"{'run':>4} {'gc':>4} {'wall ms':>8} {'levels':>7} {'apsp':>6} {'arcs':>6} {'copy':>6} "
      f"{'device steps':>13}")
h = None
for run in range(args.runs):
    collect = run % 2 == 0
    gc.collect()
    (gc.enable if collect else gc.disable)()
    h = None                     # one hierarchy alive at a time
    t0 = time.perf_counter()
    h = contract(g, backend=backend)
    wall = (time.perf_counter() - t0) * 1000
    gc.enable()
    p = h.params
    device_ms = sum(sum(r["ms"].values()) for r in h.iterations)
    print(f"{run:4d} {'on' if collect else 'off':>4} {wall:8.1f} {p['levels_ms']:7.1f} "
          f"{p['apsp_ms']:6.1f} {p['built_ms'] - p['levels_ms'] - p['apsp_ms']:6.1f} "
          f"{p['wall_ms'] - p['built_ms']:6.1f} {device_ms:13.1f}")
steps = {}
for r in h.iterations:
    for step, ms in r["ms"].items():
        steps[step] = steps.get(step, 0.0) + ms
print("device ms by step (last run):", {k: round(v, 1) for k, v in steps.items()})
profile = cProfile.Profile()
profile.enable()
contract(g, backend=backend)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(30)
