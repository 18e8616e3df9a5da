"""SELECT: an independent set U_l of G_l among its least important nodes.

The C·|V_l| lowest-importance live nodes are candidates; two rounds of Luby's
maximal independent set over the undirected level graph pick U_l from them. Random
priorities come from a hash of (node, level), so numpy and cupy pick the same set.
"""
from __future__ import annotations

import numpy as np

from engine.ch.level_graph import LevelGraph

PRIORITY_SALT = 1_000_003   # Luby's priorities use another hash than the candidate ties


def salt(level_key: int) -> np.uint64:
    """The per-level constant mixed into node_hash (the kernels take it ready-made)."""
    return np.uint64((level_key * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)


def node_hash(xp, ids, level: int):
    """A 64-bit mix of (id, level): the same bits on both backends."""
    x = ids.astype(xp.uint64) ^ xp.uint64(salt(level))
    x = (x ^ (x >> xp.uint64(33))) * xp.uint64(0xFF51AFD7ED558CCD)
    x = (x ^ (x >> xp.uint64(33))) * xp.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> xp.uint64(33))


def independent_set(g: LevelGraph, live_ids, importance, fraction: float, level: int,
                    rounds: int = 2):
    """bool [n]: U_l, chosen among ``live_ids`` (the nodes of G_l, ascending). The
    array formulation below is the specification; the GPU runs kernels."""
    want = max(1, int(fraction * live_ids.size))
    if g.backend.is_gpu:
        return _select_kernels(g, live_ids, importance, want, level, rounds)
    xp = g.xp
    # candidates: the `want` lowest importance values, ties broken by the hash:
    # one stable sort of a packed key, the importance clamped to 32 bits, then
    # the tie's high 32 bits; equal keys stay in id order on both backends
    tie = node_hash(xp, live_ids, level)
    key = xp.clip(importance[live_ids], -2**31, 2**31 - 1) * 2**32 + \
        (tie >> xp.uint64(32)).astype(xp.int64)
    order = xp.argsort(key, kind="stable")
    candidate = xp.zeros(g.n, dtype=bool)
    candidate[live_ids[order[:want]]] = True
    # Luby: a candidate joins when its priority beats every candidate neighbour's.
    priority = node_hash(xp, xp.arange(g.n), level + PRIORITY_SALT)
    chosen = xp.zeros(g.n, dtype=bool)
    a, b = xp.concatenate([g.tail, g.head]), xp.concatenate([g.head, g.tail])
    for _ in range(rounds):
        both = candidate[a] & candidate[b]
        loses = xp.zeros(g.n, dtype=bool)
        loses[a[both & (priority[b] < priority[a])]] = True
        winners = candidate & ~loses
        chosen |= winners
        # winners and their neighbours leave the candidate pool
        blocked = xp.zeros(g.n, dtype=bool)
        blocked[b[winners[a]]] = True
        candidate &= ~(winners | blocked)
    return chosen


def _select_kernels(g: LevelGraph, live_ids, importance, want: int, level: int, rounds: int):
    """The same set from kernels (engine/kernels/ch.cu): the live nodes' keys and
    one stable sort, then three launches per Luby round; ``g.counters`` counts
    the chosen nodes."""
    xp, n, m, live = g.xp, g.n, g.num_arcs, int(live_ids.size)
    launch = g.backend.launch
    key = xp.empty(live, dtype=xp.int64)
    launch("ch", "ch_select_key", (importance, live_ids, live, salt(level), key), threads=live)
    order = xp.argsort(key, kind="stable")
    state = xp.zeros((5, n), dtype=xp.uint8)
    candidate, chosen, blocked = (row.view(bool) for row in state[:3])
    loses, winner = state[3], state[4]
    launch("ch", "ch_candidates", (live_ids, order, want, candidate), threads=want)
    priority_salt = salt(level + PRIORITY_SALT)
    for round_ in range(1, rounds + 1):
        launch("ch", "ch_luby_lose", (g.tail, g.head, m, priority_salt, candidate, chosen,
                                      blocked, round_, loses), threads=m)
        launch("ch", "ch_luby_win", (n, candidate, loses, blocked, round_, winner, chosen,
                                     g.counters), threads=n)
        launch("ch", "ch_luby_block", (g.tail, g.head, m, winner, round_, blocked), threads=m)
    return chosen
