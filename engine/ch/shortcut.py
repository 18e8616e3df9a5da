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

from engine.ch import witness
from engine.ch.level_graph import (COUNT_BROKEN_BOUND, COUNT_FOUND, COUNT_SEEN, COUNT_WORK,
                                   LevelGraph, broken_paths, lex_order, pair_expansion)


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


def find_shortcuts(g: LevelGraph, contracted, out_first) -> Shortcuts:
    """The array formulation below is the specification; the GPU runs kernels."""
    if g.backend.is_gpu:
        return _shortcut_kernels(g, contracted, out_first)
    xp = g.xp
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
    return _merged(g, contracted, out_first, u, w, v, length, in_arc, out_arc, candidates)


def pair_order(g: LevelGraph, u, w, v, length):
    """(order, first): candidates sorted by (u, v, length, w); ``first`` marks each
    pair's cheapest (then lowest middle node) in that order."""
    xp, n = g.xp, g.n
    key = u * n + v                     # node ids are int32, so n * n < 2^62
    longest = int(length.max()) if length.size else 0
    if (longest + 1) * n < 2**62:       # (length, w) packs into one key too
        order = lex_order(xp, key, length * n + w)
    else:
        order = lex_order(xp, key, length, w)
    skey = key[order]
    first = xp.ones(skey.size, dtype=bool)
    if skey.size > 1:
        first[1:] = skey[1:] != skey[:-1]
    return order, first


def _merged(g: LevelGraph, contracted, out_first, u, w, v, length, in_arc, out_arc,
            candidates: int) -> Shortcuts:
    """One shortcut per (u, v): the cheapest candidate, then the lowest middle node,
    unless a longer detour witnesses it (witness.py; the cheapest candidate of a
    pair stands for all of them). Sorted by (u, v)."""
    xp, n = g.xp, g.n
    key = u * n + v
    order, first = pair_order(g, u, w, v, length)
    witnessed = witness.witnessed(g, contracted, out_first, u[order], v[order], length[order],
                                  first)
    pick = order[xp.flatnonzero(first & ~witnessed)]
    return Shortcuts(u[pick], v[pick], length[pick], w[pick], in_arc[pick], out_arc[pick],
                     key[pick], candidates)


def _shortcut_kernels(g: LevelGraph, contracted, out_first) -> Shortcuts:
    """The same shortcuts in the same order from kernels (engine/kernels/ch.cu):
    the broken paths without a 1- or 2-hop witness are appended in any order,
    sorted by pair key, each pair's winner picked in place, searched for a local
    witness and the survivors written out in key order; three waits for sizes."""
    backend, xp, n, m = g.backend, g.xp, g.n, g.num_arcs
    counters = g.counters
    # the arcs (u, w) into contracted nodes; each starts out-degree(w) broken paths at most
    work = xp.empty(m, dtype=xp.int64)
    backend.launch("ch", "ch_broken_path_bound", (g.head, out_first, contracted, m, counters,
                                                  work), threads=m)
    counts = backend.to_host(counters)
    capacity, items = int(counts[COUNT_BROKEN_BOUND]), int(counts[COUNT_WORK])
    key, length, w, in_arc, out_arc = xp.empty((5, capacity), dtype=xp.int64)
    backend.launch("ch", "ch_shortcuts", (g.tail, g.head, g.weight, out_first, contracted, work,
                                          items, n, capacity, counters, key, length, w, in_arc,
                                          out_arc), threads=32 * items)
    counts = backend.to_host(counters)
    rows, seen = int(counts[COUNT_FOUND]), int(counts[COUNT_SEEN])
    if rows == 0:
        empty = xp.zeros(0, dtype=xp.int64)
        return Shortcuts(*(empty,) * 7, seen)
    order = xp.argsort(key[:rows], kind="stable")
    skey, wlen, win, groups = xp.empty((4, rows), dtype=xp.int64)
    backend.launch("ch", "ch_pair_winner", (order, key, length, w, rows, n, skey, wlen, win,
                                            counters, groups), threads=rows)
    keep = witness.unwitnessed_rows(g, contracted, out_first, skey, wlen, groups, counters)
    rank = xp.cumsum(keep)
    k = int(backend.to_host(rank[rows]))
    out = xp.empty((7, k), dtype=xp.int64)
    backend.launch("ch", "ch_emit_shortcuts", (skey, win, keep, rank, rows, k, n, length, w,
                                               in_arc, out_arc, out), threads=rows)
    return Shortcuts(*out, seen)
