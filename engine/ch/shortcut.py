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
from engine.ch.overlay import Overlay, broken_paths, lex_order, pair_expansion


@dataclass
class Shortcuts:
    tail: object
    head: object
    weight: object
    middle: object      # the contracted node w
    in_arc: object      # positions in G_l of (u, w) and (w, v)
    out_arc: object
    candidates: int     # broken paths examined


def find_shortcuts(g: Overlay, contracted, out_first) -> Shortcuts:
    xp = g.xp
    if device.on_gpu(xp):
        return _merged(g, contracted, out_first, *_unwitnessed_kernel(g, contracted, out_first))
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
    # node ids are < n, so (u, v) and (length, w) pack into int64 keys when they fit
    if n * n < 2**62 and (longest + 1) * n < 2**62:
        order = lex_order(xp, u * n + v, length * n + w)
    else:
        order = lex_order(xp, u, v, length, w)
    su, sv, slen = u[order], v[order], length[order]
    first = xp.ones(su.size, dtype=bool)
    if su.size > 1:
        first[1:] = (su[1:] != su[:-1]) | (sv[1:] != sv[:-1])
    witnessed = witness.witnessed(g, contracted, out_first, su, sv, slen, first)
    pick = order[xp.flatnonzero(first & ~witnessed)]
    return Shortcuts(u[pick], v[pick], length[pick], w[pick], in_arc[pick], out_arc[pick],
                     candidates)


def _unwitnessed_kernel(g: Overlay, contracted, out_first):
    """The broken paths without a witness, from one fused kernel (engine/kernels/ch.cu).

    They come in the order threads append them; ``_merged`` sorts them by a total
    order, so the result equals the NumPy formulation's."""
    xp, m = g.xp, g.num_arcs
    # every arc (u, w) into a contracted w starts out-degree(w) broken paths at most
    bound = xp.zeros(1, dtype=xp.uint64)
    device.launch("ch_broken_path_bound", m, g.head, out_first, contracted, m, bound)
    capacity = int(bound.get()[0])
    columns = [xp.empty(capacity, dtype=xp.int64) for _ in range(6)]
    counters = xp.zeros(3, dtype=xp.uint64)
    device.launch("ch_shortcuts", 32 * m, g.tail, g.head, g.weight, out_first, contracted, m,
                  capacity, counters, *columns)
    found, seen, longest = (int(c) for c in counters.get())
    u, v, length, w, in_arc, out_arc = (c[:found] for c in columns)
    return u, w, v, length, in_arc, out_arc, seen, longest
