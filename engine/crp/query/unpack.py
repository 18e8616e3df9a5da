"""Path unpacking (Numba), in the query's arc numbering: a level-l shortcut of cell C
from entry e to exit x becomes the cheapest arc path e -> x that stays inside C, found
by a Dijkstra over C's level-(l-1) shortcut rows (or its turns at level 0), and
unpacked the same way one level down (an explicit stack).

The local search reads shortcut rows contiguously, as the query does, and ignores
anything costlier than the shortcut itself, whose cost customization already knows.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from engine.core.arrays import grow
from engine.crp.query.heap import forget, pop, push_or_decrease
from engine.crp.query.search import free_level
from engine.crp.metric import FORBIDDEN


@nb.njit(cache=True, _nrt=False)
def _cell_path(l, e, x, bound, space, shortcuts, urec, touched, heap):
    """Dijkstra from e towards x inside e's level-l cell, up to cost ``bound``: leaves
    urec[:, 0] (cost) and urec[:, 1] (each arc's predecessor) for the caller to walk
    back from x, and returns how many arcs it touched (listed in ``touched``). Since
    ``bound`` is the shortcut's cost, hence the optimum, it stops once x is reached at
    that cost: the arcs before x on its chain were all settled already."""
    first_turn, to_q, turn_weight, crossing, head_rec, exit_first, exit_q = space
    leaves = crossing[l]                    # query ids below it leave C
    nt = 1
    touched[0] = e
    urec[e, 0] = 0
    size = push_or_decrease(heap, urec, 2, 0, 0, e)
    while size > 0 and urec[x, 0] != bound:  # x reached at its known cost: done
        d, y, size = pop(heap, urec, 2, size)
        if l == 0:
            for k in range(first_turn[y], first_turn[y + 1]):
                size, nt = _reach(to_q[k], d + turn_weight[k], y, x, leaves, bound, urec,
                                  touched, nt, heap, size)
        else:                               # y enters a subcell D of C: D's row from y
            cb = head_rec[y, l - 1, 0]
            lo, row = exit_first[cb], head_rec[y, l - 1, 1]
            for k in range(exit_first[cb + 1] - lo):
                size, nt = _reach(exit_q[lo + k], d + shortcuts[row + k], y, x, leaves, bound,
                                  urec, touched, nt, heap, size)
    forget(heap, urec, 2, size)
    return nt


@nb.njit(cache=True, _nrt=False, inline="always")
def _reach(z, nd, y, x, leaves, bound, urec, touched, nt, heap, size):
    """Arc z at cost nd from y, unless that costs more than the shortcut (so also when
    forbidden: bound < FORBIDDEN) or z leaves the cell before x."""
    if nd <= bound and nd < urec[z, 0] and (z >= leaves or z == x):
        if urec[z, 0] == FORBIDDEN:
            touched[nt] = z
            nt += 1
        urec[z, 0] = nd
        urec[z, 1] = y
        size = push_or_decrease(heap, urec, 2, size, nd, z)
    return size, nt


@nb.njit(cache=True, _nrt=False)
def _reverse(a, lo, hi):
    hi -= 1
    while lo < hi:
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1
        hi -= 1


@nb.njit(cache=True)
def search_steps(meet, rec, levels_of):
    """The search path through ``meet`` as arcs with the level of the step into each
    (-1: a turn or the first arc; l: a level-l shortcut from the previous arc).
    A step's level is the one its parent was settled at (search.free_level);
    levels_of: (arc_level, query_level, head_rec, tail_rec, cs, ct) of the search."""
    arc_level, query_level, head_rec, tail_rec, cs, ct = levels_of
    n = 0
    x = meet
    while x >= 0:
        n += 1
        x = rec[x, 0]
    m = n
    x = meet
    while rec[x, 1] >= 0:
        m += 1
        x = rec[x, 1]
    arcs = np.empty(m, dtype=np.int64)
    levels = np.empty(m, dtype=np.int64)
    x = meet
    for i in range(n - 1, -1, -1):
        p = rec[x, 0]
        arcs[i] = x
        levels[i] = -1 if p < 0 else free_level(p, arc_level, query_level, head_rec, cs, ct)
        x = p
    x = meet
    for i in range(n, m):
        x = rec[x, 1]                       # the step from the previous arc to x
        arcs[i] = x
        levels[i] = free_level(x, arc_level, query_level, tail_rec, cs, ct)
    return arcs, levels


@nb.njit(cache=True)
def unpack_path(meet, rec, levels_of, space, shortcuts, clique_first, urec, touched, heap):
    """Arcs (query ids) of the search path through ``meet`` (rec: the search's
    records). ``urec`` ([m, 4]: cost, predecessor, heap slot) is FORBIDDEN, -, -1
    everywhere and is left so; touched and the heap are scratch."""
    step_arc, step_level = search_steps(meet, rec, levels_of)
    tail_rec = levels_of[3]
    head_rec = space[4]
    out = np.empty(1024, dtype=np.int64)
    n = 0
    stack = np.empty((64, 3), dtype=np.int64)     # shortcuts to unpack: (level, entry, exit)
    for i in range(step_arc.size):
        if i == 0 or step_level[i] < 0:
            if n == out.size:                       # grow() only then: each call of an
                out = grow(out, n + 1)              # array function costs refcounting
            out[n] = step_arc[i]
            n += 1
            continue
        stack[0, 0], stack[0, 1], stack[0, 2] = step_level[i], step_arc[i - 1], step_arc[i]
        top = 1
        while top > 0:
            top -= 1
            l, e, x = stack[top, 0], stack[top, 1], stack[top, 2]
            # e's row and x's column of their cell's matrix meet at the shortcut
            bound = shortcuts[head_rec[e, l, 1] + tail_rec[x, l, 1] - clique_first[head_rec[e, l, 0]]]
            nt = _cell_path(l, e, x, bound, space, shortcuts, urec, touched, heap)
            found = urec[x, 0] == bound
            n0 = n
            y = x
            while found and y != e:                # the path backwards, x to e
                if l == 0:
                    if n == out.size:
                        out = grow(out, n + 1)
                    out[n] = y
                    n += 1
                else:
                    if top == stack.shape[0]:
                        bigger = np.empty((2 * top, 3), dtype=np.int64)
                        bigger[:top] = stack
                        stack = bigger
                    stack[top, 0], stack[top, 1], stack[top, 2] = l - 1, urec[y, 1], y
                    top += 1
                y = urec[y, 1]
            for k in range(nt):
                urec[touched[k], 0] = FORBIDDEN
            if not found:
                raise RuntimeError("a shortcut has no path in its cell")
            if l == 0:                              # arcs came backwards
                _reverse(out, n0, n)
            # shortcuts were pushed backwards, so they pop in path order
    return out[:n]
