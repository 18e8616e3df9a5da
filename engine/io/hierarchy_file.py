"""Contraction hierarchy files (``.rlh``, engine.ch.hierarchy.Hierarchy.save/load): the
arrays and metadata read and written, and the validator, run on every load before
PHAST, the CH query or the GPU kernels index an array.

Beyond dtypes, shapes and ranges it checks what makes distances right: every
shortcut is the concatenation of its two children (ends and weight), up/down arcs
go from their level to a higher one, the core is exactly the top level, and the
core matrix is certified as the core's shortest distances — every finite entry is
realised by its predecessor chain and no core arc can shorten any entry (Bellman's
optimality conditions). All O(n + h + k² log k): NumPy for dtypes and ranges, one
Numba pass per structure for the rest (each index is range-checked before a loop
uses it).

Version 2 stores node ids, arc ids and children as int32 (NARROW; counts are below
2^31-1, check_counts) and is widened to int64 after validation; version 1 (all
int64) is still read.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from engine.core.graph import GraphError, path_cost_bound
from engine.io.checks import INT32_MAX, in_range, need, offsets
from engine.io.errors import LoadError
from engine.io.npz import read_meta, read_npz, write_npz

FORMAT = "routelab-hierarchy"
VERSION = 2              # 2: the NARROW arrays as int32 (1: int64, read still)
VERSIONS = (1, 2)
WHAT = "RouteLab hierarchy"
ARRAYS = ("node_level", "arc_tail", "arc_head", "arc_weight", "arc_child1", "arc_child2",
          "up_first", "up_harc", "down_first", "down_harc", "core_nodes", "core_dist",
          "core_pred")
NARROW = ("arc_tail", "arc_head", "arc_child1", "arc_child2", "up_harc", "down_harc",
          "core_nodes")      # int32 in version 2 files, int64 in memory
INF = int(np.iinfo(np.int64).max)
# params["model"]: what the hierarchy was contracted from (absent in older files: the
# road graph). A turn-aware one holds engine.model's expanded graph.
NODE_BASED, TURN_AWARE = "node_based", "turn_aware"
MODELS = (NODE_BASED, TURN_AWARE)
HIERARCHY_KEYS = {"metric": str, "metric_hash": str, "num_nodes": int, "num_levels": int,
                  "num_original_arcs": int, "iterations": list, "params": dict}
_MAX_DIST = 1 << 62      # above any path cost of a valid graph, so sums of two fit int64


def _jit(func):
    """``func`` compiled by Numba (cache=True) at its first call, so that importing this
    module loads no Numba (engine.ch's face is read at start-up without it)."""
    compiled = None

    @functools.wraps(func)
    def call(*args):
        nonlocal compiled
        if compiled is None:
            import numba
            compiled = numba.njit(cache=True)(func)
        return compiled(*args)
    return call


def write_hierarchy(path, arrays: dict, meta: dict):
    """The ARRAYS and the metadata (HIERARCHY_KEYS) of a hierarchy, written atomically
    (version 2: the NARROW arrays as int32, refused with ValueError if one does not fit)."""
    out = {}
    for name in ARRAYS:
        a = np.asarray(arrays[name])
        if name in NARROW:
            if a.size and (int(a.min()) < -1 or int(a.max()) >= INT32_MAX):
                raise ValueError(f"{name} holds an id outside -1..2^31-2; not a hierarchy")
            a = a.astype(np.int32)
        out[name] = a
    return write_npz(path, out, {"format": FORMAT, "version": VERSION, **meta})


def read_hierarchy(path) -> tuple[dict, dict]:
    """(metadata, arrays) of a hierarchy file, refused (LoadError naming the file)
    unless every array passes ``check_hierarchy``; the arrays as in memory (int64 ids)."""
    arrays = read_npz(path, WHAT)
    meta = read_meta(path, arrays, FORMAT, VERSIONS, WHAT, HIERARCHY_KEYS)
    missing = [name for name in ARRAYS if name not in arrays]
    if missing:
        raise LoadError(path, f"damaged hierarchy: {missing[0]} is missing")
    _check_records(path, meta["iterations"], meta["params"])
    arrays = {name: arrays[name] for name in ARRAYS}
    ids = np.int32 if meta["version"] >= 2 else np.int64
    check_hierarchy(SimpleNamespace(**{k: meta[k] for k in HIERARCHY_KEYS}, **arrays), path, ids)
    if ids is np.int32:                   # validated: widening keeps every value
        arrays.update({name: arrays[name].astype(np.int64) for name in NARROW})
    return meta, arrays


def check_hierarchy(h, path=None, ids=np.int64) -> None:
    """Refuse, with ``path`` and the reason, a Hierarchy whose arrays are inconsistent
    (``ids``: the dtype of the NARROW arrays, int64 in memory and version 1 files)."""
    n, levels, m = h.num_nodes, h.num_levels, h.num_original_arcs
    check_counts(path, n, levels, m)
    if h.metric_hash and (len(h.metric_hash) != 16 or
                          any(c not in "0123456789abcdef" for c in h.metric_hash)):
        raise LoadError(path, "metric_hash is not a metric hash")
    level = need(path, h.node_level, "node_level", np.int32, (n,))
    in_range(path, level, "node_level", 0, levels)
    _check_arcs(path, h, n, m, ids)
    for side in ("up", "down"):
        _check_side(path, h, side, level, levels, ids)
    top = _check_complete(path, h, level, levels)
    _check_core(path, h, level, levels, ids, top)


def check_counts(path, n, levels, m) -> None:
    """A hierarchy's node, level and original-arc counts: non-negative integers, levels
    ≤ nodes < 2^31-1 (also engine.io.pareto_hierarchy_file's)."""
    for name, value in (("num_nodes", n), ("num_levels", levels), ("num_original_arcs", m)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise LoadError(path, f"{name} must be a non-negative integer")
    if n >= INT32_MAX or levels > n or m >= INT32_MAX:
        raise LoadError(path, f"num_nodes {n}, num_levels {levels} or num_original_arcs {m} "
                              "out of range (levels ≤ nodes < 2^31-1)")


def _check_arcs(path, h, n: int, m: int, ids) -> None:
    """Arc table: ends in range, originals childless, shortcuts = child1 then child2."""
    tail = need(path, h.arc_tail, "arc_tail", ids, (None,))
    total = tail.size
    if total < m or total >= INT32_MAX:
        raise LoadError(path, f"{total} hierarchy arcs for {m} original arcs")
    head = need(path, h.arc_head, "arc_head", ids, (total,))
    w = need(path, h.arc_weight, "arc_weight", np.int64, (total,))
    c1 = need(path, h.arc_child1, "arc_child1", ids, (total,))
    c2 = need(path, h.arc_child2, "arc_child2", ids, (total,))
    in_range(path, tail, "arc tail", 0, n - 1)
    in_range(path, head, "arc head", 0, n - 1)
    in_range(path, w[:m], "original arc weight", 0, INT32_MAX)
    try:
        bound = path_cost_bound(n, w[:m])
    except GraphError as e:
        raise LoadError(path, str(e)) from None
    in_range(path, w, "arc weight", 0, bound)
    fault = _shortcut_fault(tail, head, w, c1, c2, m)
    if fault:
        raise LoadError(path, ("an original arc has children",
                               "a shortcut's child is not an earlier arc",
                               "a shortcut's ends are not its children's outer ends",
                               "a shortcut's weight is not the sum of its children's weights"
                               )[fault - 1])


@_jit
def _shortcut_fault(tail, head, w, c1, c2, m):
    """0: originals (< m) childless, each shortcut s = c1[s] then c2[s], both earlier
    arcs, with the ends and the weight of the two; else the first fault as NumPy's
    order of checks reports it: 1 a child of an original, 2 a child not earlier (any
    shortcut), 3 ends, 4 weight. Indexes only after the range test."""
    for s in range(m):
        if c1[s] != -1 or c2[s] != -1:
            return 1
    fault = 0
    for s in range(m, tail.size):
        a, b = c1[s], c2[s]
        if a < 0 or a >= s or b < 0 or b >= s:
            return 2
        if tail[a] != tail[s] or head[a] != tail[b] or head[b] != head[s]:
            fault = 3
        elif fault == 0 and w[a] + w[b] != w[s]:
            fault = 4
    return fault


def _check_side(path, h, side: str, level: np.ndarray, levels: int, ids) -> None:
    """``{side}_first`` delimits the levels of ``{side}_harc``; each arc of level l goes
    from l up (down: into l from higher); up arcs are sorted by tail within a level."""
    first = need(path, getattr(h, f"{side}_first"), f"{side}_first", np.int64, (levels + 1,))
    harc = need(path, getattr(h, f"{side}_harc"), f"{side}_harc", ids, (None,))
    offsets(path, first, f"{side}_first", harc.size)
    in_range(path, harc, f"{side}_harc", 0, h.arc_tail.size - 1)
    near, far = (h.arc_tail, h.arc_head) if side == "up" else (h.arc_head, h.arc_tail)
    fault = _side_fault(first, harc, near, far, level, side == "up")
    if fault == 1:
        word = "leave" if side == "up" else "enter"
        raise LoadError(path, f"{side}_harc holds an arc that does not {word} its level "
                              "toward a higher one")
    if fault == 2:
        raise LoadError(path, "up_harc is not sorted by tail within a level")


@_jit
def _side_fault(first, harc, near, far, level, by_near):
    """0, or 1: an arc of level l's slots has level[near] != l or level[far] <= l (any
    slot), 2: ``by_near`` and near ends decrease within a level. ``first`` is a checked
    offset array into ``harc``, whose ids and their ends are in range."""
    fault = 0
    for lv in range(first.size - 1):
        prev = -1
        for i in range(first[lv], first[lv + 1]):
            a = harc[i]
            x = near[a]
            if level[x] != lv or level[far[a]] <= lv:
                return 1
            if by_near and x < prev:
                fault = 2
            prev = x
    return fault


def _check_complete(path, h, level: np.ndarray, levels: int) -> np.ndarray:
    """Each arc appears at most once in up/down; one between levels that is in neither
    must be dominated by a listed arc with the same ends (a parallel arc dropped).
    Returns the arcs between two nodes of the top level (found on the way)."""
    fault, top = _listing_fault(h.up_harc, h.down_harc, h.arc_tail, h.arc_head,
                                h.arc_weight, level, levels)
    if fault == 1:
        raise LoadError(path, "an arc appears twice in up_harc/down_harc")
    if fault == 2:
        raise LoadError(path, "an arc between levels is in neither up_harc nor down_harc")
    return top


@_jit
def _listing_fault(up, down, tail, head, w, level, levels):
    """(fault, the arcs with both ends at level ``levels``). Fault 0, or 1: an arc
    listed twice in up/down, 2: an arc between levels listed in neither without a
    listed arc of its ends (tail, head) and no larger weight: the least listed weight
    per key of the left-out ones, by binary search; O(h log h), sequential over the
    arcs. up/down ids and the ends are in range (checked)."""
    seen = np.zeros(tail.size, np.bool_)
    for lst in (up, down):
        for a in lst:
            if seen[a]:
                return 1, np.zeros(0, np.int64)
            seen[a] = True
    listed_out = []
    top_arcs = []
    for a in range(tail.size):
        lt, lh = level[tail[a]], level[head[a]]
        if lt != lh:
            if not seen[a]:
                listed_out.append(np.int64(a))
        elif lt == levels:
            top_arcs.append(np.int64(a))
    top = np.array(top_arcs, dtype=np.int64)
    if not listed_out:
        return 0, top
    left_out, n = np.array(listed_out, dtype=np.int64), np.int64(level.size)
    key = tail[left_out].astype(np.int64) * n + head[left_out]
    keys = np.unique(key)
    best = np.full(keys.size, INF, np.int64)
    mark = np.zeros(level.size, np.bool_)
    for a in left_out:
        mark[tail[a]] = True
    for a in range(tail.size):
        if seen[a] and mark[tail[a]]:
            k = np.int64(tail[a]) * n + head[a]
            r = np.searchsorted(keys, k)
            if r < keys.size and keys[r] == k and w[a] < best[r]:
                best[r] = w[a]
    for j in range(left_out.size):
        if best[np.searchsorted(keys, key[j])] > w[left_out[j]]:
            return 2, top
    return 0, top


def _check_core(path, h, level: np.ndarray, levels: int, ids, top: np.ndarray) -> None:
    """Core nodes = the top level; core_dist/core_pred certified as shortest distances
    (``top``: the arcs between two top-level nodes)."""
    core = need(path, h.core_nodes, "core_nodes", ids, (None,))
    k = core.size
    in_range(path, core, "core node", 0, h.num_nodes - 1)
    if not np.array_equal(np.sort(core), np.flatnonzero(level == levels)):
        raise LoadError(path, f"core_nodes are not exactly the nodes of the top level {levels}")
    dist = need(path, h.core_dist, "core_dist", np.int64, (k, k))
    pred = need(path, h.core_pred, "core_pred", np.int32, (k, k))
    finite = dist != INF
    if np.any(dist < 0) or np.any((dist > _MAX_DIST) & finite) or \
            np.any(np.diagonal(dist) != 0):
        raise LoadError(path, "core_dist has a negative or too large entry, or a non-zero "
                              "diagonal")
    in_range(path, pred, "core_pred", -1, k - 1)
    np.fill_diagonal(finite, False)
    if np.any((pred >= 0) != finite):
        raise LoadError(path, "core_pred and core_dist disagree on which pairs are connected")
    weight, us, vs = _core_arcs(top, h.arc_tail, h.arc_head, h.arc_weight, core, h.num_nodes)
    fault = _realised_fault(dist, pred, weight)
    if fault == 1:
        raise LoadError(path, "core_dist is not realised by core arcs along core_pred")
    if fault == 2:
        raise LoadError(path, "core_pred has a cycle that never reaches its row's node")
    if _shortened(dist, us, vs, weight):
        raise LoadError(path, "core_dist is not the shortest distance: a core arc shortens it")


@_jit
def _core_arcs(top, tail, head, w, core, n):
    """(k × k least weight of a hierarchy arc between two core nodes, INF: none; the
    (row, column) pairs that have one). ``core`` = the top level's nodes (checked),
    ``top`` the arcs between two of them."""
    k = core.size
    position = np.full(n, -1, np.int64)
    for i in range(k):
        position[core[i]] = i
    weight = np.full((k, k), INF, np.int64)
    for a in top:
        u, v = position[tail[a]], position[head[a]]
        weight[u, v] = min(weight[u, v], w[a])
    us, vs = [], []
    for u in range(k):
        for v in range(k):
            if weight[u, v] != INF:
                us.append(u)
                vs.append(v)
    return weight, np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64)


@_jit
def _realised_fault(dist, pred, weight):
    """0, or 1: a finite entry (pred ≥ 0, checked to agree) is not the entry of its
    predecessor plus a core arc (any entry), 2: the predecessor chain of an entry
    cycles before a root (pred -1: after 1, only the row's node; walked once per row,
    memoised)."""
    k = dist.shape[0]
    for i in range(k):
        for j in range(k):
            p = pred[i, j]
            if p >= 0:
                via, before = weight[p, j], dist[i, p]
                if via == INF or before == INF or before + via != dist[i, j]:
                    return 1
    state = np.zeros(k, np.int8)          # 1 reaches the row's node, 2 on this walk
    for i in range(k):
        state[:] = 0
        state[i] = 1
        for j in range(k):
            x = j
            while state[x] == 0 and pred[i, x] >= 0:
                state[x] = 2
                x = pred[i, x]
            if state[x] == 2:
                return 2                  # back on this walk: a cycle (else a root)
            x = j
            while state[x] == 2:
                state[x] = 1
                x = pred[i, x]
    return 0


@_jit
def _shortened(dist, us, vs, weight):
    """Does a core arc (u, v) shorten a row: dist[i, v] > dist[i, u] + weight[u, v]?
    Column by column (the transpose's rows), so the loop over rows runs in SIMD."""
    by_column = np.ascontiguousarray(dist.T)
    bad = False
    for e in range(us.size):
        du, dv, w = by_column[us[e]], by_column[vs[e]], weight[us[e], vs[e]]
        for i in range(du.size):
            bad |= (du[i] != INF) & (dv[i] > du[i] + w)
        if bad:
            return True
    return False


def _check_records(path, iterations: list, params: dict) -> None:
    """Per-iteration records and parameters as summary() reads them: numbers in ms."""
    def number(x) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    for r in iterations:
        if not (isinstance(r, dict) and isinstance(r.get("ms"), dict) and
                all(number(v) for v in r["ms"].values())):
            raise LoadError(path, "damaged hierarchy: an iteration record is malformed")
    if not number(params.get("apsp_ms", 0.0)):
        raise LoadError(path, "damaged hierarchy: params 'apsp_ms' is not a number")
    if params.get("model", NODE_BASED) not in MODELS:
        raise LoadError(path, f"damaged hierarchy: params 'model' must be one of {', '.join(MODELS)}")
    for key in ("road_nodes", "road_arcs"):       # a turn-aware one's road graph
        value = params.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < INT32_MAX:
            raise LoadError(path, f"damaged hierarchy: params '{key}' is not a count")
