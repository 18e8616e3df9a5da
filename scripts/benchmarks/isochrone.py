"""Service areas (engine.sssp.isochrone) on NY: the geometry's time beside the tree's."""
from __future__ import annotations

import statistics
import time

from benchmarks.common import DATA

MIDTOWN = 187538          # a DIMACS node id near Times Square
CUTOFFS = {"travel_time": "5,10,15,20min", "distance": "2,4,6,8km"}


def bench_isochrone() -> tuple[list[str], list[list[str]]]:
    """Four nested areas from Midtown and from 4 random sources, per metric: the tree
    (CPU near-far, warm) and the buffered union of the reached road pieces."""
    import numpy as np

    from engine.core import backend as backends
    from engine.io import load
    from engine.sssp.isochrone import isochrones
    from engine.sssp import TreeQuery
    from engine.core.units import parse_amounts, unit_of

    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return ["graph", "note"], [["NY", "shared data absent"]]
    g = load([ny])
    rng = np.random.default_rng(3)
    sources = [int(np.flatnonzero(g.node_id == MIDTOWN)[0])] + rng.integers(0, g.num_nodes, 4).tolist()
    rows = []
    for metric, text in CUTOFFS.items():
        query = TreeQuery(g, metric, backends.cpu_backend())
        query.tree(sources[0])                               # compiled before timing
        cutoffs = parse_amounts(text, unit_of(g.metric_units, metric))
        tree_s, geometry_s, areas = [], [], []
        for s in sources:
            t0 = time.perf_counter()
            distance = query.tree(s).tree.distance
            tree_s.append(time.perf_counter() - t0)
            iso = isochrones(g, distance, metric, cutoffs, source=s)
            geometry_s.append(iso.seconds)
            areas.append(iso.area_m2[-1] / 1e6)
        rows.append([f"NY {metric}", text, f"{statistics.median(tree_s) * 1000:.0f} ms",
                     f"{statistics.median(geometry_s):.2f} s ({geometry_s[0]:.2f} s from Midtown)",
                     f"{statistics.median(geometry_s) / statistics.median(tree_s):,.0f}x",
                     f"{statistics.median(areas):,.0f} km² (Midtown {areas[0]:,.0f})"])
    return ["graph", "cut-offs", "tree (median of 5)", "areas (median of 5)", "areas / tree",
            "largest area"], rows


SECTIONS = {"isochrone": ("Service areas (isochrones), NY, CPU", bench_isochrone)}
