"""SHORTCUT: the shortcuts that contracting U_l needs (2-hop witness search).

For each broken path (u, w, v) through a contracted w: a direct arc u->v no
longer than the path is a witness (1-hop); so is a path u->x->v (2-hop) that is
strictly shorter, or as short when x itself survives the level. Strictness
through contracted nodes is what makes contracting a whole independent set at
once safe: two equal broken paths through different contracted nodes cannot
witness each other. (The paper asks strictness of every 2-hop witness; road
graphs with many equal-length grid paths need the surviving-node case, or
shortcuts multiply.) Paths without a witness become shortcuts; identical
candidates are merged, keeping the cheapest. Missing a witness only adds a
harmless shortcut; a witness is never invented.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.ch import device, witness
from engine.ch.overlay import (COUNT_BROKEN_BOUND, COUNT_FOUND, COUNT_SEEN, COUNT_WORK,
                               Overlay, broken_paths, lex_order, pair_expansion)


@dataclass
class Shortcuts:
    tail: object
    head: object
    weight: object
    middle: object      # the contracted node w
    in_arc: object      # positions in G_l of (u, w) and (w, v)
    out_arc: object
    key: object         # tail * n + head, ascending
    candidates: int     # broken paths examined


def find_shortcuts(g: Overlay, contracted, out_first) -> Shortcuts:
    xp = g.xp
    if device.on_gpu(xp):
        return _shortcut_kernels(g, contracted, out_first)
    u, w, v, length, in_arc, out_arc = broken_paths(g, contracted, out_first)
    candidates = int(u.size)
    found, direct = g.lookup(u, v)
    need = ~(found & (direct <= length))
    u, w, v, length, in_arc, out_arc = (a[need] for a in (u, w, v, length, in_arc, out_arc))

    # 2-hop: every out-arc u->x of u (x not w, not v), then look up x->v.
    counts = out_first[u + 1] - out_first[u]
    row, first_hop = pair_expansion(xp, counts, out_first[u])
    x = g.head[first_hop]
    ok = (x != w[row]) & (x != v[row])
    row, first_hop, x = row[ok], first_hop[ok], x[ok]
    found2, second = g.lookup(x, v[row])
    via = g.weight[first_hop] + second
    # an equally long witness is safe when x survives this level: then u->x->v
    # stays in G_{l+1}; through a contracted x it must be strictly shorter
    shorter = found2 & ((via < length[row]) | ((via == length[row]) & ~contracted[x]))
    witnessed = xp.zeros(u.size, dtype=bool)
    witnessed[row[shorter]] = True
    keep = ~witnessed
    u, w, v, length, in_arc, out_arc = (a[keep] for a in (u, w, v, length, in_arc, out_arc))
    longest = int(length.max()) if length.size else 0
    return _merged(g, contracted, out_first, u, w, v, length, in_arc, out_arc, candidates, longest)


def _merged(g: Overlay, contracted, out_first, u, w, v, length, in_arc, out_arc,
            candidates: int, longest: int) -> Shortcuts:
    """One shortcut per (u, v): the cheapest candidate, then the lowest middle node,
    unless a longer detour witnesses it (witness.py; the cheapest candidate of a
    pair stands for all of them). Sorted by (u, v)."""
    xp, n = g.xp, g.n
    key = u * n + v                     # node ids are int32, so n * n < 2^62
    if (longest + 1) * n < 2**62:       # (length, w) packs into one key too
        order = lex_order(xp, key, length * n + w)
    else:
        order = lex_order(xp, key, length, w)
    skey, slen = key[order], length[order]
    first = xp.ones(skey.size, dtype=bool)
    if skey.size > 1:
        first[1:] = skey[1:] != skey[:-1]
    witnessed = witness.witnessed(g, contracted, out_first, u[order], v[order], slen, first)
    pick = order[xp.flatnonzero(first & ~witnessed)]
    return Shortcuts(u[pick], v[pick], length[pick], w[pick], in_arc[pick], out_arc[pick],
                     key[pick], candidates)


def _shortcut_kernels(g: Overlay, contracted, out_first) -> Shortcuts:
    """The same shortcuts in the same order from kernels (engine/kernels/ch.cu):
    the broken paths without a 1- or 2-hop witness are appended in any order,
    sorted by pair key, each pair's winner picked in place, searched for a local
    witness and the survivors written out in key order; three waits for sizes."""
    xp, n, m = g.xp, g.n, g.num_arcs
    counters = g.counters
    # the arcs (u, w) into contracted nodes; each starts out-degree(w) broken paths at most
    work = xp.empty(m, dtype=xp.int64)
    device.launch("ch_broken_path_bound", m, g.head, out_first, contracted, m, counters, work)
    counts = counters.get()
    capacity, items = int(counts[COUNT_BROKEN_BOUND]), int(counts[COUNT_WORK])
    key, length, w, in_arc, out_arc = xp.empty((5, capacity), dtype=xp.int64)
    device.launch("ch_shortcuts", 32 * items, g.tail, g.head, g.weight, out_first, contracted,
                  work, items, n, capacity, counters, key, length, w, in_arc, out_arc)
    counts = counters.get()
    rows, seen = int(counts[COUNT_FOUND]), int(counts[COUNT_SEEN])
    if rows == 0:
        empty = xp.zeros(0, dtype=xp.int64)
        return Shortcuts(*(empty,) * 7, seen)
    order = xp.argsort(key[:rows], kind="stable")
    skey, wlen, win, groups = xp.empty((4, rows), dtype=xp.int64)
    device.launch("ch_pair_winner", rows, order, key, length, w, rows, n, skey, wlen, win,
                  counters, groups)
    keep = witness.unwitnessed_rows(g, contracted, out_first, skey, wlen, groups)
    rank = xp.cumsum(keep)
    k = int(rank[rows].get())
    out = xp.empty((7, k), dtype=xp.int64)
    device.launch("ch_emit_shortcuts", rows, skey, win, keep, rank, rows, k, n, length, w,
                  in_arc, out_arc, out)
    return Shortcuts(*out, seen)
