"""CU-CH's parameters and their checks, apart from the contraction code
(engine.ch.contraction) so that the command line and the window can read them without
loading Numba and SciPy."""
from __future__ import annotations

import math

import numpy as np

DEFAULT_K = 1025      # stop when fewer nodes remain; they form the core
DEFAULT_C = 0.3       # share of the live nodes that are candidates for U_l
MIN_C = 0.01          # below this a level contracts a handful of nodes: levels without end
MAX_LEVELS = 400      # expected levels above this are refused (the default C gives ~35 on NY)
MIS_SHARE = 0.5       # about half the candidates survive the independent-set rounds
CORE_BYTES_PER_PAIR = 32   # the core's APSP at its peak: float and int64 distances, predecessors


def check_parameters(num_nodes: int, K, C) -> None:
    """Refuse, naming the parameter and its range, a K or C that would exhaust memory or
    time. K > n is allowed and means "no levels": the whole graph is the core; either
    way the core's distance matrix (up to min(K, n) squared entries) must fit the memory
    budget. C must keep the expected number of levels, log(n/K) / -log(1 - C/2), sane."""
    from engine.io.limits import memory_budget
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)):
        raise ValueError(f"K (the core size) must be a whole number, not {K!r}")
    if K < 2:
        raise ValueError(f"K (the core size) must be at least 2, not {K}")
    core = min(int(K), max(num_nodes, 2))
    budget = memory_budget()
    if core * core * CORE_BYTES_PER_PAIR > budget:
        largest = math.isqrt(budget // CORE_BYTES_PER_PAIR)
        raise ValueError(f"K (the core size) = {K:,}: a core of {core:,} nodes needs a "
                         f"{core * core * CORE_BYTES_PER_PAIR / 2**30:,.1f} GiB distance matrix, "
                         f"more than the memory budget; K must be in 2..{largest:,}")
    if not (isinstance(C, (int, float, np.floating)) and MIN_C <= C <= 1.0):
        raise ValueError(f"C (the selection fraction) must be in [{MIN_C}, 1], not {C!r}")
    levels = math.log(max(num_nodes / K, 1.0)) / -math.log(1.0 - C * MIS_SHARE)
    if levels > MAX_LEVELS:
        raise ValueError(f"C (the selection fraction) = {C} would take about {levels:,.0f} levels "
                         f"to contract {num_nodes:,} nodes down to K = {K:,} (at most {MAX_LEVELS}); "
                         f"use a larger C or K")
