"""CRP customization over 1, 2, 4 and 8 GPUs (engine/crp/customization/multi_gpu.py,
issue #40) on generated networks of ROUTELAB_MULTI_GPU_NODES nodes (a comma list;
default 2 M; seed 1, the crp_big section's network), the car-fastest decoder.

Per network: partition, overlay and level-0 microcode once, then every GPU count the
machine has among 1, 2, 4, 8 (scripts/benchmarks/gpu_scaling.py: median of 5 after a
warm-up, counts interleaved, every run's shortcut costs equal to one GPU's, per level
each GPU's time and the gather), and the counts it lacks as a model from one GPU's
per-level times and the split plan. A partition file in ROUTELAB_MULTI_GPU_PARTITION
(.rlp, made for the one network asked for) skips METIS."""
from __future__ import annotations

import json
import os
import time

NODES = [int(float(n)) for n in os.environ.get("ROUTELAB_MULTI_GPU_NODES", "2000000").split(",")]


def bench_crp_multi_gpu() -> tuple[list[str], list[list[str]]]:
    from engine.core.backend import device_count
    from engine.crp.metric.decoder import load_decoder

    from benchmarks import gpu_scaling
    if device_count() < 1:
        return gpu_scaling.HEADER, [["-", "-", "skipped", "", "", "", "needs a CUDA device"]]
    counts = gpu_scaling.counts_for(device_count())
    rows = []
    for nodes in NODES:
        overlay, microcode, label, prep = _overlay(nodes)
        print(label, prep, flush=True)
        results = gpu_scaling.measure(overlay, load_decoder("car-fastest"), microcode, counts,
                                      emit=lambda k, v: print(json.dumps({k: v}), flush=True))
        del microcode
        rows.append([label, "-", "preprocessing", "", "", "", prep])
        rows += gpu_scaling.scaling_rows(overlay, label, results)
        print("\n".join(" | ".join(r) for r in rows[-len(gpu_scaling.COUNTS) - 1:]), flush=True)
    return gpu_scaling.HEADER, rows


def _overlay(nodes: int):
    from engine.crp.customization.microcode import compile_microcode
    from engine.crp.partition.nested import Partition, partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.generate.network import generate_road_network
    t0 = time.perf_counter()
    g = generate_road_network(nodes, seed=1)
    gen_s = time.perf_counter() - t0
    path = os.environ.get("ROUTELAB_MULTI_GPU_PARTITION")
    t0 = time.perf_counter()
    partition = Partition.load(path, g) if path else partition_graph(g, seed=0)
    part_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    overlay = Overlay(g, partition)
    overlay_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    microcode = compile_microcode(overlay, 0)
    mc_s = time.perf_counter() - t0
    label = f"generated ({g.num_nodes:,} nodes, {g.num_arcs:,} arcs)"
    return overlay, microcode, label, (
        f"generate {gen_s:.1f} s; partition {part_s:.1f} s + overlay {overlay_s:.1f} s + "
        f"level-0 microcode {mc_s:.1f} s; cells per level {overlay.summary()['cells']}")


SECTIONS = {"crp_multi_gpu": ("CRP customization over 1, 2, 4 and 8 GPUs",
                              bench_crp_multi_gpu)}
