"""Cost-budgeted paths: Vine's query sets Q1-Q3 (engine.csp.query_sets) on NY, median
and p90 end to end (bounds + labeling) for our search, the same labeling without the
bounds (Vine-style, capped in labels), and the Pareto-set mode; labels created and
pruned. The GPU labeling is not built yet: these are CPU figures."""
from __future__ import annotations

import time

import numpy as np

from benchmarks.common import DATA

HEADER = ["graph", "set", "what", "median ms", "p90 ms", "notes"]
PER_SET = 20
VINE_LABELS = 3_000_000          # Vine-style runs past this many labels count as "over"


def _row(label, name, what, times, notes):
    return [label, name, what, f"{np.median(times):.1f}", f"{np.percentile(times, 90):.1f}", notes]


def _set_rows(g, label, name, items, ours, vine, capped):
    from engine.csp import LabelMemoryExceeded
    runs, pareto, plain, over, created, points, pover = [], [], [], 0, [], [], 0
    for it in items:
        s, t = (int(x) for x in g.index_of([it["source"], it["target"]]))
        r = ours.solve(s, t, it["budget"])
        runs.append(r.ms["total"])
        created.append(r.stats["created"])
        try:
            p = capped.solve(s, t, it["budget"], pareto=True)
            pareto.append(p.ms["total"])
            points.append(len(p.pareto))
        except LabelMemoryExceeded:
            pover += 1
        try:
            v = vine.solve(s, t, it["budget"])
            plain.append(v.ms["labeling"])
            assert v.length == r.length, "the bounds changed an answer"
        except LabelMemoryExceeded:
            over += 1
    rows = [_row(label, name, "with our bounds (CPU twin)", runs,
                 f"{len(items)} queries; labels created median {int(np.median(created)):,}"),
            _row(label, name, "Pareto set (CPU twin)", pareto or [np.nan],
                 f"non-dominated points median {int(np.median(points or [0]))}; "
                 f"{pover} over {VINE_LABELS:,} labels (left out)")]
    if plain:
        note = f"labeling only; {over} of {len(items)} over {VINE_LABELS:,} labels (left out)" \
            if over else "labeling only"
        rows.append(_row(label, name, "without bounds (Vine-style, CPU)", plain, note))
    return rows


def bench_csp() -> tuple[list[str], list[list[str]]]:
    import os
    from engine.csp import CspQuery
    from engine.csp.query_sets import build_query_sets
    from engine.io import load
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return HEADER, [["NY", "", "", "", "", "shared data absent"]]
    g = load([ny])
    t0 = time.perf_counter()
    sets = build_query_sets(g, "distance", "travel_time", seed=0, per_set=PER_SET)
    ours = CspQuery(g)
    vine = CspQuery(g, bounds=False, max_labels=VINE_LABELS)
    capped = CspQuery(g, max_labels=VINE_LABELS)
    ours.solve(0, int(g.head[0]), 2**40, pareto=True)          # compile before timing
    rows = []
    for name, items in sets["sets"].items():
        rows += _set_rows(g, f"NY ({g.num_nodes:,} nodes)", name, items, ours, vine, capped)
    rows.append([f"NY ({g.num_nodes:,} nodes)", "", "query sets built", "", "",
                 f"{time.perf_counter() - t0:.0f} s for all rows; {os.cpu_count()} CPU cores; "
                 f"targets: NY Q3 ≤ 100 ms (CPU twin, 2 cores), ≤ 5 ms (GPU)"])
    return HEADER, rows


SECTIONS = {"csp": ("Cost-budgeted paths (Vine's query sets)", bench_csp)}
