"""GPU customization under several settings on one generated network, side by side: the
per-level times (median of the runs) and whether every setting's shortcuts equal the
first's. For tuning the block shapes (engine/crp/customization/layout.py minplus_shape)
and level 0's packing on a device, in one call:

    python scripts/crp_shapes.py --nodes 8000000 \\
        --setting default '{}' \\
        --setting 'one shape' '{"minplus_threads": 256, "minplus_unroll": 1, "minplus_shared_ints": 24576}' \\
        --setting 'level 0 slots 8192' '{"microcode_slots": 8192}'

A setting is a name and the GpuCustomizer options as JSON; an option may map a level to
its value ({"minplus_threads": {"1": 64}}). The settings run in turn, then again in the
same order (--rounds), so a drift of the machine shows as a difference between rounds.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))     # benchmarks/, as bench.py does

from benchmarks.continental import FREE_TURNS  # noqa: E402  (SciPy-checkable free turns)


def _options(text: str) -> dict:
    """JSON options; a mapping's keys that are digits become levels."""
    raw = json.loads(text)
    return {k: ({int(lv): x for lv, x in v.items()} if isinstance(v, dict) else v)
            for k, v in raw.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graph", help="a .rlg file to use instead of generating --nodes")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--setting", nargs=2, action="append", metavar=("NAME", "JSON"),
                    default=[])
    args = ap.parse_args(argv)
    from engine.core.backend import device_count, gpu_backend
    from engine.crp.customization.customize import Customizer
    from engine.crp.customization.microcode import compile_microcode
    from engine.crp.metric.decoder import parse_decoder
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.generate.network import generate_road_network
    from engine.io.cache import load_cache
    if not device_count():
        print("crp_shapes: no GPU here", file=sys.stderr)
        return 1
    settings = [(name, _options(text)) for name, text in args.setting] or [("default", {})]
    t0 = time.perf_counter()
    g = load_cache(args.graph) if args.graph else generate_road_network(args.nodes, seed=args.seed)
    overlay = Overlay(g, partition_graph(g, seed=0))
    microcode = compile_microcode(overlay, 0)
    print(f"{g.num_nodes:,} nodes: network, partition, overlay, microcode in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    backend, decoder = gpu_backend(0), parse_decoder(FREE_TURNS)
    first, space = None, None
    for _ in range(args.rounds):
        for name, options in settings:
            c = Customizer(overlay, backend, microcode=microcode, query_space=space, **options)
            c.customize(decoder)                              # untimed: first touch
            runs = [c.customize(decoder) for _ in range(args.runs)]
            space = c.query_space
            got = [np.asarray(s) for s in runs[-1].shortcuts]
            first = first or got
            equal = all(np.array_equal(a, b) for a, b in zip(first, got))
            levels = [statistics.median(sum(m.timings[i]["ms"].values()) for m in runs)
                      for i in range(len(runs[0].timings))]
            shapes = [{k: r[k] for k in ("threads", "batch", "blocks", "shared_kb") if k in r}
                      for r in runs[0].timings]
            print(f"{name}: {statistics.median(m.total_ms for m in runs):.2f} ms, levels "
                  f"[{', '.join(f'{x:.2f}' for x in levels)}], equal to the first: {equal}; "
                  f"{shapes}", flush=True)
            del c, runs
            gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
