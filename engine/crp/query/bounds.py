"""Lower bounds from the overlay's top level for pruning the CRP query (search.py).

For a top-level cell C, ``to[C][y]`` is the top-level distance from boundary arc y to
the nearest arc entering C, and ``from[C][y]`` the distance from the nearest arc
leaving C to y (one multi-source Dijkstra over the top cells' matrices each). A path
from y to a target inside C enters C through such an arc, so its rest costs at least
``to[C][y]``; a path from a source inside C to y leaves C first, so it costs at least
``from[C][y]``. An arc that does not cross the top level lies inside one top cell X
and must leave it (to C) or have entered it (from C): the least bound over X's exits
(entries) bounds it. Arcs into C (to) or out of C (from), and C's own arcs, are
marked -1: the search adds to the others a bound of the cost between C's boundary
and the target (source), which does not hold there.

``top_upper`` gives the search an early upper bound (issue #37): from the arcs the
forward search has reached, an A* over the top cells' rows, guided by ``to[T]`` (the
exact distance to t's top cell T), towards the arcs into T the backward search has
reached; each such meeting is a real path. Without it the two searches meet late and
explore every top cell nearer than half the distance (about 15% of the top level on
random pairs of a generated network, whatever its size); with it the pruning above
holds them to a corridor from the start.

**Entry groups** (the two-stage query's A*, staged.py): a path to t enters T last
through some entry e, at cost at least dist(y, e) + (the least cost from e to t inside
T). The A* knows the second term for every entry after its first stage, so one
table per *group* of T's entries (those into one level-(top-1) subcell of T) gives
h = min over groups of ``to[T, g][y]`` + that group's least cost to t: the slack
left is the spread of the costs within a group, not within all of T (generated 4 M
nodes: 1,206 arcs expanded per query against 2,082 with one table per cell, the
search 3.99 against 5.29 ms). ``to[C]`` is the least of C's group tables. The group
tables are backward searches over the top level's matrices read by column, so they
run on a column-major copy of the top level (the build's scratch).

Metric-dependent, so kept per metric and dropped by ``reset`` when the metric
changes. The first query after that builds every cell's two tables at once, on all
cores (``build_ms`` says how long): a table costs one Dijkstra over the whole top
level (NY: 17 top cells, 1,036 top boundary arcs, 34 tables in 7.8 ms on one core; 24 M
nodes: 184 cells, 98 k arcs, 53.6 M shortcuts, about 0.2 s each), so building them one
by one on the queries that first need them made most queries at 24 M pay two.
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from engine.crp.metric import FORBIDDEN
from engine.core.arrays import huge_zeros
from engine.core.heaps import (
    packed_forget as forget, packed_pop as pop, packed_push_or_decrease as push_or_decrease,
)


class TopBounds:
    def __init__(self, overlay, space, backend=None) -> None:
        """``backend``: a GPU backend builds the tables there (bounds_gpu.py), else
        the CPU's Dijkstras."""
        q = space
        self.backend = backend if backend is not None and backend.is_gpu else None
        self.top = top = overlay.num_levels - 1
        total = q.entry_first.size
        if top < 0:                          # no levels: nothing to prune with
            self.btop, self.cells, self.base = 0, 1, 0
            self.top_of_cell = np.zeros(max(total, 1), np.int32)
        else:
            self.btop, self.base = int(q.crossing[top]), int(q.cell_base[top])
            self.cells = overlay.levels[top].num_cells
            self.top_of_cell = _top_of_cell(overlay, q.cell_base, total)
        self.space = q
        self.group, self.groups = _entry_groups(q, top, self.btop)
        # [target cell][top arc or cell][group]: the A*'s bound (staged._h) reads one
        # arc's groups together, one cache line rather than one line per group
        self.group_lb = huge_zeros((self.cells, self.btop, self.groups), np.int32)
        self.group_cell_lb = np.zeros((self.cells, self.cells, self.groups), np.int32)
        self.group_rest = np.zeros(self.groups, np.int64)     # the query's scratch
        self.lb = huge_zeros((2, self.cells, self.btop), np.int32)   # 2 MB pages: read at random
        self.cell_lb = np.zeros((2, self.cells, self.cells), np.int32)
        self.done = np.zeros((2, self.cells), dtype=bool)
        self.done[:] = top < 0
        self.build_ms = 0.0                 # the last build of the tables (see build)
        self._scratch = (np.full((self.btop, 2), -1, np.int32), np.empty(max(self.btop, 1), np.int64))
        self.exits = _top_exits(q, top, self.base, self.cells, self.btop)
        # the number of the query whose A* last reached each top arc (staged._expand: its
        # steps are top-level ones, also out of the source's or the target's top cell,
        # where search.free_level would pick a lower level; unpack.search_steps reads it),
        # and the current query's number: no clearing between queries
        self.steps = (np.zeros(max(self.btop, 1), np.int64), np.zeros(1, np.int64))

    def reset(self) -> None:
        """Forget the tables (a new metric)."""
        self.done[:] = self.top < 0
        self.build_ms = 0.0

    def get(self, cs, ct, shortcuts):
        """The search's bounds for source cells ``cs`` and target cells ``ct`` (flat
        cell indices per level, as CrpQuery._node_cell); the first call after a reset
        builds every table."""
        s, t = (int(c[self.top]) - self.base if self.top >= 0 else 0 for c in (cs, ct))
        if not (self.done[0, t] and self.done[1, s]):
            self.build(shortcuts)
        return (self.lb[0, t], self.lb[1, s], self.cell_lb[0, t], self.cell_lb[1, s],
                self.top_of_cell, self.top, *self._scratch, self.base,
                self.group_lb[t], self.group_cell_lb[t], self.group, self.group_rest,
                *self.exits, *self.steps)

    def build(self, shortcuts) -> None:
        """Every table not built yet, in parallel (each output row is one task's own)."""
        todo = np.argwhere(~self.done).astype(np.int64)
        if todo.size == 0:
            return
        t0 = time.perf_counter()
        q = self.space
        if self.backend is not None and self.top >= 0:
            self._build_on_gpu(shortcuts)
            self.build_ms += (time.perf_counter() - t0) * 1e3
            return
        ahead = todo[todo[:, 0] == 0, 1]                # to[C]: from C's group tables
        if ahead.size:
            columns = top_columns(self.base, self.cells, q.entry_first, q.exit_first,
                                  q.clique_first, shortcuts)
            build_group_tables(ahead, self.groups, self.base, self.top, self.group,
                               q.head_rec, q.tail_rec, q.entry_first, q.entry_q, columns,
                               q.clique_first, self.group_lb, self.group_cell_lb,
                               self.lb[0], self.cell_lb[0])
            del columns
        build_tables(todo[todo[:, 0] == 1], self.top, q.head_rec, q.tail_rec, q.entry_first,
                     q.entry_q, q.exit_first, q.exit_q, shortcuts, self.lb, self.cell_lb,
                     self.base)
        self.done[todo[:, 0], todo[:, 1]] = True
        self.build_ms += (time.perf_counter() - t0) * 1e3


    def _build_on_gpu(self, shortcuts) -> None:
        """Every table from the device's raw distances, finished as the CPU's."""
        from engine.crp.query.bounds_gpu import raw_tables
        q, cells = self.space, self.cells
        to, frm = raw_tables(self.backend, q, self.top, self.base, cells, self.group,
                             self.groups, shortcuts)
        self.group_lb[:] = to.reshape(self.btop, cells, self.groups).transpose(1, 0, 2)
        del to
        every = np.arange(cells, dtype=np.int64)
        finish_to_tables(every, self.groups, self.base, self.top, q.head_rec, q.tail_rec,
                         self.group_lb, self.group_cell_lb, self.lb[0], self.cell_lb[0])
        finish_from_tables(frm, self.base, self.top, q.head_rec, q.tail_rec, self.lb[1],
                           self.cell_lb[1])
        self.done[:] = True


def _top_exits(q, top: int, base: int, cells: int, btop: int):
    """The A*'s forward costs of the top arcs laid out as the top cells' exit lists
    (staged._expand then reads a top row's exits' costs as one run, not gathered):
    (each top arc's place there, the costs, FORBIDDEN between queries, the flat index
    of the first top exit). Every top arc is the exit of one top cell: its tail's."""
    pos = np.zeros(max(btop, 1), np.int32)
    first = 0
    if top >= 0:
        first = int(q.exit_first[base])
        exits = q.exit_q[first:int(q.exit_first[base + cells])]
        pos[exits] = np.arange(exits.size, dtype=np.int32)
    return pos, np.full(max(btop, 1), FORBIDDEN, np.int32), first


def _entry_groups(q, top: int, btop: int):
    """(group of each top arc: the rank of the level-(top-1) cell it enters among its
    top cell's subcells, the most groups of a top cell); one group without levels
    below the top."""
    if top < 1 or btop == 0:
        return np.zeros(max(btop, 1), np.int32), 1
    cell = q.head_rec[:btop, top, 0].astype(np.int64)
    sub = q.head_rec[:btop, top - 1, 0].astype(np.int64)
    pairs, pair_of = np.unique(np.stack([cell, sub], axis=1), axis=0, return_inverse=True)
    first = np.flatnonzero(np.r_[True, pairs[1:, 0] != pairs[:-1, 0]])
    rank = np.arange(pairs.shape[0]) - np.repeat(first, np.diff(np.r_[first, pairs.shape[0]]))
    return rank[pair_of.ravel()].astype(np.int32), int(rank.max()) + 1


def _top_of_cell(overlay, cell_base, total) -> np.ndarray:
    """For every flat cell index (all levels), the index of its top-level cell."""
    out = np.zeros(total, np.int32)
    cells = overlay.cell_of
    top = cells[-1]
    for l in range(cells.shape[0]):
        out[cell_base[l] + cells[l]] = top
    return out


@nb.njit(cache=True, nogil=True, parallel=True)
def build_tables(todo, top, head_rec, tail_rec, entry_first, entry_q, exit_first, exit_q,
                 shortcuts, lb, cell_lb, base):
    """top_dijkstra for every (f, cell) row of ``todo``, on all cores, each with its
    own scratch; lb and cell_lb as TopBounds'."""
    btop = lb.shape[2]
    for i in nb.prange(todo.shape[0]):
        f, c = todo[i, 0], todo[i, 1]
        rec = np.full((btop, 2), -1, np.int32)
        heap = np.empty(max(btop, 1), np.int64)
        top_dijkstra(f, base + c, top, head_rec, tail_rec, entry_first, entry_q, exit_first,
                     exit_q, shortcuts, lb[f, c], cell_lb[f, c], base, rec, heap)


@nb.njit(cache=True, _nrt=False)
def top_dijkstra(f, c, top, head_rec, tail_rec, entry_first, entry_q, exit_first, exit_q,
                 shortcuts, dist, cell_lb, base, rec, heap):
    """f = 0: dist[y] = top-level distance from top arc y to the arcs entering cell c
    (a backward search over the top cells' columns); f = 1: from the arcs leaving c
    to y (forward over rows). cell_lb[X]: the least dist over X's exits (f = 0) or
    entries (f = 1). -1 marks the arcs into c (f = 0) or out of c (f = 1), and c itself:
    the search adds no rest there. rec ([btop, 2]: dist, heap slot), heap: scratch."""
    btop = dist.size
    size = 0
    for y in range(btop):
        rec[y, 0] = FORBIDDEN
        if (head_rec if f == 0 else tail_rec)[y, top, 0] == c:
            rec[y, 0] = 0
            size = push_or_decrease(heap, rec, 1, size, 0, y)
    while size > 0:
        d, x, size = pop(heap, rec, 1, size)
        xr = tail_rec if f == 0 else head_rec
        cb, start = xr[x, top, 0], xr[x, top, 1]
        ends_first, ends = (entry_first, entry_q) if f == 0 else (exit_first, exit_q)
        step = exit_first[cb + 1] - exit_first[cb] if f == 0 else 1
        lo = ends_first[cb]
        for j in range(ends_first[cb + 1] - lo):
            y = ends[lo + j]
            nd = d + shortcuts[start + j * step]
            if nd < rec[y, 0]:
                rec[y, 0] = nd
                size = push_or_decrease(heap, rec, 1, size, nd, y)
    forget(heap, rec, 1, size)
    cell_lb[:] = FORBIDDEN
    for y in range(btop):
        x = (tail_rec if f == 0 else head_rec)[y, top, 0] - base
        cell_lb[x] = min(cell_lb[x], rec[y, 0])
        inside = (head_rec if f == 0 else tail_rec)[y, top, 0] == c
        dist[y] = -1 if inside else rec[y, 0]
    cell_lb[c - base] = -1


@nb.njit(cache=True, parallel=True)
def top_columns(base, cells, entry_first, exit_first, clique_first, shortcuts):
    """The top level's matrices column by column (each cell's [exits][entries]), at the
    same offsets: a backward search reads a column as one run."""
    lo, hi = clique_first[base], clique_first[base + cells]
    out = np.empty(hi - lo, shortcuts.dtype)
    for k in nb.prange(cells):
        c = base + k
        ne, nx = entry_first[c + 1] - entry_first[c], exit_first[c + 1] - exit_first[c]
        first = clique_first[c]
        for i in range(ne):
            for j in range(nx):
                out[first - lo + j * ne + i] = shortcuts[first + i * nx + j]
    return out


@nb.njit(cache=True, nogil=True, parallel=True)
def build_group_tables(todo, groups, base, top, group, head_rec, tail_rec, entry_first,
                       entry_q, columns, clique_first, group_lb, group_cell_lb, lb, cell_lb):
    """For each cell c of ``todo`` and each of its entry groups, group_lb[c, y, g] = the
    top-level distance from y to c's entries of group g; then finish_to_tables."""
    btop = group_lb.shape[1]
    for i in nb.prange(todo.size * groups):
        c, g = todo[i // groups], i % groups
        rec = np.full((btop, 2), -1, np.int32)
        heap = np.empty(max(btop, 1), np.int64)
        _group_dijkstra(base + c, g, top, group, head_rec, tail_rec, entry_first, entry_q,
                        columns, clique_first[base], clique_first, group_lb[c, :, g], rec, heap)
    finish_to_tables(todo, groups, base, top, head_rec, tail_rec, group_lb, group_cell_lb, lb,
                     cell_lb)


@nb.njit(cache=True, nogil=True, parallel=True)
def finish_to_tables(todo, groups, base, top, head_rec, tail_rec, group_lb, group_cell_lb, lb,
                     cell_lb):
    """From the raw group tables of the cells in ``todo``: each group's least over a
    cell's exits (group_cell_lb), and to[c] (lb, -1 on the arcs into c) and cell_lb
    (-1 at c) as their least over the groups, equal to top_dijkstra's (f = 0)."""
    btop, cells = group_lb.shape[1], group_cell_lb.shape[1]
    for k in nb.prange(todo.size):
        c = todo[k]
        for g in range(groups):
            for x in range(cells):
                group_cell_lb[c, x, g] = FORBIDDEN
            for y in range(btop):
                x = tail_rec[y, top, 0] - base
                group_cell_lb[c, x, g] = min(group_cell_lb[c, x, g], group_lb[c, y, g])
        for y in range(btop):
            v = FORBIDDEN
            for g in range(groups):
                v = min(v, group_lb[c, y, g])
            lb[c, y] = -1 if head_rec[y, top, 0] == base + c else v
        for x in range(cells):
            v = FORBIDDEN
            for g in range(groups):
                v = min(v, group_cell_lb[c, x, g])
            cell_lb[c, x] = v
        cell_lb[c, c] = -1


@nb.njit(cache=True, nogil=True, parallel=True)
def finish_from_tables(raw, base, top, head_rec, tail_rec, lb, cell_lb):
    """from[c] (lb, -1 on the arcs out of c) and cell_lb (the least over a cell's entries,
    -1 at c) from raw[y, c], as top_dijkstra's (f = 1)."""
    btop, cells = raw.shape[0], raw.shape[1]
    for c in nb.prange(cells):
        for x in range(cells):
            cell_lb[c, x] = FORBIDDEN
        for y in range(btop):
            x = head_rec[y, top, 0] - base
            cell_lb[c, x] = min(cell_lb[c, x], raw[y, c])
            lb[c, y] = -1 if tail_rec[y, top, 0] == base + c else raw[y, c]
        cell_lb[c, c] = -1


@nb.njit(cache=True, _nrt=False)
def _group_dijkstra(c, g, top, group, head_rec, tail_rec, entry_first, entry_q, columns,
                    offset, clique_first, dist, rec, heap):
    """dist[y] = top-level distance from top arc y to cell c's entries of group g: a
    backward Dijkstra over the columns (``columns``: top_columns, from ``offset``)."""
    btop = dist.size
    size = 0
    for y in range(btop):
        rec[y, 0] = FORBIDDEN
        if head_rec[y, top, 0] == c and group[y] == g:
            rec[y, 0] = 0
            size = push_or_decrease(heap, rec, 1, size, 0, y)
    while size > 0:
        d, x, size = pop(heap, rec, 1, size)
        cb, at = tail_rec[x, top, 0], tail_rec[x, top, 1]
        lo = entry_first[cb]
        ne = entry_first[cb + 1] - lo
        first = clique_first[cb]
        column = first - offset + (at - first) * ne    # x's column: cb's entries to x
        for j in range(ne):
            y = entry_q[lo + j]
            nd = d + columns[column + j]
            if nd < rec[y, 0]:
                rec[y, 0] = nd
                size = push_or_decrease(heap, rec, 1, size, nd, y)
    forget(heap, rec, 1, size)
    for y in range(btop):
        dist[y] = rec[y, 0]


@nb.njit(cache=True, _nrt=False)
def top_upper(dist, touched, nt, head_rec, exit_first, exit_q, shortcuts, bounds, cs, ct, upper,
              budget):
    """The least cost, below ``upper``, of a path s -> (the forward search's reach) ->
    top cells' rows -> an arc into t's top cell T that the backward search reached -> t;
    ``upper`` when none is found. A heuristic for the bound only: every cost it returns
    is a real path's (exactness never depends on finding the best one). Seeds: the top
    boundary arcs in ``touched`` with a forward cost; keys g + to[T] (an A*: the first
    arcs into T it settles are the nearest); it expands no row of s's or t's top cell
    (the searches own those) and stops once no key plus the cheapest reached arc
    into T can beat the bound, or after ``budget`` arcs (its cost stays a fraction of
    the search's). bounds: TopBounds.get's tuple (its scratch at 6, 7)."""
    lb_t, top, rec, heap = bounds[0], bounds[5], bounds[6], bounds[7]
    btop = lb_t.size
    if top < 0:
        return upper
    S, T = cs[top], ct[top]
    if S == T:
        return upper
    near_t = FORBIDDEN                       # cheapest reached arc into T, to t
    for y in range(btop):
        rec[y, 0] = FORBIDDEN
    size = 0
    for i in range(nt):
        y = touched[i]
        if y < btop and dist[y, 0] < rec[y, 0]:
            rec[y, 0] = dist[y, 0]
            size = push_or_decrease(heap, rec, 1, size, min(dist[y, 0] + max(lb_t[y], 0),
                                                            FORBIDDEN), y)
        if y < btop and lb_t[y] < 0:
            near_t = min(near_t, dist[y, 1])
    while size > 0 and budget > 0:
        k, x, size = pop(heap, rec, 1, size)
        budget -= 1
        if k + near_t >= upper:
            break
        g = rec[x, 0]
        upper = min(upper, g + dist[x, 1])
        cb = head_rec[x, top, 0]
        if cb == S or cb == T:
            continue
        lo, start = exit_first[cb], head_rec[x, top, 1]
        for j in range(exit_first[cb + 1] - lo):
            z = exit_q[lo + j]
            nd = g + shortcuts[start + j]
            if nd < rec[z, 0] and nd < upper:
                rec[z, 0] = nd
                size = push_or_decrease(heap, rec, 1, size, min(nd + max(lb_t[z], 0), FORBIDDEN),
                                        z)
    forget(heap, rec, 1, size)
    return upper
