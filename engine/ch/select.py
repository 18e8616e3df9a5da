"""SELECT: an independent set U_l of G_l among its least important nodes.

The C·|V_l| lowest-importance live nodes are candidates; two rounds of Luby's
maximal independent set over the undirected overlay pick U_l from them. Random
priorities come from a hash of (node, level), so numpy and cupy pick the same set.
"""
from __future__ import annotations

from engine.ch.overlay import Overlay


def node_hash(xp, ids, level: int):
    """A 64-bit mix of (id, level): the same bits on both backends."""
    x = ids.astype(xp.uint64) ^ xp.uint64((level * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
    x = (x ^ (x >> xp.uint64(33))) * xp.uint64(0xFF51AFD7ED558CCD)
    x = (x ^ (x >> xp.uint64(33))) * xp.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> xp.uint64(33))


def independent_set(g: Overlay, alive, importance, fraction: float, level: int, rounds: int = 2):
    """bool [n]: U_l."""
    xp = g.xp
    live = xp.flatnonzero(alive)
    want = max(1, int(fraction * live.size))
    # candidates: the `want` lowest importance values, ties broken by the hash
    tie = node_hash(xp, live, level).view(xp.int64)
    order = xp.lexsort(xp.stack([tie, importance[live]]))
    candidate = xp.zeros(g.n, dtype=bool)
    candidate[live[order[:want]]] = True
    # Luby: a candidate joins when its priority beats every candidate neighbour's.
    priority = node_hash(xp, xp.arange(g.n), level + 1_000_003)
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
