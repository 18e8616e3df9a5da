"""Bi-criteria hierarchy files (``.rlb``, engine.csp.hierarchy.file): the arrays and
metadata read and written, and the validator, run on every load before the layered
graph, the labeling or a kernel indexes an array.

Beyond dtypes, shapes and ranges it checks what keeps answers exact: every shortcut
is the concatenation of its two children (ends, length and cost), no arc joins two
nodes of one contracted level (each level is an independent set, which the layered
graph's up/down split relies on), the search arcs go between levels (or across the
core), and every arc between levels that the search leaves out is dominated by a
search arc with the same ends (a parallel arc dropped). All O(n + h log h).
What no cheap check can prove is that contraction kept every Pareto-optimal path (the
witness searches); that rests, as for the CH files, on the builder.
"""
from __future__ import annotations

from types import SimpleNamespace

import numba
import numpy as np

from engine.core.graph import GraphError, path_cost_bound
from engine.io.checks import INT32_MAX, in_range, need
from engine.io.errors import LoadError
from engine.io.hierarchy_file import check_counts
from engine.io.npz import read_meta, read_npz, write_npz

FORMAT = "routelab-pareto-hierarchy"
VERSION = 2                     # 2: arc_child and arcs as int32 (half the size of 1)
SUFFIX = ".rlb"
WHAT = "RouteLab bi-criteria hierarchy"
ARRAYS = ("level", "arc_tail", "arc_head", "arc_length", "arc_cost", "arc_child", "arcs")
PARETO_HIERARCHY_KEYS = {"num_nodes": int, "num_levels": int, "num_original_arcs": int,
                         "metrics": list, "metric_hashes": list, "params": dict}


def write_pareto_hierarchy(path, arrays: dict, meta: dict):
    """The ARRAYS and the metadata of a bi-criteria hierarchy, written atomically."""
    return write_npz(path, {name: arrays[name] for name in ARRAYS},
                     {"format": FORMAT, "version": VERSION, **meta})


def read_pareto_hierarchy(path) -> tuple[dict, dict]:
    """(metadata, arrays) of a bi-criteria hierarchy file, refused (LoadError naming
    the file and the reason) unless every array passes ``check_pareto_hierarchy``."""
    arrays = read_npz(path, WHAT)
    meta = read_meta(path, arrays, FORMAT, VERSION, WHAT, PARETO_HIERARCHY_KEYS)
    missing = [name for name in ARRAYS if name not in arrays]
    if missing:
        raise LoadError(path, f"damaged {WHAT}: {missing[0]} is missing")
    names, hashes = meta["metrics"], meta["metric_hashes"]
    if not (len(names) == len(hashes) == 2 and all(isinstance(x, str) for x in names + hashes)):
        raise LoadError(path, f"damaged {WHAT}: metrics and metric_hashes must be two names "
                              "and two hashes")
    arrays = {name: arrays[name] for name in ARRAYS}
    counts = {k: meta[k] for k in ("num_nodes", "num_levels", "num_original_arcs")}
    check_pareto_hierarchy(SimpleNamespace(**counts, **arrays), path)
    return meta, arrays


def check_pareto_hierarchy(h, path=None) -> None:
    """Refuse, with ``path`` and the reason, a ParetoHierarchy whose arrays are
    inconsistent."""
    n, levels, m = h.num_nodes, h.num_levels, h.num_original_arcs
    check_counts(path, n, levels, m)
    level = need(path, h.level, "level", np.int32, (n,))
    in_range(path, level, "level", 0, levels)
    _check_arcs(path, h, n, m)
    _check_levels(path, h, level, levels)


def _check_arcs(path, h, n: int, m: int) -> None:
    """Arc table: ends in range, weights bounded, originals childless, shortcuts = their
    first child then their second, with the sums of their lengths and costs."""
    tail = need(path, h.arc_tail, "arc_tail", np.int32, (None,))
    total = tail.size
    if total < m or total >= INT32_MAX:
        raise LoadError(path, f"{total} hierarchy arcs for {m} original arcs")
    head = need(path, h.arc_head, "arc_head", np.int32, (total,))
    child = need(path, h.arc_child, "arc_child", np.int32, (total, 2))
    in_range(path, tail, "arc tail", 0, n - 1)
    in_range(path, head, "arc head", 0, n - 1)
    for name in ("length", "cost"):
        w = need(path, getattr(h, f"arc_{name}"), f"arc_{name}", np.int64, (total,))
        in_range(path, w[:m], f"original arc {name}", 0, INT32_MAX)
        try:
            bound = path_cost_bound(n, w[:m])
        except GraphError as e:
            raise LoadError(path, str(e)) from None
        in_range(path, w, f"arc {name}", 0, bound)
    if np.any(child[:m] != -1):
        raise LoadError(path, "an original arc has children")
    s = np.arange(m, total)
    c1, c2 = child[m:, 0], child[m:, 1]
    if np.any((c1 < 0) | (c1 >= s) | (c2 < 0) | (c2 >= s)):
        raise LoadError(path, "a shortcut's child is not an earlier arc")
    if np.any((tail[c1] != tail[s]) | (head[c1] != tail[c2]) | (head[c2] != head[s])):
        raise LoadError(path, "a shortcut's ends are not its children's outer ends")
    for name in ("length", "cost"):
        w = getattr(h, f"arc_{name}")
        if np.any(w[c1] + w[c2] != w[s]):
            raise LoadError(path, f"a shortcut's {name} is not the sum of its children's")


def _check_levels(path, h, level: np.ndarray, levels: int) -> None:
    """Independent levels, search arcs between levels, left-out arcs dominated."""
    tail, head = h.arc_tail, h.arc_head
    proper = tail != head                                   # loops are never searched
    lt, lh = level[tail], level[head]
    if np.any(proper & (lt == lh) & (lt < levels)):
        raise LoadError(path, "an arc joins two nodes of the same contracted level")
    arcs = need(path, h.arcs, "arcs", np.int32, (None,))
    in_range(path, arcs, "arcs", 0, tail.size - 1)
    if np.any(arcs[1:] <= arcs[:-1]):
        raise LoadError(path, "arcs is not sorted without repeats")
    if np.any(~proper[arcs]):
        raise LoadError(path, "a search arc is a loop")
    listed = np.zeros(tail.size, np.bool_)
    listed[arcs] = True
    left_out = np.flatnonzero(proper & ~listed)
    if left_out.size and not _dominated(tail.astype(np.int64) * h.num_nodes + head, h.arc_length,
                                        h.arc_cost, arcs, left_out):
        raise LoadError(path, "an arc between levels is left out of the search arcs, and no "
                              "search arc with its ends is as short and as cheap")


def _dominated(key, length, cost, listed, left_out) -> bool:
    """Is every left-out arc dominated (length and cost no larger) by a listed arc with
    the same key (tail, head)?"""
    ids = np.concatenate([listed, left_out])
    later = np.concatenate([np.zeros(listed.size, np.int8), np.ones(left_out.size, np.int8)])
    order = np.lexsort((later, length[ids], key[ids]))
    return _scan(key[ids][order], cost[ids][order], later[order])


@numba.njit(cache=True)
def _scan(key, cost, later):
    """In (key, length, listed first) order: each left-out entry needs a listed entry of
    its key before it whose cost is no larger (its length is no larger by the order)."""
    best = np.iinfo(np.int64).max
    for i in range(key.size):
        if i == 0 or key[i] != key[i - 1]:
            best = np.iinfo(np.int64).max
        if later[i] == 0:
            best = min(best, cost[i])
        elif best > cost[i]:
            return False
    return True
