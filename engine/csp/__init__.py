"""Cost-budgeted (constrained) shortest paths: the least-length path whose cost stays
within a budget, exact (after Vine, "Accelerating Exact Constrained Shortest Paths on
GPUs", PVLDB 14(4), with bounds Vine lacks).

    bounds/      cpu.py: two reverse searches from the target, exact lower bounds and
                 the shortest and least-cost paths; gpu.py: the same as PHAST sweeps;
                 lagrangian.py (+ _gpu): LARAC's multiplier and the Lagrangian prune
    labeling/    cpu.py: label-setting in A* order with cost, length and dominance
                 pruning (Numba), Pareto mode; gpu.py: Vine's parallel labeling
    hierarchy/   bi-criteria contraction down to a core (build, contract, witness),
                 the layered graph the labeling searches on it, and its .rlb file
    query/       budgeted.py: CspQuery(graph, minimize, budget_metric).solve(s, t,
                 budget) -> CspResult (results.py); gpu.py: its device side
    reference.py the independent reference for the tests (no bounds, plain heap)
    query_sets.py  Vine's query sets Q1-Q3
"""
from engine.csp.query.budgeted import CspQuery
from engine.csp.query.results import CspResult, LabelMemoryExceeded, NoPathWithinBudget, ParetoPoint

__all__ = ["CspQuery", "CspResult", "LabelMemoryExceeded", "NoPathWithinBudget", "ParetoPoint"]
