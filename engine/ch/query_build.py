"""The CH query's arrays (engine/ch/query.py), built from a Hierarchy in a few Numba
passes over its flat arrays, each checking every index it lets the query follow
(principle 10): no Python loop over arcs, nothing built that a query may never read.

The passes stream or scatter; they never gather by arc id, which costs a miss an arc:

- ranks: nodes by level, in id order within a level (a query's hot upper levels then
  share lines and pages), the core last, in z-order of the map (the core nodes one
  search reaches then share lines of the core matrix's rows);
- search blocks: the arcs of up_harc (by tail), then those of down_harc (by head),
  as (other end's rank, weight), in the lists' own order, so that position p holds
  the hierarchy arc up_harc[p] (or down_harc[p - up]): no arc-id array. A scatter of
  each list's positions by arc id, one stream over the arcs in id order, then one
  over the blocks (other ends to ranks) and one over the lower ends (the blocks'
  ranges: contraction lists each node's arcs together, in rank order);
- per-rank label rows (engine/ch/query_search.py says what they hold); a core rank
  has no arcs, and its row holds its core rank instead;
- the core distances by core rank, int32 where they fit; the predecessors are read
  in place, by core index (``core_order`` maps between the two);
- each shortcut's two children side by side (int32), for unpacking;
- the core's arcs as a small CSR by core rank, to unpack core paths, built on the
  first route through the core (a scan of every arc), not here.
"""
from __future__ import annotations

import mmap

import numba
import numpy as np

INF32 = np.iinfo(np.int32).max
INF64 = np.iinfo(np.int64).max
LAB = 8            # label row: dist fwd, bwd, parent fwd, bwd, up arcs, down arcs (from, to)


class DamagedHierarchy(ValueError):
    """The hierarchy's arrays break a promise the query relies on."""


@numba.njit(cache=True)
def _ranks(level, levels, level_first, core, rank_of, level_of):
    """rank_of[v]: nodes by level, in id order within a level, then the core in the
    order of ``core``; level_of[r] the level of rank r. Returns 1 when a core id is out
    of range, not of the top level or listed twice."""
    at = level_first[:levels].copy()
    for v in range(level.size):
        lv = level[v]
        if lv < levels:
            rank_of[v], at[lv] = at[lv], at[lv] + 1
        else:
            rank_of[v] = -1
    for c in range(core.size):
        v = core[c]
        if v < 0 or v >= level.size or level[v] != levels or rank_of[v] != -1:
            return 1
        rank_of[v] = level_first[levels] + c
    for lv in range(levels + 1):
        level_of[level_first[lv]:level_first[lv + 1]] = lv
    return 0


@numba.njit(cache=True)
def _positions(up, down, at):
    """at[a] = 1 + a's position in the blocks (up list, then down list), 0 for an arc
    in neither. Returns 0, or 1 when an id is out of range or listed twice."""
    for side in range(2):
        ids, base = (up, 0) if side == 0 else (down, up.size)
        for i in range(ids.size):
            a = ids[i]
            if a < 0 or a >= at.size or at[a] != 0:
                return 1
            at[a] = base + i + 1
    return 0


@numba.njit(cache=True)
def _scatter(tail, head, weight, at, up_size, w_cap, adj, owner):
    """One stream over every hierarchy arc: a listed arc's (other end, weight) into
    adj at its position, its lower end (tail of an up arc, head of a down arc) into
    owner. Returns 0, or 1 when an end is out of range or a weight negative or above
    ``w_cap``."""
    for a in range(tail.size):
        p = at[a] - 1
        if p < 0:
            continue
        x, y, w = tail[a], head[a], weight[a]
        if w < 0 or w > w_cap:
            return 1
        if p >= up_size:
            x, y = y, x
        adj[p, 0], adj[p, 1], owner[p] = y, w, x
    return 0


@numba.njit(cache=True)
def _runs(owner, up_size, rank_of, lab):
    """lab[r, 4:6] = rank r's up arcs, lab[r, 6:8] its down arcs, from the owners of
    the positions (their ranks rise with them: few misses). Returns 0; 1 when an end
    is out of range; 2 when a list is not grouped by owner in one run each (not
    contraction's lists)."""
    for side in range(2):
        lo, hi, c = (0, up_size, 4) if side == 0 else (up_size, owner.size, 6)
        prev, r = -1, 0
        for p in range(lo, hi):
            v = owner[p]
            if v != prev:
                if v < 0 or v >= rank_of.size:
                    return 1
                r = rank_of[v]
                if lab[r, c + 1] != 0:
                    return 2
                lab[r, c] = p
                prev = v
            lab[r, c + 1] = p + 1
    return 0


@numba.njit(cache=True)
def _renumber(adj, rank_of):
    """Other ends from node ids to ranks; 1 when one is out of range."""
    for p in range(adj.shape[0]):
        v = adj[p, 0]
        if v < 0 or v >= rank_of.size:
            return 1
        adj[p, 0] = rank_of[v]
    return 0


@numba.njit(cache=True)
def _fill_labels(lab, inf, first_core):
    """Every row unreached (distances ``inf``, parents -1); core rank c = r - first_core
    where a core row's (empty) arc ranges would be. Returns 1 when a core node has arcs."""
    for r in range(lab.shape[0]):
        lab[r, 0], lab[r, 1], lab[r, 2], lab[r, 3] = inf, inf, -1, -1
    for r in range(first_core, lab.shape[0]):
        if lab[r, 5] != lab[r, 4] or lab[r, 7] != lab[r, 6]:
            return 1
        c = r - first_core
        lab[r, 4], lab[r, 5], lab[r, 6], lab[r, 7] = c, c, c, c
    return 0


@numba.njit(cache=True)
def _kids(child1, child2, m, kids):
    """kids[a - m] = the children of shortcut a; 1 when an original arc has a child or
    a shortcut's child is not an earlier arc."""
    for a in range(m):
        if child1[a] != -1 or child2[a] != -1:
            return 1
    for a in range(m, child1.size):
        c1, c2 = child1[a], child2[a]
        if c1 < 0 or c1 >= a or c2 < 0 or c2 >= a:
            return 1
        kids[a - m, 0], kids[a - m, 1] = c1, c2
    return 0


@numba.njit(cache=True)
def _core_matrix(dist, order, out, inf):
    """out[i, j] = dist[order[i], order[j]], INT64_MAX -> ``inf``. Returns 0, or 1 when
    a distance is negative, does not fit ``out`` or a diagonal entry is not 0."""
    k = order.size
    for i in range(k):
        row = order[i]
        if dist[row, row] != 0:
            return 1
        for j in range(k):
            x = dist[row, order[j]]
            if x < 0 or (x != INF64 and x >= inf):
                return 1
            out[i, j] = inf if x == INF64 else x
    return 0


@numba.njit(cache=True)
def core_arcs(tail, head, weight, level, levels, rank_of, lab):
    """The arcs between core nodes as a CSR by core rank: (first [k + 1], (head's core
    rank, weight, hierarchy arc) [c, 3]); empty when an arc's end is out of range."""
    n, k = level.size, 0
    for v in range(n):
        k += level[v] == levels
    count = np.zeros(k + 1, dtype=np.int64)
    for a in range(tail.size):
        x, y = tail[a], head[a]
        if x < 0 or x >= n or y < 0 or y >= n:
            return np.zeros(0, np.int64), np.empty((0, 3), np.int64)
        if level[x] == levels and level[y] == levels:
            count[lab[rank_of[x], 4] + 1] += 1
    for c in range(k):
        count[c + 1] += count[c]
    at, arcs = count[:k].copy(), np.empty((count[k], 3), dtype=np.int64)
    for a in range(tail.size):
        x, y = tail[a], head[a]
        if level[x] == levels and level[y] == levels:
            c = lab[rank_of[x], 4]
            arcs[at[c], 0], arcs[at[c], 1], arcs[at[c], 2] = lab[rank_of[y], 4], weight[a], a
            at[c] += 1
    return count, arcs


def build(h) -> dict:
    """The query's arrays (see the module docstring), or DamagedHierarchy."""
    n, levels, k, m = h.num_nodes, h.num_levels, h.core_nodes.size, h.num_original_arcs
    if h.node_level.shape != (n,) or h.core_dist.shape != (k, k) or \
            h.core_pred.shape != (k, k) or not 0 <= m <= h.arc_tail.size < INF32 or \
            any(x.shape != h.arc_tail.shape for x in (h.arc_head, h.arc_weight, h.arc_child1,
                                                      h.arc_child2)):
        raise DamagedHierarchy("damaged hierarchy: arrays of the wrong shape")
    level = np.ascontiguousarray(h.node_level, dtype=np.int32)
    if n and (level.min() < 0 or level.max() > levels):
        raise DamagedHierarchy("damaged hierarchy: a node level is out of range")
    level_first = np.zeros(levels + 2, dtype=np.int64)
    level_first[1:] = np.cumsum(np.bincount(level, minlength=levels + 1))
    if level_first[levels + 1] - level_first[levels] != k or np.unique(h.core_nodes).size != k:
        raise DamagedHierarchy("damaged hierarchy: the core is not exactly the top level")
    rank_of, level_of = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    order = _map_order(h.graph, h.core_nodes)
    if _ranks(level, levels, level_first, h.core_nodes[order], rank_of, level_of):
        raise DamagedHierarchy("damaged hierarchy: a core node is out of range or listed twice")
    w_max = int(h.arc_weight.max(initial=0))
    small = (levels + 1) * w_max < INF32       # every upward distance fits int32
    lab = fresh((n, LAB), np.int32 if small else np.int64)
    inf = lab.dtype.type(INF32 if small else INF64)
    adj, up, down = _blocks(h, rank_of, lab, np.int32 if w_max < INF32 else np.int64)
    if _fill_labels(lab, inf, n - k):
        raise DamagedHierarchy("damaged hierarchy: a core node has up or down arcs")
    kids = fresh((h.arc_tail.size - m, 2), np.int32)
    if _kids(h.arc_child1, h.arc_child2, m, kids):
        raise DamagedHierarchy("damaged hierarchy: an arc's children are out of range")
    core = _core(h, order)
    return dict(level=level, rank_of=rank_of, level_of=level_of, level_first=level_first,
                levels=levels, adj=adj, up=up, down=down, lab=lab, inf=inf, kids=kids,
                core_dist=core[0], core_inf=core[1], core_pred=core[2], core_order=core[3])


def _blocks(h, rank_of, lab, dtype):
    """(adj, up ids, down ids): the up arcs by lower end, then the down arcs; the
    hierarchy arc at position p is up[p] (p < up.size), else down[p - up.size]."""
    n, up, down = lab.shape[0], h.up_harc, h.down_harc
    at = fresh((h.arc_tail.size,), np.int32)
    if _positions(up, down, at):
        raise DamagedHierarchy("damaged hierarchy: an up/down arc is out of range or listed twice")
    adj, owner = fresh((up.size + down.size, 2), dtype), fresh((up.size + down.size,), np.int32)
    if _scatter(h.arc_tail, h.arc_head, h.arc_weight, at, up.size, np.iinfo(dtype).max, adj,
                owner) or _renumber(adj, rank_of):
        raise DamagedHierarchy("damaged hierarchy: an arc's end is out of range or its weight "
                               "negative")
    bad = _runs(owner, up.size, rank_of, lab)
    if bad == 2:                     # not grouped by lower end: sort each list by it
        lab[:, 4:8] = 0
        ids = np.concatenate((up, down))
        order = np.concatenate([np.argsort(x, kind="stable") + base for x, base in
                                ((owner[:up.size], 0), (owner[up.size:], up.size))])
        adj[:], owner[:], ids = adj[order], owner[order], ids[order]
        up, down = ids[:up.size], ids[up.size:]
        bad = _runs(owner, up.size, rank_of, lab)
    if bad:
        raise DamagedHierarchy("damaged hierarchy: an arc's end is out of range")
    return adj, np.ascontiguousarray(up, dtype=np.int64), np.ascontiguousarray(down, dtype=np.int64)


def _core(h, order):
    """(distances by core rank, their infinity, predecessors, core_order). Distances
    are int32 when they fit (a join then reads half the lines); the predecessors are
    the hierarchy's, read in place by core index: core_order[0] maps a core rank to
    its index, core_order[1] an index to its rank."""
    k, pred = order.size, np.ascontiguousarray(h.core_pred, dtype=np.int32)
    if k and (pred.min() < -1 or pred.max() >= k):
        raise DamagedHierarchy("damaged hierarchy: a core predecessor is out of range")
    core_order = np.empty((2, k), dtype=np.int64)
    core_order[0], core_order[1, order] = order, np.arange(k)
    for dtype, inf in ((np.int32, INF32), (np.int64, INF64)):
        dist = fresh((k, k), dtype)
        if not _core_matrix(np.ascontiguousarray(h.core_dist, dtype=np.int64), order, dist,
                            dtype(inf)):
            return dist, dtype(inf), pred, core_order
    raise DamagedHierarchy("damaged hierarchy: a core distance is negative or too large")


def _map_order(graph, core) -> np.ndarray:
    """Core indices in z-order of their place on the map (as given without coordinates)."""
    if graph.xy is None or core.size == 0:
        return np.arange(core.size)
    xy = graph.xy[core] - graph.xy[core].min(axis=0)
    cells = (xy / max(float(xy.max()), 1e-9) * 65535).astype(np.uint64)
    key = np.zeros(core.size, dtype=np.uint64)
    for bit in range(16):
        for dim in range(2):
            key |= ((cells[:, dim] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(2 * bit + dim)
    return np.argsort(key, kind="stable")


def fresh(shape, dtype) -> np.ndarray:
    """Zeros in fresh anonymous memory with no pass to clear it (the kernel hands out
    zero pages), on 2 MB pages where large, as engine.core.arrays.huge asks for them."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < 1 << 20 or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(shape, dtype=dtype)
    page = 2 << 20        # private: Linux gives shared anonymous memory no huge pages
    buf = mmap.mmap(-1, nbytes + page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        buf.madvise(mmap.MADV_HUGEPAGE)
    except OSError:       # a kernel without transparent huge pages: ordinary pages do
        pass
    raw = np.frombuffer(buf, dtype=np.uint8)
    skip = -raw.ctypes.data % page
    return raw[skip:skip + nbytes].view(dtype).reshape(shape)
