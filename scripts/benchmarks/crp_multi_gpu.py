"""CRP customization on one GPU and split over two (engine/crp/customization/multi_gpu.py),
on the generated network of ROUTELAB_MULTI_GPU_NODES nodes (default 2 M; seed 1, the
crp_big section's network), the car-fastest decoder.

Per configuration: one untimed customization (compilation, first touch), then RUNS
timed ones interleaved with the other configurations (so a drift of the machine hits
all alike); the median of the levels' time (``total_ms``: from the first level's
launch until every GPU is done, the gather included, decode and the copy to the host
apart), the decode, and the ratio to one GPU. Every run's shortcut costs are checked
equal to one GPU's, bit for bit. A partition file in ROUTELAB_MULTI_GPU_PARTITION
(.rlp, made for this network) skips METIS."""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

HEADER = ["graph", "what", "figure", "notes"]
RUNS = 5
NODES = int(os.environ.get("ROUTELAB_MULTI_GPU_NODES", 2_000_000))


def bench_crp_multi_gpu() -> tuple[list[str], list[list[str]]]:
    from engine.core.backend import device_count, gpu_backend
    if device_count() < 1:
        return HEADER, [["-", "skipped", "", "needs a CUDA device"]]
    overlay, label, prep = _overlay()
    rows = [[label, "partition + overlay + level-0 microcode", prep,
             f"cells per level {overlay.summary()['cells']}"]]
    gpus = [gpu_backend(i) for i in range(min(device_count(), 4))]
    configs = [("1 GPU", [gpus[0]], None)]
    configs += [(f"{n} GPUs", gpus[:n], None) for n in range(2, len(gpus) + 1)]
    if len(gpus) == 1:                     # the split's own cost, measured on one device
        configs.append(("2 parts on 1 GPU", [gpus[0], gpus[0]], None))
    rows += _measure(overlay, label, configs)
    print("\n".join(" | ".join(r) for r in rows), flush=True)
    return HEADER, rows


def _overlay():
    from engine.crp.customization.customize import Customizer
    from engine.crp.partition.nested import Partition, partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.generate.network import generate_road_network
    t0 = time.perf_counter()
    g = generate_road_network(NODES, seed=1)
    gen_s = time.perf_counter() - t0
    path = os.environ.get("ROUTELAB_MULTI_GPU_PARTITION")
    t0 = time.perf_counter()
    partition = Partition.load(path, g) if path else partition_graph(g, seed=0)
    part_s = time.perf_counter() - t0
    overlay = Overlay(g, partition)
    mc_s = Customizer(overlay).microcode.compile_ms / 1000
    label = f"generated ({g.num_nodes:,} nodes, {g.num_arcs:,} arcs)"
    return overlay, label, (f"generate {gen_s:.1f} s; partition {part_s:.1f} s + "
                            f"{overlay.build_ms / 1000:.1f} s + {mc_s:.1f} s")


def _measure(overlay, label, configs) -> list[list[str]]:
    from engine.crp.customization.customize import Customizer
    from engine.crp.metric.decoder import load_decoder
    decoder = load_decoder("car-fastest")
    customizers = []
    for name, devices, split in configs:
        c = Customizer(overlay, devices=devices, split_level=split)
        c.customize(decoder)                               # untimed: compilation
        customizers.append(c)
    reference = customizers[0].customize(decoder).shortcuts
    runs = [[] for _ in configs]
    for _ in range(RUNS):
        for k, c in enumerate(customizers):
            m = c.customize(decoder)
            for level, (a, b) in enumerate(zip(reference, m.shortcuts)):
                if not np.array_equal(a, b):
                    raise AssertionError(f"{configs[k][0]}: level {level} differs from 1 GPU")
            runs[k].append(m)
    base = statistics.median(m.total_ms for m in runs[0])
    rows = []
    for (name, devices, _), c, ms in zip(configs, customizers, runs):
        rows.append(_row(label, name, devices, c, ms, base, overlay.graph.num_nodes))
    return rows


def _row(label, name, devices, customizer, runs, base, nodes) -> list[str]:
    total = statistics.median(m.total_ms for m in runs)
    decode = statistics.median(m.decode_ms for m in runs)
    copy = statistics.median(m.copy_ms for m in runs)
    mid = sorted(runs, key=lambda m: m.total_ms)[len(runs) // 2]
    levels = ", ".join(f"L{r['level']} {sum(r['ms'].values()):.2f}" for r in mid.timings)
    split = ""
    if customizer.devices:
        plan = customizer.gpu.plan
        split = (f"; split at level {plan.split_level}, cells per part "
                 f"{np.diff(plan.cuts[-1]).tolist()}, work estimate per part "
                 f"{(plan.work / max(plan.work.sum(), 1)).round(2).tolist()}")
    device = devices[0].device_name
    return [label, f"customization, {name} ({device})", f"{total:.2f} ms",
            f"{base / total:.2f}x one GPU; {total * 1e6 / nodes:.2f} ns per node; decode "
            f"{decode:.2f} ms apart, copy to host {copy:.1f} ms apart; levels [{levels}] ms "
            f"(a split level: its slowest GPU){split}; median of {RUNS}, equal to one GPU"]


SECTIONS = {"crp_multi_gpu": ("CRP customization on one GPU and split over two",
                              bench_crp_multi_gpu)}
