"""Cost-budgeted (constrained) shortest paths: the least-length path whose cost stays
within a budget, exact (after Vine, "Accelerating Exact Constrained Shortest Paths on
GPUs", PVLDB 14(4), with bounds Vine lacks).

    bounds.py        two reverse searches from the target: exact lower bounds and the
                     shortest and least-cost paths
    label_search.py  label-setting in A* order with cost, length and dominance pruning
                     (Numba); Pareto mode
    lagrangian.py    LARAC's multiplier and the Lagrangian prune for hard queries
    pareto_hierarchy.py  bi-criteria contraction down to a core (pareto_contract.py: the
                     rounds; pareto_witness.py: one node's shortcuts and witnesses)
    layered.py       the graph the labeling searches on it: up, across the core, down
    query.py         CspQuery(graph, minimize, budget_metric).solve(s, t, budget) -> CspResult
    reference.py     the independent reference for the tests (no bounds, plain heap)
    query_sets.py    Vine's query sets Q1-Q3
"""
from engine.csp.query.budgeted import (CspQuery, CspResult, LabelMemoryExceeded, NoPathWithinBudget,
                              ParetoPoint)

__all__ = ["CspQuery", "CspResult", "LabelMemoryExceeded", "NoPathWithinBudget", "ParetoPoint"]
