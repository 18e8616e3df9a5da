"""Point-to-point routes on NY: the CH query beside RoutingKit's CH, bidirectional
Dijkstra beside SciPy's one-to-all Dijkstra, each pair of figures from one run and
one list of random pairs (timed one after the other, pair by pair)."""
from __future__ import annotations

import statistics
import time

import numpy as np

from benchmarks.common import DATA

CH_PAIRS = 10_000
DIJKSTRA_PAIRS = 1_000
HEADER = ["graph", "what", "median", "p99", "notes"]


def bench_route() -> tuple[list[str], list[list[str]]]:
    from engine.io import load

    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return HEADER, [["NY", "missing", str(ny), "", ""]]
    g = load([ny])
    rows = []
    for metric in ("distance", "travel_time"):
        rows += ch_rows(g, metric)
        rows += dijkstra_rows(g, metric)
    return HEADER, rows


def us(seconds) -> np.ndarray:
    return np.asarray(seconds) * 1e6


def stats(values_us: np.ndarray) -> tuple[float, float]:
    return float(np.median(values_us)), float(np.percentile(values_us, 99))


def ch_rows(g, metric: str) -> list[list[str]]:
    """CH query (route with unpacked path) over CH_PAIRS pairs, then RoutingKit's
    distance query and its query + arc path over the same pairs, each in its own pass
    (interleaved, each would evict the other's data from the caches)."""
    from engine.core import backend as backends
    from engine.ch import contract
    from engine.ch.query import ChQuery

    label = f"NY {metric}"
    h = contract(g, metric, backend=backends.select("auto"))
    ChQuery(h)                                             # compiles (or loads) Numba
    inits = [ChQuery(h).init_ms for _ in range(3)]
    query = ChQuery(h)
    pairs = [(int(a), int(b)) for a, b in np.random.default_rng(21).integers(0, g.num_nodes, (CH_PAIRS, 2))]
    ours, distances = timed_pass(pairs, lambda s, t: query.route(s, t).distance)
    med, p99 = stats(ours)
    rows = [[label, "CH query init (ChQuery.__init__)", f"{statistics.median(inits):.0f} ms", "",
             f"median of 3; {h.summary()['levels']} levels, core of {h.core_nodes.size}"],
            [label, "CH query: route with path (ours)", f"{med:.1f} µs", f"{p99:.1f} µs",
             f"{CH_PAIRS:,} random pairs; target ≤ 50 µs median"]]
    rk = _routingkit(g, metric)
    if rk is None:
        return rows + [[label, "RoutingKit CH (ch-router)", "not installed", "", "pip install ch-router"]]

    def rk_distance(s, t):
        return rk.reset().add_source(s).add_target(t).run().get_distance()

    def rk_path(s, t):
        d = rk_distance(s, t)
        rk.get_arc_path()
        return d

    for what, fn in (("distance only", rk_distance), ("distance + get_arc_path", rk_path)):
        values, theirs = timed_pass(pairs, fn)
        assert theirs == distances, f"RoutingKit disagrees on {metric}"
        rmed, rp99 = stats(values)
        rows.append([label, f"RoutingKit CH (ch-router): {what}", f"{rmed:.1f} µs", f"{rp99:.1f} µs",
                     f"ours / this: {med / rmed:.2f}x median, {p99 / rp99:.2f}x p99; same pairs, "
                     "distances equal"])
    return rows


def timed_pass(pairs, fn) -> tuple[np.ndarray, list[int]]:
    """µs per pair and the distances, after 200 untimed warm-up pairs."""
    for s, t in pairs[:200]:
        fn(s, t)
    clock, seconds, out = time.perf_counter, [], []
    for s, t in pairs:
        t0 = clock()
        out.append(fn(s, t))
        seconds.append(clock() - t0)
    return us(seconds), out


def _routingkit(g, metric: str):
    try:
        from routingkit_ch import CHQuery, ContractionHierarchy
    except ImportError:
        return None
    ch = ContractionHierarchy.build(g.num_nodes, g.tail.astype(np.uint32), g.head.astype(np.uint32),
                                    g.metric(metric).astype(np.uint32))
    return CHQuery(ch)


def dijkstra_rows(g, metric: str) -> list[list[str]]:
    """Bidirectional Dijkstra beside SciPy's one-to-all Dijkstra plus the path read off
    its tree (what every click route ran before), on the same DIJKSTRA_PAIRS pairs."""
    from engine.routing import reference
    from engine.core.paths import path_from_tree
    from engine.routing.bidirectional import BidirectionalDijkstra

    label = f"NY {metric}"
    router = BidirectionalDijkstra(g, metric)
    matrix = reference.scipy_matrix(g, metric)
    pairs = [(int(a), int(b)) for a, b in np.random.default_rng(22).integers(0, g.num_nodes, (DIJKSTRA_PAIRS, 2))]
    router.route(*pairs[0])                                # warm-up
    ours, scipy = [], []
    clock = time.perf_counter
    for s, t in pairs:
        t0 = clock()
        path = router.route(s, t)
        t1 = clock()
        ref = path_from_tree(g, reference.sssp(g, s, metric, matrix), t)
        t2 = clock()
        assert ref.distance == path.distance, (s, t)
        ours.append(t1 - t0)
        scipy.append(t2 - t1)
    med, p99 = stats(us(ours) / 1000)
    smed, sp99 = stats(us(scipy) / 1000)
    return [[label, "bidirectional Dijkstra: route with path (ours)", f"{med:.2f} ms", f"{p99:.2f} ms",
             f"{DIJKSTRA_PAIRS:,} random pairs; {smed / med:.1f}x faster than SciPy (median)"],
            [label, "SciPy one-to-all Dijkstra + path (the old route)", f"{smed:.2f} ms", f"{sp99:.2f} ms",
             "same pairs, distances equal"]]


SECTIONS = {"route": ("Point-to-point routes (NY): CH query and bidirectional Dijkstra", bench_route)}
