"""Cost-budgeted paths: Vine's query sets Q1-Q3 (engine.csp.query_sets), median and p90
end to end (bounds + labeling) per set; labels created and pruned. Three sections:

- ``csp``: NY on this machine's backend: our search (with the Lagrangian bound for hard
  queries), the same without that bound and with it from the start, the Pareto-set
  mode, the same labeling without the bounds (Vine-style, capped in labels) and, on a
  GPU, K_t fixed instead of adaptive and the CPU twin of the same machine;
- ``csp_big``: the generated 2 M-node graph, GPU (with the CPU twin), skipped on a CPU;
- ``csp_cpu``: NY on the CPU backend alone, with cspy (the bench extra) on the first
  Q1 queries: for a small CPU machine (the 2-core target).

Our search and the CPU twin run every query; the capped variants (Pareto, Vine-style,
cspy) leave out the rest of a set once they pass their time budget (said in the notes).
The query sets are read from tests/data (NY: scripts/csp_queries.py, seed 0, 20 per set;
generated 2 M: ``build_query_sets(generate_road_network(2_000_000, seed=1), seed=0)``,
written by ``PYTHONPATH=.:scripts python scripts/benchmarks/csp.py --write-2m-sets``,
which takes minutes), and built here when the file is missing. Every answer is checked
against the stored reference (NY) or the first variant's answer."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import DATA

HEADER = ["graph", "set", "what", "median ms", "p90 ms", "notes"]
PER_SET = 20
VINE_LABELS = 3_000_000          # Vine-style runs past this many labels count as "over"
CAPPED_BUDGET_S = 6.0            # per capped variant and set (Pareto, Vine-style)
TWIN_BIG_BUDGET_S = 60.0         # the slow rows per set on the 2 M graph
CSPY_QUERIES, CSPY_LIMIT_S = 3, 60.0     # cspy: the first Q1 queries, each with a time limit
FIXED_K = 4096
STORED = Path(__file__).resolve().parents[2] / "tests" / "data"
NY_SETS = STORED / "csp_ny_queries.json"
GENERATED_SETS = STORED / "csp_generated_2m_queries.json"


class Variant:
    """One row per set: ``solver.solve(s, t, budget, pareto=...)``, timed by its
    result's ``ms[part]``; ``budget_s``: the time after which the rest of a set is
    left out (None: every query runs); ``sets``: which sets it runs."""

    def __init__(self, what, solver, pareto=False, part="total", budget_s=None,
                 sets=("Q1", "Q2", "Q3"), limit=None):
        self.what, self.solver, self.pareto, self.part = what, solver, pareto, part
        self.budget_s, self.sets, self.limit = budget_s, sets, limit


def _row(label, name, what, times, notes):
    if not times:
        return [label, name, what, "", "", notes]
    return [label, name, what, f"{np.median(times):.1f}", f"{np.percentile(times, 90):.1f}", notes]


def _run(variant, queries):
    """Times (ms), results, how many passed the label cap, and how many were left out."""
    from engine.csp import LabelMemoryExceeded
    times, results, over, started = [], [], 0, time.perf_counter()
    queries = queries[:variant.limit] if variant.limit else queries
    for i, (s, t, budget) in enumerate(queries):
        if variant.budget_s and time.perf_counter() - started > variant.budget_s:
            return times, results, over, len(queries) - i
        try:
            r = variant.solver.solve(s, t, budget, pareto=variant.pareto)
        except LabelMemoryExceeded:
            over += 1
            continue
        times.append(r.ms[variant.part])
        results.append(r)
    return times, results, over, 0


def _notes(variant, results, over, left, extra=""):
    parts = []
    if results and "created" in results[0].stats:
        created = int(np.median([r.stats["created"] for r in results]))
        pruned = int(np.median([r.stats["pruned_cost_bound"] + r.stats["pruned_length_bound"] +
                                r.stats["pruned_dominated"] for r in results]))
        parts.append(f"labels created median {created:,}, pruned {pruned:,}")
        if "iterations" in results[0].stats:
            parts.append(f"iterations median {int(np.median([r.stats['iterations'] for r in results])):,}")
    bound = [r.lagrangian for r in results if getattr(r, "lagrangian", None)]
    if bound:
        restarts = sum(x["labels_before_restart"] > 0 for x in bound)
        parts.append(f"Lagrangian bound on {len(bound)} ({restarts} restarted), LARAC median "
                     f"{np.median([x['ms'] for x in bound]):.1f} ms, "
                     f"{np.median([x['steps'] for x in bound]):.0f} steps")
    if variant.limit:
        parts.append(f"first {variant.limit} queries")
    if over:
        q = variant.solver                 # a CspQuery: only it runs out of labels
        on_gpu_memory = q.label_cap is None and q.backend.is_gpu
        parts.append(f"{over} out of GPU label memory (left out)" if on_gpu_memory else
                     f"{over} over {q.max_labels:,} labels (left out)")
    if left:
        parts.append(f"{left} left out (past {variant.budget_s:.0f} s)")
    return "; ".join(parts + ([extra] if extra else []))


def _set_rows(label, name, queries, variants, reference):
    """``reference``: {(source, target): length} where stored, else the first
    variant's answers. A disagreement is reported in the notes, not hidden; the rows
    come back with the keys that disagreed."""
    rows, answers, disagreed = [], dict(reference), []
    baseline = None
    for v in variants:
        if name not in v.sets:
            continue
        times, results, over, left = _run(v, queries)
        wrong = []
        for r in results:
            key = (r.source, r.target)
            if r.length is None:                      # cspy stopped at its time limit
                continue
            if answers.setdefault(key, r.length) != r.length:
                wrong.append(key)
        extra = ""
        if v.pareto and results:
            extra = f"non-dominated points median {int(np.median([len(r.pareto) for r in results]))}"
        if isinstance(v.solver, CspyQuery) and results and baseline:
            ours = np.median(baseline[:len(times)])
            extra = f"{np.median(times) / ours:,.0f}x the time of the first row on the same queries"
            if v.solver.limited:
                extra += (f"; {v.solver.limited} stopped at its {CSPY_LIMIT_S:.0f} s time limit "
                          f"or its memory cap "
                          f"without the optimum (their time counts, so the ratio is a floor)")
        if wrong:
            extra += f"; {len(wrong)} DISAGREE with the reference: {wrong[:3]}"
            disagreed += wrong
        baseline = baseline or times
        rows.append(_row(label, name, v.what, times, _notes(v, results, over, left, extra.strip("; "))))
        print(" | ".join(rows[-1]), flush=True)           # progress, should a limit cut it
    return rows, disagreed


class CspyQuery:
    """cspy's bidirectional labeling (the only Python peer) on the same graph and
    metrics, resources [hops, cost]; the networkx graph is built once, and only the
    search is timed."""

    def __init__(self, graph, minimize="distance", budget_metric="travel_time"):
        import cspy  # noqa: F401  (the bench extra)
        from tests.cspy_peer import cspy_graph
        self.graph = graph
        self.length, self.cost = graph.metrics[minimize], graph.metrics[budget_metric]
        self.nx = cspy_graph(graph, self.length, self.cost)
        self.limited = 0

    def solve(self, source, target, budget, pareto=False):
        """One cspy search in a forked child whose memory is capped (cspy can fill a
        small machine's memory within its time limit): a child out of memory counts
        like one stopped at the time limit, never kills the bench."""
        import multiprocessing
        from types import SimpleNamespace
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        started = time.perf_counter()
        child = ctx.Process(target=self._search, args=(send, source, target, budget))
        child.start()
        send.close()
        try:
            ms, length = receive.recv()
        except EOFError:                            # killed: out of memory
            ms, length = (time.perf_counter() - started) * 1000, None
        child.join()
        stopped = length is None or ms >= CSPY_LIMIT_S * 1000    # no optimum then
        self.limited += stopped
        return SimpleNamespace(source=source, target=target, length=None if stopped else length,
                               ms={"total": ms}, stats={})

    def _search(self, send, source, target, budget):
        import resource
        import cspy
        from tests.cspy_peer import set_terminals
        with open("/proc/self/statm") as f:        # pages: the address space so far
            mapped = int(f.read().split()[0]) * resource.getpagesize()
        available = os.sysconf("SC_AVPHYS_PAGES") * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (mapped + int(0.7 * available),) * 2)
        set_terminals(self.nx, source, target)
        started = time.perf_counter()
        try:
            alg = cspy.BiDirectional(self.nx, [self.graph.num_arcs + 2.0, float(budget)],
                                     [0.0, 0.0], direction="both", elementary=False,
                                     time_limit=CSPY_LIMIT_S)
            alg.run()
            length = None if alg.total_cost is None else int(round(alg.total_cost))
        except MemoryError:
            length = None
        send.send(((time.perf_counter() - started) * 1000, length))


def _hierarchy(g, label):
    """The bi-criteria hierarchy (distance, travel time) and its row: built once per
    graph and metric pair, so no query's time includes it."""
    import numba
    from engine.csp.hierarchy.build import build_pareto_hierarchy
    h = build_pareto_hierarchy(g, g.metrics["distance"], g.metrics["travel_time"])
    core = int(h.core.sum())
    row = [label, "", f"bi-criteria hierarchy, build (CPU, {numba.get_num_threads()} threads)",
           f"{h.build_ms:.0f}", "", f"core {core:,} nodes ({100 * core / g.num_nodes:.1f} %), "
           f"{h.num_levels} levels, {h.num_shortcuts:,} shortcuts; once per graph and metric "
           f"pair, in no query's time"]
    return h, row


def _variants(g, backend, twin_budget_s=None, hierarchy=None):
    """The rows' solvers; ``twin_budget_s`` caps the slow ones per set (the 2 M graph:
    the CPU twin, K_t fixed and no Lagrangian bound); with a ``hierarchy``, rows on it."""
    from engine.core.backend import cpu_backend
    from engine.csp import CspQuery
    from engine.csp.query.budgeted import MAX_LABELS    # the row without LARAC stops there (as before)
    on = backend.name.upper()
    capped = dict(budget_s=CAPPED_BUDGET_S)
    variants = []
    if hierarchy is not None:
        variants += [
            Variant(f"on the bi-criteria hierarchy ({on})",
                    CspQuery(g, backend=backend, hierarchy=hierarchy)),
            Variant(f"Pareto set on the bi-criteria hierarchy ({on})",
                    CspQuery(g, max_labels=VINE_LABELS, backend=backend, hierarchy=hierarchy),
                    pareto=True, **capped)]
        if backend.is_gpu:
            variants.append(Variant("CPU twin on the bi-criteria hierarchy (this machine)",
                                    CspQuery(g, backend=cpu_backend(), hierarchy=hierarchy),
                                    budget_s=twin_budget_s))
    variants += [
        Variant(f"with our bounds ({on})", CspQuery(g, backend=backend)),
        Variant(f"no Lagrangian bound ({on})", CspQuery(g, backend=backend, lagrangian="never",
                                                         max_labels=MAX_LABELS),
                budget_s=twin_budget_s),
        Variant(f"Lagrangian bound from the start ({on})",
                CspQuery(g, backend=backend, lagrangian="always")),
        Variant(f"Pareto set ({on})", CspQuery(g, max_labels=VINE_LABELS, backend=backend),
                pareto=True, **capped),
        Variant(f"without bounds (Vine-style, {on})",
                CspQuery(g, bounds=False, max_labels=VINE_LABELS, backend=backend),
                part="labeling", **capped)]
    if backend.is_gpu:
        variants += [Variant(f"K_t fixed at {FIXED_K} (GPU)",
                             CspQuery(g, backend=backend, adaptive=False, k_min=FIXED_K),
                             budget_s=twin_budget_s),
                     Variant("CPU twin (this machine)", CspQuery(g, backend=cpu_backend()),
                             budget_s=twin_budget_s)]
    for v in variants:                                         # compile and warm up first
        v.solver.solve(0, int(g.head[0]), 2**40, pareto=True)
    return variants


def _graph_rows(label, g, sets, variants):
    from engine.csp.query_sets import internal_queries
    rows, disagreed = [], []
    for name in sets["sets"]:
        queries = internal_queries(g, sets, name)
        reference = {(q[0], q[1]): item["reference"]["length"]
                     for q, item in zip(queries, sets["sets"][name]) if "reference" in item}
        set_rows, wrong = _set_rows(label, name, queries, variants, reference)
        rows += set_rows
        disagreed += wrong
    return rows, disagreed


def _closing(rows, disagreed, started, targets):
    rows.append(["", "", "all rows", "", "",
                 f"{time.perf_counter() - started:.0f} s; {os.cpu_count()} CPU cores; "
                 f"targets: {targets}"])
    if disagreed:
        rows.append(["", "", "DISAGREEMENTS", "", "", f"{len(disagreed)} answers disagree with "
                     f"the reference: {disagreed[:5]}"])
    return HEADER, rows


def stored_query_sets(g, stored):
    """Vine's sets from the stored file (with reference answers), or built (without)."""
    from engine.csp.query_sets import build_query_sets
    if stored.exists():
        return json.loads(stored.read_text())
    return build_query_sets(g, "distance", "travel_time", seed=0, per_set=PER_SET)


def _ny():
    from engine.io import load
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    return load([ny]) if ny.exists() else None


def bench_csp() -> tuple[list[str], list[list[str]]]:
    from engine.core import backend as backends
    started, g = time.perf_counter(), _ny()
    if g is None:
        return HEADER, [["NY", "", "skipped", "", "", "the NY files are not in the data"]]
    backend = backends.current()
    label = f"NY ({g.num_nodes:,} nodes)"
    hierarchy, row = _hierarchy(g, label)
    rows, disagreed = _graph_rows(label, g, stored_query_sets(g, NY_SETS),
                                  _variants(g, backend, hierarchy=hierarchy))
    return _closing([row] + rows, disagreed, started,
                    "NY Q3 ≤ 5 ms (GPU), ≤ 100 ms (CPU twin, 2 cores)")


def bench_csp_big() -> tuple[list[str], list[list[str]]]:
    from engine.core import backend as backends
    backend = backends.current()
    if not backend.is_gpu:
        return HEADER, [["generated 2 M", "", "skipped", "", "", "needs a GPU"]]
    started, g = time.perf_counter(), _generated()
    rows, disagreed = _graph_rows(f"generated ({g.num_nodes:,} nodes)", g,
                                  stored_query_sets(g, GENERATED_SETS),
                                  _variants(g, backend, twin_budget_s=TWIN_BIG_BUDGET_S))
    return _closing(rows, disagreed, started, "2 M Q3 ≤ 50 ms (GPU)")


def bench_csp_cpu() -> tuple[list[str], list[list[str]]]:
    from engine.core.backend import cpu_backend
    started, g = time.perf_counter(), _ny()
    if g is None:
        return HEADER, [["NY", "", "skipped", "", "", "the NY files are not in the data"]]
    label = f"NY ({g.num_nodes:,} nodes)"
    hierarchy, row = _hierarchy(g, label)
    variants = _variants(g, cpu_backend(), hierarchy=hierarchy)
    try:
        variants.append(Variant("cspy (BiDirectional, the Python peer)", CspyQuery(g),
                                sets=("Q1",), limit=CSPY_QUERIES))
    except ImportError:
        print("cspy is not installed (pip install '.[bench]'): no cspy row", flush=True)
    rows, disagreed = _graph_rows(label, g, stored_query_sets(g, NY_SETS), variants)
    return _closing([row] + rows, disagreed, started, "NY Q3 ≤ 100 ms (CPU twin, 2 cores); "
                    "NY Q1 ≥ 100x cspy")


def _generated():
    from engine.generate.network import generate_road_network
    return generate_road_network(2_000_000, seed=1)


SECTIONS = {"csp": ("Cost-budgeted paths (Vine's query sets), NY", bench_csp),
            "csp_big": ("Cost-budgeted paths on the generated 2 M-node graph", bench_csp_big),
            "csp_cpu": ("Cost-budgeted paths, NY, CPU backend, with cspy", bench_csp_cpu)}


if __name__ == "__main__" and sys.argv[1:] == ["--write-2m-sets"]:
    from engine.csp.query_sets import build_query_sets
    sets = build_query_sets(_generated(), "distance", "travel_time", seed=0, per_set=PER_SET)
    GENERATED_SETS.write_text(json.dumps(sets, indent=1))
