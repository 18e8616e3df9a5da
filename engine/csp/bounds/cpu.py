"""The bounds Vine lacks: exact distances TO the target, by cost and by length.

Two Dijkstras from dst on the reversed graph give, for the nodes that matter,
lb_c(v) = the least cost of a v->dst path and lb_l(v) = its least length. They are
exact, hence admissible and consistent lower bounds for any label at v, and each
search's tree gives a path from src: the least-cost path (whose length becomes the
incumbent) and the shortest path (the answer when it fits the budget).

Each search stops at a radius: the cost search once it passes the budget (a node
farther by cost can never finish within it), the length search once it passes the
incumbent (a label there cannot beat it); both go on until src is settled. Nodes
beyond the radius get INF, which the labeling reads as "prune", so the bounds cost
what the query needs, not a whole one-to-all search each.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from engine.core.arrays import grow
from engine.core.heaps import pop, push

INF = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Bounds:
    length: np.ndarray       # int64 [n] least length to the target (INF: none, or past the radius)
    cost: np.ndarray         # int64 [n] least cost to the target (INF: none, or past the radius)
    length_next: np.ndarray  # int32 [n] the first arc of a shortest path to the target (-1)
    cost_next: np.ndarray    # int32 [n] the first arc of a least-cost path to the target (-1)
    cost_along: np.ndarray   # int64 [n] the cost of that shortest path (a completion's cost)
    length_along: np.ndarray  # int64 [n] the length of that least-cost path
    ms: float = 0.0


@dataclass(frozen=True)
class ReverseGraph:
    """The arcs entering each node, with both weights stored in that order."""
    first_in: np.ndarray     # [n+1]
    tail: np.ndarray         # int32 [m]
    arc: np.ndarray          # int32 [m] forward arc id
    length: np.ndarray       # int64 [m]
    cost: np.ndarray         # int64 [m]

    @classmethod
    def of(cls, graph, length: np.ndarray, cost: np.ndarray) -> "ReverseGraph":
        b = graph.backward
        return cls(b.first_in, b.tail, b.in_arc, np.ascontiguousarray(length[b.in_arc]),
                   np.ascontiguousarray(cost[b.in_arc]))


MAX_BUCKETS = 1 << 22        # Dial's buckets: weights up to this; a heap above it
_POOL = ThreadPoolExecutor(2, thread_name_prefix="csp-bounds")   # Numba releases the GIL


@numba.njit(cache=True, nogil=True)
def reverse_search(first_in, in_tail, in_arc, w, target, source, radius, dist, next_arc,
                   head, other, along, dial):
    """Distances to ``target`` over the reversed graph (``dist`` all INF, ``along``
    all -1 on entry), exact up to the radius and at ``source``; each node's first arc
    towards the target in ``next_arc``, and in ``along`` the sum of ``other`` (the
    other metric, per forward arc) along that tree path, set when the node settles
    (-1: never settled, its dist not exact).

    The queue is Dial's buckets with ``dial`` (integral weights below MAX_BUCKETS: a
    circular array of max weight + 1 bucket lists, O(1) push and pop, about 3x a
    binary heap on road networks), else a binary heap."""
    n = dist.size
    width = 1
    if dial:
        for i in range(w.size):
            width = max(width, w[i] + 1)
    bucket = np.full(width, -1, np.int64)       # Dial: the first entry of each bucket
    nxt = np.empty(n + w.size + 1, np.int64)    # Dial: the next entry; heap: its keys
    item = np.empty(n + w.size + 1, np.int64)   # the node of each entry
    dist[target] = 0
    used, d = 1, 0
    if dial:
        bucket[0], nxt[0], item[0] = 0, -1, target
        size = 1
    else:
        size = push(nxt, item, 0, 0, target)
    source_done = False
    while size > 0:
        if dial:
            e = bucket[d % width]
            if e < 0:
                d += 1
                continue
            bucket[d % width] = nxt[e]
            size -= 1
            v = item[e]
        else:
            d, v, size = pop(nxt, item, size)
        if d > dist[v]:
            continue
        if d > radius[0] and source_done:
            break
        if v == source:
            source_done = True
        a = next_arc[v]               # the other metric along the tree (parent settled first)
        along[v] = 0 if v == target else along[head[a]] + other[a]
        for i in range(first_in[v], first_in[v + 1]):
            u = in_tail[i]
            nd = d + w[i]
            if nd < dist[u]:
                dist[u] = nd
                next_arc[u] = in_arc[i]
                if dial:
                    slot = nd % width
                    item[used], nxt[used] = u, bucket[slot]
                    bucket[slot] = used
                    used += 1
                    size += 1
                else:
                    size = push(nxt, item, size, nd, u)


def search(rev: ReverseGraph, weight: np.ndarray, other: np.ndarray, head, target: int,
           source: int, radius) -> tuple:
    """One reverse search: (dist, next arc, the other metric along the tree);
    ``radius`` an int64 [1] array that another thread may lower while it runs."""
    n = rev.first_in.size - 1
    dist, nxt, along = np.full(n, INF, np.int64), np.full(n, -1, np.int32), np.full(n, -1, np.int64)
    dial = bool(weight.size) and int(weight.max()) < MAX_BUCKETS
    reverse_search(rev.first_in, rev.tail, rev.arc, weight, int(target), int(source), radius,
                   dist, nxt, head, other, along, dial)
    unsettled = along < 0            # reached past the radius: not exact, so "prune"
    dist[unsettled], nxt[unsettled] = INF, -1
    return dist, nxt, along


def compute_bounds(graph, rev: ReverseGraph, length: np.ndarray, cost: np.ndarray, source: int,
                   target: int, budget: int, full_length: bool = False) -> Bounds:
    """The cost search to the budget and the length search side by side (two
    threads): the length search stops at the least-cost path's length, which the cost
    search posts when it ends (never, with ``full_length``: Pareto sets have no
    incumbent, so it runs to the end)."""
    t0 = time.perf_counter()
    cost_radius = np.array([min(budget, INF - 1)], np.int64)
    length_radius = np.array([INF - 1], np.int64)
    out = {}

    def by_cost():
        out["cost"] = search(rev, rev.cost, length, graph.head, target, source, cost_radius)
        if not full_length and out["cost"][0][source] != INF:
            length_radius[0] = out["cost"][2][source]     # the least-cost path's length

    def by_length():
        out["length"] = search(rev, rev.length, cost, graph.head, target, source, length_radius)

    for f in [_POOL.submit(by_cost), _POOL.submit(by_length)]:
        f.result()
    (dist, length_next, cost_along), (lb_cost, cost_next, length_along) = out["length"], out["cost"]
    return Bounds(dist, lb_cost, length_next, cost_next, cost_along, length_along,
                  (time.perf_counter() - t0) * 1000)


def tree_path(graph, next_arc: np.ndarray, source: int, target: int) -> np.ndarray:
    """The arcs from ``source`` to ``target`` along a reverse search's tree."""
    arcs = _tree_path(graph.head, next_arc, int(source), int(target))
    if arcs.size and arcs[0] < 0:
        raise ValueError("the node is not in the tree")
    return arcs


@numba.njit(cache=True)
def _tree_path(head, next_arc, source, target):
    """The tree's arcs from source to target; [-1] when the walk leaves the tree (or
    loops: more arcs than nodes)."""
    out = np.empty(64, np.int32)
    k, v = 0, source
    while v != target:
        a = next_arc[v]
        if a < 0 or k > next_arc.size:
            return np.full(1, -1, np.int32)
        if k == out.size:
            out = grow(out, k + 1)
        out[k] = a
        k += 1
        v = head[a]
    return out[:k]
