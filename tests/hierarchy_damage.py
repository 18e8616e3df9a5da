"""Hierarchy files with shortcuts dropped and consistent in every other way, as the #35
audit made them: the witness checks' tests (tests/engine/test_hierarchy_proof.py,
tests/app/test_cli_check.py) and the benchmark (scripts/benchmarks/proof.py) use them.
Only NumPy and the validators: no test framework."""
from __future__ import annotations

import dataclasses

import numpy as np

from engine.io.hierarchy_file import check_hierarchy
from engine.io.pareto_hierarchy_file import check_pareto_hierarchy


def droppable(h) -> np.ndarray:
    """The shortcuts the query searches (listed) that no shortcut names as a child and
    that stand for no left-out parallel arc: the ones a file can lose and stay
    consistent in every other way."""
    m, n = h.num_original_arcs, h.num_nodes
    children = np.concatenate([h.arc_child1[m:], h.arc_child2[m:]])
    listed = np.concatenate([h.up_harc, h.down_harc])
    key = h.arc_tail.astype(np.int64) * n + h.arc_head
    left_out = np.ones(key.size, bool)
    left_out[listed] = False
    left_out &= h.node_level[h.arc_tail] != h.node_level[h.arc_head]
    out = np.setdiff1d(listed[listed >= m], children)
    return out[~np.isin(key[out], key[left_out])]


def edited(h, drop=(), extra=None):
    """A copy of hierarchy ``h`` without the arcs ``drop`` and, with ``extra`` = (tail,
    head, weight), one more original arc (listed nowhere); arc ids renumbered, the
    up/down lists kept level by level."""
    total, m = h.arc_tail.size, h.num_original_arcs
    keep = np.ones(total, bool)
    keep[np.asarray(drop, np.int64)] = False
    new = np.cumsum(keep) - 1
    if extra is not None:
        new[m:] += 1

    def renumber(ids):
        ids = np.asarray(ids)
        return np.where(ids >= 0, new[np.maximum(ids, 0)], -1)

    arrays = {"arc_tail": h.arc_tail[keep], "arc_head": h.arc_head[keep],
              "arc_weight": h.arc_weight[keep], "arc_child1": renumber(h.arc_child1[keep]),
              "arc_child2": renumber(h.arc_child2[keep])}
    if extra is not None:
        for name, value in zip(("arc_tail", "arc_head", "arc_weight", "arc_child1",
                                "arc_child2"), (*extra, -1, -1)):
            arrays[name] = np.insert(arrays[name], m, value)
    for side in ("up", "down"):
        first, harc = getattr(h, f"{side}_first"), getattr(h, f"{side}_harc")
        parts = [harc[first[lv]:first[lv + 1]] for lv in range(h.num_levels)]
        parts = [renumber(p[keep[p]]) for p in parts]
        arrays[f"{side}_first"] = np.concatenate([[0], np.cumsum([p.size for p in parts])])
        arrays[f"{side}_harc"] = np.concatenate(parts + [np.zeros(0, np.int64)])
    out = dataclasses.replace(h, **arrays, num_original_arcs=m + (extra is not None))
    check_hierarchy(out)                      # consistent in every other way
    return out


def pareto_droppable(h) -> np.ndarray:
    """Search-arc shortcuts no shortcut names as a child and no left-out arc leans on."""
    m, n = h.num_original_arcs, h.num_nodes
    key = h.arc_tail.astype(np.int64) * n + h.arc_head
    left_out = np.ones(key.size, bool)
    left_out[h.arcs] = False
    left_out &= h.arc_tail != h.arc_head
    out = np.setdiff1d(h.arcs[h.arcs >= m], h.arc_child[m:].ravel())
    return out[~np.isin(key[out], key[left_out])]


def pareto_edited(h, drop):
    """A copy of ParetoHierarchy ``h`` without the arcs ``drop``, ids renumbered."""
    keep = np.ones(h.arc_tail.size, bool)
    keep[np.asarray(drop, np.int64)] = False
    new = (np.cumsum(keep) - 1).astype(np.int32)
    child = h.arc_child[keep]
    out = dataclasses.replace(
        h, arc_tail=h.arc_tail[keep], arc_head=h.arc_head[keep],
        arc_length=h.arc_length[keep], arc_cost=h.arc_cost[keep],
        arc_child=np.where(child >= 0, new[np.maximum(child, 0)], -1).astype(np.int32),
        arcs=new[h.arcs[keep[h.arcs]]])
    check_pareto_hierarchy(out)
    return out
