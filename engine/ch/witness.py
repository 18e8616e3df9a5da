"""Local witness search: drops the shortcuts that a short detour makes unnecessary.

The paper's 2-hop test (shortcut.py) misses every witness of three hops or more.
On grid-like road networks those are common (around a block), so the level graphs
fill with needless shortcuts, their degree climbs, and on large graphs contraction
stalls (a generated 2 M-node network never finished). Classic CH bounds a
Dijkstra search per source instead; this is that search, small and fixed-size.

For every source u of the shortcut candidates left by the 2-hop test: a Dijkstra
from u over the nodes of G_l that survive this level, bounded by the longest
candidate from u, by SETTLE_LIMIT settled nodes and by TABLE_SIZE labelled
nodes. A candidate u->v of length L is dropped when the search reached v at a
distance <= L. Every label is the length of a real path that avoids U_l, so a
witness is never invented (limits only make it miss some); a witness through
surviving nodes may be as long as the path it replaces (the argument in
shortcut.py). Ties are taken by (distance, node id) and arcs in CSR order, so
the Numba twin and the CUDA kernel (engine/kernels/ch.cu, ch_witness) label the
same nodes and drop the same candidates.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.ch.level_graph import COUNT_GROUPS

SETTLE_LIMIT = 64      # nodes settled per source
TABLE_SIZE = 256       # nodes labelled per source (a label beyond it is not kept)
HASH_SIZE = 512        # open-addressing index of the labels, a power of two >= 2 * TABLE_SIZE
GPU_WARPS = 4          # searches per block on the GPU (WITNESS_WARPS in ch.cu)
MAX_GPU_WARPS = 16384  # searches in flight on the GPU


def witnessed(g, contracted, out_first, u, v, length, asked):
    """bool per candidate (u, v, length), candidates sorted by u: a witness exists.
    Only rows with ``asked`` set are searched for and bound their source's search.
    The CPU runs the Numba specification (_search); the GPU the same steps in
    ch_witness (contraction's GPU pipeline calls unwitnessed_rows directly, on
    rows its kernels already laid out)."""
    xp = g.xp
    if u.size == 0:
        return xp.zeros(0, dtype=bool)
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, dtype=bool), u[1:] != u[:-1]]))
    if g.backend.is_gpu:
        counters = xp.zeros(8, dtype=xp.uint64)
        counters[COUNT_GROUPS] = starts.size
        keep = unwitnessed_rows(g, contracted, out_first, u * g.n + v,
                                xp.where(asked, length, -1), starts, counters)
        return asked & (keep[1:] == 0)
    group_first = xp.concatenate([starts, xp.asarray([u.size], dtype=starts.dtype)])
    out = xp.zeros(u.size, dtype=bool)
    _search_all(g.head, g.weight, out_first, contracted, group_first, u, v, length, asked,
                SETTLE_LIMIT, TABLE_SIZE, HASH_SIZE, out)
    return out


def unwitnessed_rows(g, contracted, out_first, skey, wlen, groups, counters):
    """The searches on the GPU (ch_witness), for rows sorted by key u * n + v
    where ``wlen >= 0`` marks the asked rows and ``groups`` lists the first row of
    each source (as many as counters[COUNT_GROUPS] says, on the device): int64
    [rows + 1], 1 at [1 + r] when row r is asked and has no witness, so a cumsum
    ranks the survivors."""
    # the kernel's shared-memory tables are sized WITNESS_TABLE and WITNESS_HASH
    if TABLE_SIZE > 256 or HASH_SIZE > 512:
        raise ValueError("TABLE_SIZE / HASH_SIZE exceed the sizes ch_witness is compiled for")
    rows = int(skey.size)
    keep = g.xp.empty(rows + 1, dtype=g.xp.int64)
    # the number of sources is known on the device only: enough warps for all
    # of them at once, or as many as fill the GPU, looping
    warps = min(rows, MAX_GPU_WARPS)
    g.backend.launch("ch", "ch_witness", (g.head, g.weight, out_first, contracted, skey, wlen,
                                          rows, g.n, groups, counters, SETTLE_LIMIT, TABLE_SIZE,
                                          HASH_SIZE, keep),
                     threads=32 * warps, block=32 * GPU_WARPS)
    return keep


@numba.njit(cache=True)
def _search_all(head, weight, out_first, contracted, group_first, u, v, length, asked,
                settle_limit, table_size, hash_size, out):
    label_node = np.empty(table_size, dtype=np.int64)
    label_dist = np.empty(table_size, dtype=np.int64)
    slots = np.empty(hash_size, dtype=np.int32)
    for grp in range(group_first.size - 1):
        _search(head, weight, out_first, contracted, group_first[grp], group_first[grp + 1],
                u, v, length, asked, settle_limit, table_size, hash_size,
                label_node, label_dist, slots, out)


@numba.njit(cache=True)
def _slot(slots, label_node, hash_size, y):
    """Where node y's label index is (or belongs) in the open-addressing index."""
    s = ((y * 0x9E3779B1) >> 7) & (hash_size - 1)
    while slots[s] >= 0 and label_node[slots[s]] != y:
        s = (s + 1) & (hash_size - 1)
    return s


@numba.njit(cache=True)
def _search(head, weight, out_first, contracted, r0, r1, u, v, length, asked,
            settle_limit, table_size, hash_size, label_node, label_dist, slots, out):
    """One source's search; the same steps as ch_witness in engine/kernels/ch.cu.

    Labels live in a list in insertion order, indexed by ``slots``; a settled
    label has its distance stored negated minus one (distances are >= 0)."""
    source = u[r0]
    bound = 0
    for r in range(r0, r1):
        if asked[r]:
            bound = max(bound, length[r])
    slots[:] = -1
    label_node[0] = source
    label_dist[0] = 0
    slots[_slot(slots, label_node, hash_size, source)] = 0
    labels = 1
    for _ in range(settle_limit):
        best = -1
        for i in range(labels):        # the unsettled label of least (distance, node)
            d = label_dist[i]
            if d >= 0 and (best < 0 or d < label_dist[best]
                           or (d == label_dist[best] and label_node[i] < label_node[best])):
                best = i
        if best < 0 or label_dist[best] > bound:
            break
        x = label_node[best]
        dx = label_dist[best]
        label_dist[best] = -dx - 1
        for a in range(out_first[x], out_first[x + 1]):
            y = head[a]
            if contracted[y]:
                continue
            dy = dx + weight[a]
            if dy > bound:
                continue
            s = _slot(slots, label_node, hash_size, y)
            i = slots[s]
            if i >= 0:
                if label_dist[i] >= 0 and dy < label_dist[i]:
                    label_dist[i] = dy
            elif labels < table_size:
                label_node[labels] = y
                label_dist[labels] = dy
                slots[s] = labels
                labels += 1
    for r in range(r0, r1):
        if not asked[r]:
            continue
        i = slots[_slot(slots, label_node, hash_size, v[r])]
        if i >= 0:
            d = label_dist[i]
            if d < 0:
                d = -d - 1
            out[r] = d <= length[r]
