"""Path unpacking (Numba): a shortcut of level l in cell c, from entry r to exit j,
becomes original arcs by a local Dijkstra in c's local graph, whose edges are turns
(level 0) or shortcuts of level l-1, unpacked the same way (an explicit stack).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from engine.crp.local_search import edge_to_tail, grow, local_path


@nb.njit(cache=True)
def unpack_steps(step_arc, step_level, head, cells, cell_base, entry_first, exit_first,
                 entry_row, exit_col, a2b, clique_first, vertex_first, vertex_arc, edge_first,
                 edge_to, edge_weight, turn_weight, shortcuts, to_arc):
    """Original arcs of a search path given as arcs with the level of the step into
    each (-1: a turn; l: a level-l shortcut from the previous arc)."""
    out = np.empty(16, dtype=np.int32)
    n = 0
    stack_l = np.empty(64, dtype=np.int64)
    stack_k = np.empty(64, dtype=np.int64)      # stack of shortcuts: (level, entry arc, exit arc)
    stack_x = np.empty(64, dtype=np.int64)
    for i in range(step_arc.size):
        if i == 0 or step_level[i] < 0:
            out = grow(out, n + 1)
            out[n] = step_arc[i]
            n += 1
            continue
        stack_l[0], stack_k[0], stack_x[0] = step_level[i], step_arc[i - 1], step_arc[i]
        top = 1
        while top > 0:
            top -= 1
            l, e, x = stack_l[top], stack_k[top], stack_x[top]
            c = cells[l, head[e]]
            cb = cell_base[l] + c
            nx = exit_first[cb + 1] - exit_first[cb]
            v0 = vertex_first[cb]
            nv = vertex_first[cb + 1] - v0
            src = entry_row[l, a2b[e]]
            dst = nv - nx + exit_col[l, a2b[x]]
            weights = turn_weight if l == 0 else shortcuts
            edges, cost = local_path(v0, nv, src, dst, edge_first, edge_to, edge_weight, weights)
            if edges.size == 0:
                raise RuntimeError("a shortcut has no path in its cell")
            if l == 0:
                for k in range(edges.size):
                    out = grow(out, n + 1)
                    out[n] = to_arc[edge_weight[edges[k]]]
                    n += 1
            else:
                stack_l = grow(stack_l, top + edges.size)
                stack_k = grow(stack_k, top + edges.size)
                stack_x = grow(stack_x, top + edges.size)
                for k in range(edges.size - 1, -1, -1):     # pushed in reverse: popped in order
                    ed = edges[k]
                    stack_l[top] = l - 1
                    stack_k[top] = vertex_arc[v0 + edge_to_tail(edge_first, v0, ed)]
                    stack_x[top] = vertex_arc[edge_to[ed]]
                    top += 1
    return out[:n]
