"""Adaptive parallelism (Vine): how many frontier labels the next iteration expands.

Vine bounds K_t so that the frontier after the iteration fits the label memory
spread over the iterations left:

    (N - K)(1 - theta) + K * growth <= MaxFtr = free labels / iterations left
    =>  K <= (MaxFtr - N + theta N) / (growth - 1 + theta)

where ``growth`` is the number of new frontier labels per expanded label and
``theta`` the share of the labels left unexpanded that the iteration drops. Both
are forecast by an AR(6) model fitted by least squares to the last 6 equations of
their series (ridge-regularised, as 6 equations rarely pin 6 coefficients). The
iterations left: Vine divides the budget by the least arc cost; on road graphs
(arcs of cost 1) that pins K_t at its floor, so we divide the key range still to
cover (the incumbent minus the least frontier key) by the mean arc length.

These are the CPU twins of ``ar_forecast`` and ``next_k`` in engine/kernels/csp.cu
(the GPU tests compare them on the recorded series).
"""
from __future__ import annotations

import numpy as np

AR_P = 6


def ar_forecast(series: np.ndarray) -> float:
    """The next value of ``series`` by AR(6); fewer than 12 values: the last one."""
    x = np.asarray(series, dtype=np.float64)
    t = x.size
    if t < 2 * AR_P:
        return float(x[-1]) if t else 0.0
    rows = np.array([x[e - AR_P:e][::-1] for e in range(t - AR_P, t)])    # lags 1..6
    y = x[t - AR_P:t]
    a_mat = rows.T @ rows
    ridge = 1e-3 * np.trace(a_mat) / AR_P + 1e-12
    coef = np.linalg.solve(a_mat + ridge * np.eye(AR_P), rows.T @ y)
    return float(coef @ x[t - AR_P:][::-1])


def next_k(growth: float, theta: float, frontier: int, free_labels: int, iterations_left: float,
           k_min: int, k_max: int) -> int:
    """Vine's bound on K_t, clamped to [k_min, k_max]."""
    growth = min(max(growth, 0.0), 64.0)
    theta = min(max(theta, 0.0), 1.0)
    max_frontier = free_labels / max(iterations_left, 1.0)
    room = max_frontier - frontier * (1.0 - theta)
    denom = growth - 1.0 + theta
    k = room / denom if denom > 1e-9 else float(k_max)
    if not k >= k_min:
        k = float(k_min)
    return int(min(k, float(k_max)))
