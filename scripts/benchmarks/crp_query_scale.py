"""The CRP query (CPU) at scale (issue #37: <= 10 ms median at 24 M nodes): where a
query's time goes, for the default partition levels and for alternatives.

    ROUTELAB_QUERY_SCALE_NODES=1M,4M ROUTELAB_QUERY_SCALE_LEVELS="default;8,10,12,14,16" \\
        python scripts/bench.py --only crp_query_scale

Graphs: generated networks (seed 1) of the node counts in ROUTELAB_QUERY_SCALE_NODES
(default 1M; k/M suffixes). Levels: ";"-separated, "default" (the partitioner's own
choice) or the query levels' cell sizes (log2), e.g. "8,11,14,17,20" (the mezzanine
level stays the partitioner's default). Customization runs on the CPU twin with
car-fastest. The first query builds the top-level bound tables of bounds.py (all of
them, on every core: its own row), then 1,000 random pairs (seed 5) are routed twice,
with the two-stage search between top cells (staged.py, the default) and with the
bidirectional search alone (search.py, as before it), so the ratio is measured in
the same run; the two stages again with stage 1's searches one after the other on
the calling thread (staged.py runs the backward one on a side thread where there are
two cores), and with the metric's unpacking trees dropped, as a GPU customization
has none (unpack.py then searches each shortcut's cell from both ends). A query is
split into bounds / search (its stages: inside, across) / unpack by CrpQuery.last_ms;
"total" is route() as the caller sees it (also the Path's checks).
"""
from __future__ import annotations

import dataclasses
import gc
import os
import time

import numpy as np

HEADER = ["graph", "levels (log2; mezzanine)", "what", "median", "p99", "notes"]
PAIRS = 1_000


def bench_crp_query_scale() -> tuple[list[str], list[list[str]]]:
    sizes = [_nodes(s) for s in os.environ.get("ROUTELAB_QUERY_SCALE_NODES", "1M").split(",")
             if s.strip()]
    configs = [_levels(c) for c in os.environ.get("ROUTELAB_QUERY_SCALE_LEVELS", "default").split(";")
               if c.strip()]
    rows = []
    for n in sizes:
        from engine.generate.network import generate_road_network
        g = generate_road_network(n, seed=1)
        for levels in configs:
            rows += _config_rows(f"generated {g.num_nodes:,} nodes", g, levels)
            print("\n".join(" | ".join(r) for r in rows), flush=True)   # progress
            gc.collect()
        del g
        gc.collect()
    return HEADER, rows


def _nodes(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KM")) * scale)


def _levels(text: str):
    text = text.strip()
    return None if text == "default" else tuple(int(k) for k in text.split(","))


def _config_rows(label, g, levels) -> list[list[str]]:
    from engine.crp import CrpQuery, Overlay, load_decoder, partition_graph
    from engine.crp.customization.customize import Customizer
    t0 = time.perf_counter()
    partition = partition_graph(g, levels=levels, seed=0)
    t1 = time.perf_counter()
    overlay = Overlay(g, partition)
    t2 = time.perf_counter()
    customizer = Customizer(overlay)
    metric = customizer.customize(load_decoder("car-fastest"))
    t3 = time.perf_counter()
    query = CrpQuery(overlay, metric, customizer.query_space)
    t4 = time.perf_counter()
    s = overlay.summary()
    mezz = [k for k, q in zip(partition.cell_sizes_log2, partition.query_level) if not q]
    what = f"{list(k for k, q in zip(partition.cell_sizes_log2, partition.query_level) if q)}; {mezz}"
    shortcuts = sum(s["shortcuts"])
    rows = [[label, what, "partition + overlay + customization (CPU) + query setup",
             f"{t1 - t0:.1f} + {t2 - t1:.1f} + {t3 - t2:.1f} + {t4 - t3:.1f} s", "",
             f"cells {s['cells']}; boundary arcs {s['boundary_arcs']}; shortcuts {shortcuts:,} "
             f"({4 * shortcuts / g.num_nodes:.0f} B/node)"]]
    pairs = np.random.default_rng(5).integers(0, g.num_nodes, (PAIRS, 2))
    t0 = time.perf_counter()
    query.route(int(pairs[0, 0]), int(pairs[0, 1]))
    rows.append([label, what, "first query (compilation and every bound table)",
                 f"{(time.perf_counter() - t0) * 1000:.0f} ms", "",
                 f"{int(query._bounds.done.sum())} tables in {query._bounds.build_ms:.0f} ms"])
    side = query._side
    # untimed: the first pass fills the backward search's column-major copy cell by cell
    # (search._column) and touches the state's pages, which would weigh on one pass only
    _pass_rows(label, what, "warm-up", query, pairs)
    for name, two_stage, thread in (("two stages between top cells", True, side),
                                    ("two stages, stage 1 on one thread", True, None),
                                    ("bidirectional only (before)", False, side)):
        if name.endswith("one thread") and side is None:
            continue                              # one core: the first pass was this
        query.two_stage, query._side = two_stage, thread
        rows += _pass_rows(label, what, name, query, pairs)
    query.two_stage, query._side = True, side
    # a GPU customization keeps no unpacking trees: every shortcut is a search in its cell
    query.set_metric(dataclasses.replace(metric, trees=None))
    _pass_rows(label, what, "warm-up", query, pairs)
    rows += _pass_rows(label, what, "two stages, a metric without unpacking trees (GPU's)",
                       query, pairs)
    query.set_metric(metric)
    return rows


def _pass_rows(label, what, name, query, pairs) -> list[list[str]]:
    from benchmarks.common import timed_routes
    split = {"search": [], "inside": [], "across": [], "unpack": []}

    def keep_split(q):
        for k in split:
            split[k].append(q.last_ms[k])
    total, unreachable = timed_routes(query, pairs, after=keep_split)

    def fig(v):
        return f"{np.median(v):.2f} ms", f"{np.percentile(v, 99):.2f} ms"

    rows = [[label, what, f"query, {name}: total", *fig(total),
             f"{len(pairs):,} random pairs ({unreachable} unreachable); mean {np.mean(total):.2f} ms"]]
    for k, v in split.items():
        rows.append([label, what, f"  {k}", *fig(v), f"mean {np.mean(v):.2f} ms"])
    return rows


SECTIONS = {"crp_query_scale": ("CRP query (CPU) at scale: two stages against bidirectional, search / unpack",
                                bench_crp_query_scale)}
