"""SELECT: an independent set U_l of G_l among its least important nodes.

The C·|V_l| lowest-importance live nodes are candidates; two rounds of Luby's
maximal independent set over the undirected overlay pick U_l from them. Random
priorities come from a hash of (node, level), so numpy and cupy pick the same set.
"""
from __future__ import annotations

from engine.ch import device
from engine.ch.overlay import Overlay

PRIORITY_SALT = 1_000_003   # Luby's priorities use another hash than the candidate ties


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
    if device.on_gpu(xp):
        tie = xp.empty(live.size, dtype=xp.uint64)
        device.launch("ch_hash", live.size, live, live.size, device.salt(level), tie)
    else:
        tie = node_hash(xp, live, level)
    # one sort of a packed key: the importance saturated to 32 bits, then the
    # tie's high 32 bits; the stable sort leaves equal keys in id order, so both
    # backends pick the same candidates
    key = xp.clip(importance[live], -2**31, 2**31 - 1) * 2**32 + \
        (tie >> xp.uint64(32)).astype(xp.int64)
    order = xp.argsort(key, kind="stable")
    candidate = xp.zeros(g.n, dtype=bool)
    candidate[live[order[:want]]] = True
    if device.on_gpu(xp):
        return _luby_kernels(g, candidate, level, rounds)
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


def _luby_kernels(g: Overlay, candidate, level: int, rounds: int):
    """The same rounds as above, four launches each (engine/kernels/ch.cu)."""
    xp, n, m = g.xp, g.n, g.num_arcs
    chosen, loses, winner, blocked = (xp.zeros(n, dtype=bool) for _ in range(4))
    salt = device.salt(level + PRIORITY_SALT)
    for _ in range(rounds):
        device.launch("ch_luby_lose", m, g.tail, g.head, m, salt, candidate, loses)
        device.launch("ch_luby_win", n, n, candidate, loses, winner, chosen)
        device.launch("ch_luby_block", m, g.tail, g.head, m, winner, blocked)
        device.launch("ch_luby_retire", n, n, candidate, winner, blocked)
    return chosen
