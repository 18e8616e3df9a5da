"""Contraction hierarchy files (``.rlh``, engine.ch.hierarchy.Hierarchy.save/load): the
arrays and metadata read and written, and the validator, run on every load before
PHAST, the CH query or the GPU kernels index an array.

Beyond dtypes, shapes and ranges it checks what makes distances right: every
shortcut is the concatenation of its two children (ends and weight), up/down arcs
go from their level to a higher one, the core is exactly the top level, and the
core matrix is certified as the core's shortest distances — every finite entry is
realised by its predecessor chain and no core arc can shorten any entry (Bellman's
optimality conditions). All O(n + h + k² log k), vectorised.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from engine.core.graph import GraphError, path_cost_bound
from engine.io.checks import INT32_MAX, in_range, need, offsets
from engine.io.errors import LoadError
from engine.io.npz import read_meta, read_npz, write_npz

FORMAT = "routelab-hierarchy"
VERSION = 1
WHAT = "RouteLab hierarchy"
ARRAYS = ("node_level", "arc_tail", "arc_head", "arc_weight", "arc_child1", "arc_child2",
          "up_first", "up_harc", "down_first", "down_harc", "core_nodes", "core_dist",
          "core_pred")
INF = int(np.iinfo(np.int64).max)
# params["model"]: what the hierarchy was contracted from (absent in older files: the
# road graph). A turn-aware one holds engine.model's expanded graph.
NODE_BASED, TURN_AWARE = "node_based", "turn_aware"
MODELS = (NODE_BASED, TURN_AWARE)
HIERARCHY_KEYS = {"metric": str, "metric_hash": str, "num_nodes": int, "num_levels": int,
                  "num_original_arcs": int, "iterations": list, "params": dict}
_CHUNK = 1 << 20         # matrix entries per step of the core checks (8 MiB of int64)
_MAX_DIST = 1 << 62      # above any path cost of a valid graph, so sums of two fit int64


def write_hierarchy(path, arrays: dict, meta: dict):
    """The ARRAYS and the metadata (HIERARCHY_KEYS) of a hierarchy, written atomically."""
    return write_npz(path, {name: arrays[name] for name in ARRAYS},
                     {"format": FORMAT, "version": VERSION, **meta})


def read_hierarchy(path) -> tuple[dict, dict]:
    """(metadata, arrays) of a hierarchy file, refused (LoadError naming the file)
    unless every array passes ``check_hierarchy``."""
    arrays = read_npz(path, WHAT)
    meta = read_meta(path, arrays, FORMAT, VERSION, WHAT, HIERARCHY_KEYS)
    missing = [name for name in ARRAYS if name not in arrays]
    if missing:
        raise LoadError(path, f"damaged hierarchy: {missing[0]} is missing")
    _check_records(path, meta["iterations"], meta["params"])
    arrays = {name: arrays[name] for name in ARRAYS}
    check_hierarchy(SimpleNamespace(**{k: meta[k] for k in HIERARCHY_KEYS}, **arrays), path)
    return meta, arrays


def check_hierarchy(h, path=None) -> None:
    """Refuse, with ``path`` and the reason, a Hierarchy whose arrays are inconsistent."""
    n, levels, m = h.num_nodes, h.num_levels, h.num_original_arcs
    check_counts(path, n, levels, m)
    if h.metric_hash and (len(h.metric_hash) != 16 or
                          any(c not in "0123456789abcdef" for c in h.metric_hash)):
        raise LoadError(path, "metric_hash is not a metric hash")
    level = need(path, h.node_level, "node_level", np.int32, (n,))
    in_range(path, level, "node_level", 0, levels)
    _check_arcs(path, h, n, m)
    for side in ("up", "down"):
        _check_side(path, h, side, level, levels)
    _check_complete(path, h, level)
    _check_core(path, h, level, levels)


def check_counts(path, n, levels, m) -> None:
    """A hierarchy's node, level and original-arc counts: non-negative integers, levels
    ≤ nodes < 2^31-1 (also engine.io.pareto_hierarchy_file's)."""
    for name, value in (("num_nodes", n), ("num_levels", levels), ("num_original_arcs", m)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise LoadError(path, f"{name} must be a non-negative integer")
    if n >= INT32_MAX or levels > n or m >= INT32_MAX:
        raise LoadError(path, f"num_nodes {n}, num_levels {levels} or num_original_arcs {m} "
                              "out of range (levels ≤ nodes < 2^31-1)")


def _check_arcs(path, h, n: int, m: int) -> None:
    """Arc table: ends in range, originals childless, shortcuts = child1 then child2."""
    tail = need(path, h.arc_tail, "arc_tail", np.int64, (None,))
    total = tail.size
    if total < m or total >= INT32_MAX:
        raise LoadError(path, f"{total} hierarchy arcs for {m} original arcs")
    head = need(path, h.arc_head, "arc_head", np.int64, (total,))
    w = need(path, h.arc_weight, "arc_weight", np.int64, (total,))
    c1 = need(path, h.arc_child1, "arc_child1", np.int64, (total,))
    c2 = need(path, h.arc_child2, "arc_child2", np.int64, (total,))
    in_range(path, tail, "arc tail", 0, n - 1)
    in_range(path, head, "arc head", 0, n - 1)
    in_range(path, w[:m], "original arc weight", 0, INT32_MAX)
    try:
        bound = path_cost_bound(n, w[:m])
    except GraphError as e:
        raise LoadError(path, str(e)) from None
    in_range(path, w, "arc weight", 0, bound)
    if np.any(c1[:m] != -1) or np.any(c2[:m] != -1):
        raise LoadError(path, "an original arc has children")
    s = np.arange(m, total)
    c1, c2 = c1[m:], c2[m:]
    if np.any((c1 < 0) | (c1 >= s) | (c2 < 0) | (c2 >= s)):
        raise LoadError(path, "a shortcut's child is not an earlier arc")
    if np.any((tail[c1] != tail[s]) | (head[c1] != tail[c2]) | (head[c2] != head[s])):
        raise LoadError(path, "a shortcut's ends are not its children's outer ends")
    if np.any(w[c1] + w[c2] != w[s]):
        raise LoadError(path, "a shortcut's weight is not the sum of its children's weights")


def _check_side(path, h, side: str, level: np.ndarray, levels: int) -> None:
    """``{side}_first`` delimits the levels of ``{side}_harc``; each arc of level l goes
    from l up (down: into l from higher); up arcs are sorted by tail within a level."""
    first = need(path, getattr(h, f"{side}_first"), f"{side}_first", np.int64, (levels + 1,))
    harc = need(path, getattr(h, f"{side}_harc"), f"{side}_harc", np.int64, (None,))
    offsets(path, first, f"{side}_first", harc.size)
    in_range(path, harc, f"{side}_harc", 0, h.arc_tail.size - 1)
    slot_level = np.repeat(np.arange(levels, dtype=np.int32), np.diff(first))
    near, far = (h.arc_tail, h.arc_head) if side == "up" else (h.arc_head, h.arc_tail)
    near_level, far_level = level[near[harc]], level[far[harc]]
    if np.any(near_level != slot_level) or np.any(far_level <= slot_level):
        word = "leave" if side == "up" else "enter"
        raise LoadError(path, f"{side}_harc holds an arc that does not {word} its level "
                              "toward a higher one")
    if side == "up":
        tails = h.arc_tail[harc]
        if np.any((tails[1:] < tails[:-1]) & (slot_level[1:] == slot_level[:-1])):
            raise LoadError(path, "up_harc is not sorted by tail within a level")


def _check_complete(path, h, level: np.ndarray) -> None:
    """Each arc appears at most once in up/down; one between levels that is in neither
    must be dominated by a listed arc with the same ends (a parallel arc dropped)."""
    listed = np.concatenate([h.up_harc, h.down_harc])
    # a count per arc id (ids are in range: _check_side): np.unique hashes, 20x slower
    if listed.size and np.bincount(listed, minlength=h.arc_tail.size).max() > 1:
        raise LoadError(path, "an arc appears twice in up_harc/down_harc")
    crossing = level[h.arc_tail] != level[h.arc_head]
    crossing[listed] = False
    left_out = np.flatnonzero(crossing)
    if not left_out.size:
        return
    tails = np.zeros(h.num_nodes, dtype=bool)          # few: look only at listed arcs
    tails[h.arc_tail[left_out]] = True                 # that leave the same nodes
    listed = listed[tails[h.arc_tail[listed]]]
    n = np.int64(h.num_nodes)
    key_listed = h.arc_tail[listed] * n + h.arc_head[listed]
    key_left = h.arc_tail[left_out] * n + h.arc_head[left_out]
    order = np.lexsort((h.arc_weight[listed], key_listed))
    sorted_keys = key_listed[order]
    first = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) \
        if sorted_keys.size else np.zeros(0, dtype=np.int64)
    keys = sorted_keys[first]
    best = h.arc_weight[listed][order][first]
    pos = np.minimum(np.searchsorted(keys, key_left), max(keys.size - 1, 0))
    if not keys.size or np.any((keys[pos] != key_left) |
                               (best[pos] > h.arc_weight[left_out])):
        raise LoadError(path, "an arc between levels is in neither up_harc nor down_harc")


def _check_core(path, h, level: np.ndarray, levels: int) -> None:
    """Core nodes = the top level; core_dist/core_pred certified as shortest distances."""
    core = need(path, h.core_nodes, "core_nodes", np.int64, (None,))
    k = core.size
    in_range(path, core, "core node", 0, h.num_nodes - 1)
    if not np.array_equal(np.sort(core), np.flatnonzero(level == levels)):
        raise LoadError(path, f"core_nodes are not exactly the nodes of the top level {levels}")
    dist = need(path, h.core_dist, "core_dist", np.int64, (k, k))
    pred = need(path, h.core_pred, "core_pred", np.int32, (k, k))
    finite = dist != INF
    if np.any(dist < 0) or np.any(dist[finite] > _MAX_DIST) or np.any(np.diagonal(dist) != 0):
        raise LoadError(path, "core_dist has a negative or too large entry, or a non-zero "
                              "diagonal")
    in_range(path, pred, "core_pred", -1, k - 1)
    np.fill_diagonal(finite, False)
    if np.any((pred >= 0) != finite):
        raise LoadError(path, "core_pred and core_dist disagree on which pairs are connected")
    weight = _core_arc_matrix(h, level, levels, core)
    _check_realised(path, dist, pred, weight, finite)
    _check_tight(path, dist, weight)


def _core_arc_matrix(h, level, levels: int, core: np.ndarray) -> np.ndarray:
    """k × k: the least weight of a hierarchy arc between two core nodes (INF: none)."""
    k = core.size
    position = np.full(h.num_nodes, -1, dtype=np.int64)
    position[core] = np.arange(k)
    arcs = np.flatnonzero((level[h.arc_tail] == levels) & (level[h.arc_head] == levels))
    weight = np.full((k, k), INF, dtype=np.int64)
    np.minimum.at(weight, (position[h.arc_tail[arcs]], position[h.arc_head[arcs]]),
                  h.arc_weight[arcs])
    return weight


def _check_realised(path, dist, pred, weight, finite) -> None:
    """Every finite entry = the entry of its predecessor + a core arc, and the chain of
    predecessors leads back to the row's node (checked by pointer doubling)."""
    k = dist.shape[0]
    rows, cols = np.nonzero(finite)
    p = pred[rows, cols].astype(np.int64)
    via = weight[p, cols]
    if np.any(via == INF) or np.any(dist[rows, p] == INF) or \
            np.any(dist[rows, p] + via != dist[rows, cols]):
        raise LoadError(path, "core_dist is not realised by core arcs along core_pred")
    up = np.where(pred >= 0, pred, np.arange(k, dtype=np.int32)[:, None]).astype(np.int64)
    for _ in range(max(1, int(k).bit_length())):
        up = np.take_along_axis(up, up, axis=1)
    if np.any(up[finite] != np.repeat(np.arange(k), finite.sum(axis=1))):
        raise LoadError(path, "core_pred has a cycle that never reaches its row's node")


def _check_tight(path, dist, weight) -> None:
    """No core arc (u, v, w) shortens any row: dist[i, v] <= dist[i, u] + w."""
    us, vs = np.nonzero(weight != INF)
    by_column = np.ascontiguousarray(dist.T)            # column u of dist as a row: gathered fast
    step = max(1, _CHUNK // max(dist.shape[0], 1))
    for lo in range(0, us.size, step):
        u, v = us[lo:lo + step], vs[lo:lo + step]
        du = by_column[u]
        through = np.where(du == INF, INF, du + weight[u, v][:, None])
        if np.any(by_column[v] > through):
            raise LoadError(path, "core_dist is not the shortest distance: a core arc shortens it")


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
