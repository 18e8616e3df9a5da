"""Path unpacking (Numba), in the query's arc numbering: a level-l shortcut of cell C
from entry e to exit x becomes the cheapest arc path e -> x that stays inside C, as
C's level-(l-1) shortcuts, each unpacked the same way one level down (an explicit
stack), down to turns.

Where the metric kept its unpacking hints (engine.crp.customization.trees: the CPU
twin's shortest-path tree of every cell entry, levels >= 1), a level-l shortcut's
steps are read by walking predecessors from x back to e, one load per step.
Level 0's microinstructions keep no tree: its small cells are searched on their own
local graph (the overlay's, turns as edges) with scratch arrays of a cell's size.
Metrics without hints (the GPU customizer's) search above level 0 too, by a
bidirectional Dijkstra over C's level-(l-1) matrices: their rows forward from e, their
columns backward from x (the query's column-major copy). Both searches ignore anything
costlier than the shortcut itself, whose cost customization already knows, and stop
on reaching x at that cost (the bidirectional one: on an arc both sides reach at
costs that sum to it).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from engine.core.arrays import grow
from engine.core.heaps import pop as pop_plain, push as push_plain
from engine.crp.customization.trees import tree_layout
from engine.core.heaps import (
    packed_forget as forget, packed_pop as pop, packed_push_or_decrease as push_or_decrease,
)
from engine.crp.query.search import _column, free_level
from engine.crp.metric import FORBIDDEN


@nb.njit(cache=True, _nrt=False)
def _cell_path(l, e, x, bound, space, shortcuts, urec, touched, heap, back):
    """Bidirectional Dijkstra between e and x inside e's level-l cell C (l >= 1), up to
    cost ``bound``: forward from e over C's subcells' rows (urec: cost, predecessor,
    heap slot), backward from x over their columns (back's brec: cost, successor, heap
    slot; the query's column-major copy, search._column). ``bound`` is the shortcut's
    cost, hence the optimum, so it stops at the first arc both reach at costs that sum
    to it: (that arc or -1, arcs listed in ``touched``, in back's list)."""
    crossing, head_rec, exit_first, exit_q = space[3], space[4], space[5], space[6]
    tail_rec, entry_first, entry_q, columns, brec, btouched, bheap = back
    leaves = crossing[l]                    # query ids below it leave C
    touched[0], btouched[0] = e, x
    urec[e, 0] = brec[x, 0] = 0
    size = push_or_decrease(heap, urec, 2, 0, 0, e)
    bsize = push_or_decrease(bheap, brec, 2, 0, 0, x)
    nt = nbt = 1
    meet = -1
    while meet < 0:
        kf = heap[0] >> 32 if size > 0 else FORBIDDEN
        kb = bheap[0] >> 32 if bsize > 0 else FORBIDDEN
        if kf + kb > bound:                 # no arc left can meet at the optimum
            break
        if kf <= kb:                        # y enters a subcell D of C: D's row from y
            d, y, size = pop(heap, urec, 2, size)
            cb = head_rec[y, l - 1, 0]
            size, nt, meet = _step(y, d, shortcuts, head_rec[y, l - 1, 1], exit_first[cb],
                                   exit_first[cb + 1], exit_q, x, leaves, bound, urec, brec,
                                   touched, nt, heap, size)
        else:                               # z leaves a subcell D of C: D's column into z
            d, z, bsize = pop(bheap, brec, 2, bsize)
            cb = tail_rec[z, l - 1, 0]
            mat, base = _column(cb, tail_rec[z, l - 1, 1], shortcuts, entry_first, exit_first,
                                columns)
            bsize, nbt, meet = _step(z, d, mat, base, entry_first[cb], entry_first[cb + 1],
                                     entry_q, e, leaves, bound, brec, urec, btouched, nbt,
                                     bheap, bsize)
    forget(heap, urec, 2, size)
    forget(bheap, brec, 2, bsize)
    return meet, nt, nbt


@nb.njit(cache=True, _nrt=False, inline="always")
def _step(y, d, mat, base, lo, hi, ends, far, leaves, bound, own, other, touched, nt, heap,
          size):
    """One side of _cell_path expands arc y (cost d) over a subcell's row or column
    (mat[base + k] to or from ends[lo + k]): each end reached at no more than ``bound``
    that stays in C (or is the far end) is recorded (own: cost, y, heap slot); the
    first whose cost and the other side's sum to ``bound`` is returned as the meeting
    (-1: none yet). (size, nt, meeting)."""
    for k in range(hi - lo):
        z, nd = ends[lo + k], d + mat[base + k]
        if nd <= bound and nd < own[z, 0] and (z >= leaves or z == far):
            if own[z, 0] == FORBIDDEN:
                touched[nt] = z
                nt += 1
            own[z, 0] = nd
            own[z, 1] = y
            size = push_or_decrease(heap, own, 2, size, nd, z)
            if other[z, 0] != FORBIDDEN and nd + other[z, 0] == bound:
                return size, nt, z
    return size, nt, -1


@nb.njit(cache=True)
def _push_path(l, e, x, meet, urec, brec, stack, top):
    """Push the level-(l-1) steps of the path e -> meet -> x (urec's predecessors up to
    meet, brec's successors after it), last step first, so they pop in path order."""
    first = top
    y = meet
    while y != x:                           # meet -> x in order, then turned over
        stack, top = _push(stack, top, l - 1, y, brec[y, 1])
        y = brec[y, 1]
    lo, hi = first, top - 1
    while lo < hi:
        for c in range(3):
            stack[lo, c], stack[hi, c] = stack[hi, c], stack[lo, c]
        lo += 1
        hi -= 1
    y = meet
    while y != e:                           # meet back to e: already last first
        stack, top = _push(stack, top, l - 1, urec[y, 1], y)
        y = urec[y, 1]
    return stack, top


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
    A step's level is the one its parent was settled at (search.free_level), or the
    top level for a step of staged.py's A* (stamped with the query's number: it crosses
    the source's and the target's top cells by their top rows too);
    levels_of: (arc_level, query_level, head_rec, tail_rec, cs, ct, the stamps, the
    query's number, the top level) of the search."""
    arc_level, query_level, head_rec, tail_rec, cs, ct, stamps, query, top = levels_of
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
        if p < 0:
            levels[i] = -1
        elif x < stamps.size and stamps[x] == query:
            levels[i] = top
        else:
            levels[i] = free_level(p, arc_level, query_level, head_rec, cs, ct)
        x = p
    x = meet
    for i in range(n, m):
        x = rec[x, 1]                       # the step from the previous arc to x
        arcs[i] = x
        levels[i] = free_level(x, arc_level, query_level, tail_rec, cs, ct)
    return arcs, levels


def bottom_space(overlay, space):
    """Level 0's local graph (engine.crp.partition.overlay), its vertices as query ids
    and its edges' turns in the query's turn order, for _bottom_path; and its scratch
    arrays (a cell's vertices, a cell's edges + 1)."""
    t = overlay.levels[0] if overlay.levels else None
    if t is None:
        z = np.zeros(1, np.int64)
        return (z, z.astype(np.int32), z, z.astype(np.int32), z), (z, z, z, z)
    nv = int(np.diff(t.vertex_first).max()) if t.num_cells else 1
    ne = int(np.diff(t.edge_first[t.vertex_first]).max()) if t.num_cells else 1
    in_q = np.empty(space.turn_order.size, np.int32)      # each turn's query-order index:
    in_q[space.turn_order] = np.arange(space.turn_order.size, dtype=np.int32)   # a cell's
    graph = (t.vertex_first.astype(np.int64), space.q_of_arc[t.vertex_arc], t.edge_first,
             t.edge_to, in_q[t.edge_weight])           # turn weights then lie together
    return graph, (np.empty(nv, np.int64), np.empty(nv, np.int64), np.empty(ne + 1, np.int64),
                   np.empty(ne + 1, np.int64))


def tree_space(overlay, space):
    """The metric-independent half of the hints, by flat cell index (flat.py): where
    each cell's trees start (``first``) and its local vertices as query ids
    (``vertex_q`` from ``vertex_first``); levels >= 1 only."""
    layout = tree_layout(overlay)
    size = space.entry_first.size
    first, vertex_first = np.zeros(size, np.int64), np.zeros(size, np.int64)
    parts, total = [], 0
    for topo in overlay.levels[1:]:
        lo = int(space.cell_base[topo.level])
        first[lo:lo + topo.num_cells + 1] = layout.first[topo.level]
        vertex_first[lo:lo + topo.num_cells + 1] = topo.vertex_first + total
        parts.append(space.q_of_arc[topo.vertex_arc])
        total += topo.vertex_arc.size
    vertex_q = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    return first, vertex_first, vertex_q.astype(np.int32), space.entry_first, layout.dtype


@nb.njit(cache=True, _nrt=False)
def _bottom_path(e, x, bound, head_rec, tail_rec, clique_first, exit_first, entry_first,
                 bottom, turn_weight, scratch, out, n):
    """Level-0 shortcut e -> x of cost ``bound``: a Dijkstra on its cell's local graph
    from e until x is reached at that cost; writes the arcs after e up to x (query
    ids, backwards) to out[n:] and returns the new n (out has room: callers grow it)."""
    vertex_first, vertex_q, edge_first, edge_to, edge_weight = bottom
    dist, par, hd, hv = scratch
    cb = head_rec[e, 0, 0]
    nx = exit_first[cb + 1] - exit_first[cb]
    r = (head_rec[e, 0, 1] - clique_first[cb]) // nx
    v0 = vertex_first[cb]
    nv = vertex_first[cb + 1] - v0
    vx = nv - nx + tail_rec[x, 0, 1] - clique_first[cb]
    for i in range(nv):
        dist[i] = FORBIDDEN
    dist[r] = 0
    size = push_plain(hd, hv, 0, 0, r)
    while size > 0 and dist[vx] != bound:
        d, u, size = pop_plain(hd, hv, size)
        if d > dist[u]:
            continue
        for k in range(edge_first[v0 + u], edge_first[v0 + u + 1]):
            nd = d + turn_weight[edge_weight[k]]
            y = edge_to[k] - v0
            if nd <= bound and nd < dist[y]:
                dist[y] = nd
                par[y] = u
                size = push_plain(hd, hv, size, nd, y)
    if dist[vx] != bound:
        raise RuntimeError("a shortcut has no path in its cell")
    y = vx
    while y != r:
        out[n] = vertex_q[v0 + y]
        n += 1
        y = par[y]
    return n


@nb.njit(cache=True)
def _push(stack, top, l, e, x):
    if top == stack.shape[0]:
        bigger = np.empty((2 * top, 3), dtype=np.int64)
        bigger[:top] = stack
        stack = bigger
    stack[top, 0], stack[top, 1], stack[top, 2] = l, e, x
    return stack, top + 1


@nb.njit(cache=True)
def _tree_steps(l, e, x, head_rec, tail_rec, clique_first, exit_first, hints, stack, top):
    """Push the level-(l-1) steps of shortcut e -> x (level l) read from e's tree,
    last step first, so they pop in path order."""
    first, vertex_first, vertex_q, entry_first, trees = hints[:5]
    cb = head_rec[e, l, 0]
    nx = exit_first[cb + 1] - exit_first[cb]
    ne = entry_first[cb + 1] - entry_first[cb]
    r = (head_rec[e, l, 1] - clique_first[cb]) // nx
    vb = vertex_first[cb]
    nv = vertex_first[cb + 1] - vb
    v = nv - nx + tail_rec[x, l, 1] - clique_first[cb]
    row = first[cb] + r * (nv - ne) - ne
    for _ in range(nv):
        if v == r:
            return stack, top
        u = trees[row + v]
        stack, top = _push(stack, top, l - 1, vertex_q[vb + u], vertex_q[vb + v])
        v = u
    raise RuntimeError("a shortcut has no path in its cell's tree")


@nb.njit(cache=True, nogil=True)
def unpack_steps(step_arc, step_level, lo, hi, tail_rec, space, shortcuts, clique_first, urec,
                 touched, heap, hints, back):
    """Arcs (query ids) of the search path's steps lo..hi-1 (search_steps: step i > 0
    of level l >= 0 is a level-l shortcut from arc i-1 to arc i, whose arcs after arc
    i-1 it gives; else arc i itself), so that runs of steps unpack apart and join in
    order (lanes.py). ``urec`` ([crossing[0], 4]: cost, predecessor, heap slot) is
    FORBIDDEN, -, -1 everywhere and is left so; touched and the heap are scratch.
    ``hints``: the trees (tree_space and the metric's values; none: search above
    level 0 too), level 0's local graph, the turn weights it indexes and its scratch
    (bottom_space). ``back``: what the searches above level 0 need backwards
    (tail_rec, entry_first, entry_q, the query's columns with the caller's stamp,
    and brec, its list and heap: back_scratch)."""
    head_rec, exit_first = space[4], space[5]
    entry_first, trees, bottom, turn_weight, scratch = hints[3:]
    out = np.empty(1024, dtype=np.int64)
    n = 0
    stack = np.empty((64, 3), dtype=np.int64)     # shortcuts to unpack: (level, entry, exit)
    for i in range(lo, hi):
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
            if l > 0 and trees.size > 0:
                stack, top = _tree_steps(l, e, x, head_rec, tail_rec, clique_first, exit_first,
                                         hints, stack, top)
                continue
            # e's row and x's column of their cell's matrix meet at the shortcut
            bound = shortcuts[head_rec[e, l, 1] + tail_rec[x, l, 1] - clique_first[head_rec[e, l, 0]]]
            if l == 0:
                if n + scratch[0].size > out.size:
                    out = grow(out, n + scratch[0].size)
                n0 = n
                n = _bottom_path(e, x, bound, head_rec, tail_rec, clique_first, exit_first,
                                 entry_first, bottom, turn_weight, scratch, out, n)
                _reverse(out, n0, n)                # arcs came backwards
                continue
            mid, nt, nbt = _cell_path(l, e, x, bound, space, shortcuts, urec, touched, heap,
                                      back)
            if mid >= 0:
                stack, top = _push_path(l, e, x, mid, urec, back[4], stack, top)
            for k in range(nt):
                urec[touched[k], 0] = FORBIDDEN
            for k in range(nbt):
                back[4][back[5][k], 0] = FORBIDDEN
            if mid < 0:
                raise RuntimeError("a shortcut has no path in its cell")
    return out[:n]


def search_records(rows: int, columns: int) -> np.ndarray:
    """An unpacking search's records: cost FORBIDDEN (unreached), then -1s (the
    neighbour on the path, the heap slot)."""
    rec = np.full((rows, columns), -1, dtype=np.int32)
    rec[:, 0] = FORBIDDEN
    return rec


def back_scratch(crossing0: int) -> tuple:
    """brec (cost, successor, heap slot), its touched list and heap for _cell_path's
    backward side: its arcs cross level 0, so crossing[0] rows."""
    return (search_records(max(crossing0, 1), 3), np.empty(crossing0 + 1, np.int32),
            np.empty(max(crossing0, 1), np.int64))
