"""Bi-criteria hierarchy files (``.rlb``): a ParetoHierarchy saved once and loaded in a
fraction of its build time (NY: ~25 s to build with 16 threads, under a second to load).

A file is an ``.npz`` of plain arrays and a JSON ``meta`` member, written atomically.
engine.io.pareto_hierarchy_file reads it (no pickles, sizes checked before anything
is allocated) and validates every array; loading for a graph also refuses it unless
its original arcs, lengths and costs are the graph's and its two metrics' hashes
match: a file can never answer for other weights.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.csp.hierarchy.build import ParetoHierarchy
from engine.io.errors import LoadError
from engine.io import proven
from engine.io.pareto_hierarchy_file import ARRAYS, read_pareto_hierarchy, write_pareto_hierarchy


def save_pareto_hierarchy(h: ParetoHierarchy, path) -> Path:
    """Write ``h`` to ``path`` (the old file stays if the write fails)."""
    if len(h.metrics) != 2:
        raise ValueError("only a hierarchy built for two named metrics of a graph can be saved "
                         "(engine.csp.hierarchy.build.pareto_hierarchy_for)")
    meta = {"num_nodes": h.num_nodes, "num_levels": h.num_levels,
            "num_original_arcs": h.num_original_arcs, "metrics": list(h.metrics),
            "metric_hashes": list(h.metric_hashes), "params": h.params, "build_ms": h.build_ms}
    return write_pareto_hierarchy(Path(path), {name: getattr(h, name) for name in ARRAYS}, meta)


def load_pareto_hierarchy(path, graph=None, minimize: str | None = None,
                          budget_metric: str | None = None) -> ParetoHierarchy:
    """A saved hierarchy, refused (LoadError naming the file and the reason) unless it
    passes the validator and the witness check (engine.csp.hierarchy.proof: no shortcut
    missing; its result is ``proof``) and, with ``graph``, belongs to it and to
    ``minimize`` and ``budget_metric`` (when given)."""
    from engine.csp.hierarchy.proof import prove_pareto
    path = Path(path)
    meta, arrays = read_pareto_hierarchy(path)
    names, hashes = meta["metrics"], meta["metric_hashes"]
    build_ms = meta.get("build_ms", 0.0)
    h = ParetoHierarchy(num_nodes=meta["num_nodes"], num_levels=meta["num_levels"],
                        num_original_arcs=meta["num_original_arcs"], params=meta["params"],
                        build_ms=float(build_ms) if isinstance(build_ms, (int, float)) else 0.0,
                        metrics=tuple(names), metric_hashes=tuple(hashes), **arrays)
    if graph is not None:
        check_fits(h, graph, minimize or names[0], budget_metric or names[1], path)
    if proven.known(path, "rlb"):         # passed before, untouched since
        h.proof = proven.Remembered()
    else:
        h.proof = prove_pareto(h, path)
        proven.remember(path, "rlb")
    return h


def check_fits(h: ParetoHierarchy, graph, minimize: str, budget_metric: str, path=None) -> None:
    """Refuse (LoadError) a hierarchy that was not built from ``graph``'s arcs under
    exactly these two metrics."""
    if (minimize, budget_metric) != tuple(h.metrics):
        raise LoadError(path, f"this hierarchy is for minimizing {h.metrics[0]!r} within a "
                              f"{h.metrics[1]!r} budget, not {minimize!r} within {budget_metric!r}")
    missing = [name for name in h.metrics if name not in graph.metrics]
    if missing:
        raise LoadError(path, f"this hierarchy needs the metric {missing[0]!r}, which the graph "
                              f"does not have ({', '.join(graph.metric_names)})")
    m = h.num_original_arcs
    if graph.num_nodes != h.num_nodes or graph.num_arcs != m:
        raise LoadError(path, f"this hierarchy belongs to a graph of {h.num_nodes:,} nodes and "
                              f"{m:,} arcs, not to {graph.num_nodes:,} / {graph.num_arcs:,}")
    same = (np.array_equal(h.arc_tail[:m], graph.tail) and
            np.array_equal(h.arc_head[:m], graph.head) and
            np.array_equal(h.arc_length[:m], graph.metrics[minimize]) and
            np.array_equal(h.arc_cost[:m], graph.metrics[budget_metric]))
    if not same or not h.serves(graph, minimize, budget_metric):
        raise LoadError(path, "this hierarchy was built on other arcs, lengths or costs than "
                              "this graph's")
