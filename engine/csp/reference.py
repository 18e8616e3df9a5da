"""The independent reference for cost-budgeted paths: a plain heap-based label-setting
search with no bounds, in pure Python (issue #14, step 3).

Clarity first, and no import from the fast engine, so that the tests compare two
separate implementations. A label is (vertex, length, cost, parent label, arc); labels
leave the heap in (length, cost) order; each vertex keeps its list of non-dominated
labels and a new label that one of them dominates (both length and cost no larger,
equality included) is dropped. Lengths and costs are summed as Python ints (no
overflow). Every function takes the graph's flat arrays (``first_out``, ``head``,
and one length and one cost per arc), node ids are internal indices.
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right

import numpy as np


class _Labels:
    """Labels as parallel lists; ``alive[i]`` is False once a later label dominated i."""

    def __init__(self) -> None:
        self.node: list[int] = []
        self.length: list[int] = []
        self.cost: list[int] = []
        self.parent: list[int] = []
        self.arc: list[int] = []
        self.alive: list[bool] = []

    def add(self, node: int, length: int, cost: int, parent: int, arc: int) -> int:
        self.node.append(node)
        self.length.append(length)
        self.cost.append(cost)
        self.parent.append(parent)
        self.arc.append(arc)
        self.alive.append(True)
        return len(self.node) - 1

    def arcs_to(self, label: int) -> np.ndarray:
        """Arc ids of the path that ends in ``label``, from the source on."""
        arcs = []
        while self.parent[label] >= 0:
            arcs.append(self.arc[label])
            label = self.parent[label]
        return np.asarray(arcs[::-1], dtype=np.int64)


class _Front:
    """A vertex's non-dominated labels, sorted by length ascending; costs then strictly
    descend, so one binary search answers "is (l, c) dominated?"."""

    __slots__ = ("lengths", "costs", "ids")

    def __init__(self) -> None:
        self.lengths: list[int] = []
        self.costs: list[int] = []
        self.ids: list[int] = []


def _insert(labels: _Labels, front: _Front, node: int, length: int, cost: int,
            parent: int, arc: int) -> int | None:
    """Add a label at ``node`` unless a label of ``front`` dominates it; the labels it
    dominates are marked dead and leave the front."""
    lengths, costs, ids = front.lengths, front.costs, front.ids
    hi = bisect_right(lengths, length)          # [0, hi): length <= ours, least cost at hi-1
    if hi and costs[hi - 1] <= cost:
        return None
    lo = bisect_left(lengths, length)           # [lo, hi): same length, higher cost
    end = hi
    while end < len(costs) and costs[end] >= cost:   # longer and no cheaper
        end += 1
    for i in ids[lo:end]:
        labels.alive[i] = False
    new = labels.add(node, length, cost, parent, arc)
    lengths[lo:end], costs[lo:end], ids[lo:end] = [length], [cost], [new]
    return new


def _label_setting(first_out, head, length, cost, source: int, target: int,
                   max_cost: int | None, stop_at_target: bool) -> tuple[_Labels, list[int]]:
    """Run the search; return the labels and the target's non-dominated list. With
    ``stop_at_target`` it stops when the first target label leaves the heap: that one
    has the least length (and, among those, the least cost) within ``max_cost``."""
    first_out, head = np.asarray(first_out).tolist(), np.asarray(head).tolist()
    length, cost = np.asarray(length).tolist(), np.asarray(cost).tolist()
    labels = _Labels()
    fronts: list[_Front | None] = [None] * (len(first_out) - 1)
    fronts[source] = _Front()
    start = _insert(labels, fronts[source], source, 0, 0, -1, -1)
    heap = [(0, 0, start)]
    alive, node, heappop, heappush = labels.alive, labels.node, heapq.heappop, heapq.heappush
    limit = float("inf") if max_cost is None else max_cost
    while heap:
        l, c, i = heappop(heap)
        if not alive[i]:
            continue
        v = node[i]
        if v == target and stop_at_target:
            return labels, [i]
        for a in range(first_out[v], first_out[v + 1]):
            nc = c + cost[a]
            if nc > limit:
                continue
            w = head[a]
            front = fronts[w]
            if front is None:
                front = fronts[w] = _Front()
            new = _insert(labels, front, w, l + length[a], nc, i, a)
            if new is not None:
                heappush(heap, (l + length[a], nc, new))
    return labels, ([] if stop_at_target or fronts[target] is None else fronts[target].ids)


def reference_csp(first_out, head, length, cost, source: int, target: int,
                  budget: int) -> tuple[int, int, np.ndarray] | None:
    """The least length of a ``source`` -> ``target`` path whose cost is at most
    ``budget``: (length, that path's cost, its arc ids), or None when no path is within
    the budget (an unreachable target included). Among paths of the least length the
    one of least cost is reported."""
    if budget < 0:
        return None
    labels, found = _label_setting(first_out, head, length, cost, int(source), int(target),
                                   int(budget), stop_at_target=True)
    if not found:
        return None
    i = found[0]
    return labels.length[i], labels.cost[i], labels.arcs_to(i)


def reference_pareto(first_out, head, length, cost, source: int, target: int,
                     max_cost: int | None = None) -> list[tuple[int, int]]:
    """Every non-dominated (length, cost) pair of ``source`` -> ``target`` paths, by
    length ascending (so cost descending); only pairs with cost <= ``max_cost`` when
    given. Empty when the target is unreachable (or nothing is within ``max_cost``)."""
    if max_cost is not None and max_cost < 0:
        return []
    labels, front = _label_setting(first_out, head, length, cost, int(source), int(target),
                                   None if max_cost is None else int(max_cost),
                                   stop_at_target=False)
    return sorted((labels.length[i], labels.cost[i]) for i in front)


def least_cost(first_out, head, cost, source: int, target: int) -> int | None:
    """The least cost of any ``source`` -> ``target`` path (plain Dijkstra), or None
    when the target is unreachable."""
    first_out, head = np.asarray(first_out).tolist(), np.asarray(head).tolist()
    cost = np.asarray(cost).tolist()
    best = {int(source): 0}
    heap = [(0, int(source))]
    while heap:
        d, v = heapq.heappop(heap)
        if v == target:
            return d
        if d > best[v]:
            continue
        for a in range(first_out[v], first_out[v + 1]):
            w, nd = head[a], d + cost[a]
            if nd < best.get(w, nd + 1):
                best[w] = nd
                heapq.heappush(heap, (nd, w))
    return None


def path_totals(first_out, head, length, cost, source: int, target: int,
                arcs) -> tuple[int, int]:
    """(length, cost) of the path given by its arc ids; ValueError unless the arcs
    form a walk from ``source`` to ``target``. For checking any engine's answer."""
    first_out, head = np.asarray(first_out), np.asarray(head)
    at, total_l, total_c = int(source), 0, 0
    for a in np.asarray(arcs, dtype=np.int64).tolist():
        if not 0 <= a < head.size or not first_out[at] <= a < first_out[at + 1]:
            raise ValueError(f"arc {a} does not leave node {at}")
        at = int(head[a])
        total_l += int(length[a])
        total_c += int(cost[a])
    if at != int(target):
        raise ValueError(f"the path ends at node {at}, not at the target {target}")
    return total_l, total_c


# ------------------------------------------------------------ compiled, for large graphs
def reference_csp_compiled(first_out, head, length, cost, source: int, target: int,
                           budget: int) -> tuple[int, int] | None:
    """``reference_csp``'s (length, cost) in compiled code, for graphs where pure Python
    takes minutes (NY Q2/Q3). The same plain search written for speed: labels leave a
    heap in (length, cost) order, so at every vertex they leave with non-decreasing
    length and a label is dominated exactly when one that left before costs no more
    (one least cost per vertex stands for the non-dominated list). No bounds."""
    from engine.csp._reference_numba import plain_label_setting
    if budget < 0:
        return None
    found = plain_label_setting(np.asarray(first_out, np.int64), np.asarray(head, np.int64),
                                np.asarray(length, np.int64), np.asarray(cost, np.int64),
                                int(source), int(target), int(budget))
    return None if found[0] < 0 else (int(found[0]), int(found[1]))
