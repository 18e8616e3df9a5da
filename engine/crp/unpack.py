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

from engine.crp.local_search import FORBIDDEN, grow
from engine.crp.search import _pop, _push


@nb.njit(cache=True, _nrt=False)
def _cell_path(l, e, x, bound, head, arc_level, cells, cell_base, exit_first, exit_q, clique_first,
               entry_row, first_turn, to_q, turn_weight, shortcuts, dist, via, touched, heap):
    """Dijkstra from e towards x inside e's level-l cell, up to cost ``bound``: leaves
    dist and via (each arc's predecessor) for the caller to walk back from x, and
    returns how many arcs it touched (listed in ``touched``)."""
    hk, ha, pos = heap
    nt = 1
    touched[0] = e
    dist[e] = 0
    size = _push(hk, ha, pos, 0, 0, e)
    while size > 0:
        d, y, size = _pop(hk, ha, pos, size)
        if y == x:
            break
        if l == 0:
            lo, hi, base = first_turn[y], first_turn[y + 1], -1
        else:                               # y enters a subcell D of C: D's row from y
            cb = cell_base[l - 1] + cells[l - 1, head[y]]
            lo, hi = exit_first[cb], exit_first[cb + 1]
            base = clique_first[cb] + entry_row[l - 1, y] * (hi - lo) - lo
        for k in range(lo, hi):
            if base < 0:
                z, w = to_q[k], turn_weight[k]
            else:
                z, w = exit_q[k], shortcuts[base + k]
            if w == FORBIDDEN or (z != x and arc_level[z] > l):
                continue                    # no way, or it leaves C (crosses level l) before x
            nd = d + w
            if nd <= bound and nd < dist[z]:
                if dist[z] == FORBIDDEN:
                    touched[nt] = z
                    nt += 1
                dist[z] = nd
                via[z] = y
                size = _push(hk, ha, pos, size, nd, z)
    for i in range(size):
        pos[ha[i]] = -1
    return nt


@nb.njit(cache=True)
def unpack_steps(step_arc, step_level, head, arc_level, cells, cell_base, exit_first, exit_q,
                 clique_first, entry_row, exit_col, first_turn, to_q, turn_weight, shortcuts,
                 dist, via, touched, heap):
    """Arcs (query ids) of a search path given as arcs with the level of the step into
    each (-1: a turn; l: a level-l shortcut from the previous arc). ``dist`` is
    FORBIDDEN everywhere and is left so; via, touched and the heap are scratch."""
    out = np.empty(16, dtype=np.int64)
    n = 0
    stack = np.empty((64, 3), dtype=np.int64)     # shortcuts to unpack: (level, entry, exit)
    for i in range(step_arc.size):
        if i == 0 or step_level[i] < 0:
            out = grow(out, n + 1)
            out[n] = step_arc[i]
            n += 1
            continue
        stack[0, 0], stack[0, 1], stack[0, 2] = step_level[i], step_arc[i - 1], step_arc[i]
        top = 1
        while top > 0:
            top -= 1
            l, e, x = stack[top, 0], stack[top, 1], stack[top, 2]
            cb = cell_base[l] + cells[l, head[e]]
            nx = exit_first[cb + 1] - exit_first[cb]
            bound = shortcuts[clique_first[cb] + entry_row[l, e] * nx + exit_col[l, x]]
            nt = _cell_path(l, e, x, bound, head, arc_level, cells, cell_base, exit_first, exit_q,
                            clique_first, entry_row, first_turn, to_q, turn_weight, shortcuts,
                            dist, via, touched, heap)
            found = dist[x] == bound
            n0 = n
            y = x
            while found and y != e:                # the path backwards, x to e
                if l == 0:
                    out = grow(out, n + 1)
                    out[n] = y
                    n += 1
                else:
                    if top == stack.shape[0]:
                        bigger = np.empty((2 * top, 3), dtype=np.int64)
                        bigger[:top] = stack
                        stack = bigger
                    stack[top, 0], stack[top, 1], stack[top, 2] = l - 1, via[y], y
                    top += 1
                y = via[y]
            for k in range(nt):
                dist[touched[k]] = FORBIDDEN
            if not found:
                raise RuntimeError("a shortcut has no path in its cell")
            if l == 0:                              # arcs came backwards
                out[n0:n] = out[n0:n][::-1].copy()
            # shortcuts were pushed backwards, so they pop in path order
    return out[:n]
