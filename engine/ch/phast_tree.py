"""A PHAST tree kept where it was computed (issue #37: PHAST at scale).

At 24 M nodes a whole tree is 16 bytes per node on the host (distance int64, parent
and parent arc int32): copying it back took 25 times as long as computing it. So a
query leaves the tree on the backend and each reader copies only what it asks for:

- ``distance(v)``: one number;
- ``path(t)``: the path's arcs, walked on the device by one thread (engine/kernels/tree.cu);
- ``bins(factor)``: the window's colouring, every node's distance bin as one byte
  (engine.core.tree_bins: the bins are made on the device too);
- ``reached()``, ``farthest()``: reductions on the device;
- ``to_host()``: the whole ShortestPathTree, for exports and the turn model, into
  pinned host memory (CuPy's pinned pool reuses it from one query to the next).

On the CPU the same class holds host arrays and every reader runs the same code
(``xp`` is numpy), so GPU and CPU answers are compared one to one in tests/gpu.
"""
from __future__ import annotations

import numpy as np

from engine.core import tree_bins
from engine.core.paths import Path, ShortestPathTree, check_node, path_from_arcs, unreachable
from engine.core.timing import Timer

FIRST_WALK = 1 << 16       # arcs room of the first device walk; a longer path walks again


class PhastTree:
    """One source's tree on ``backend``: ``dist`` int64 (-1 unreached) and ``parent_arc``
    int32 (-1 for the source and unreached nodes), arrays of the backend the tree owns.

    ``parents`` is the parent_arc array, or what makes it from the distances when first
    read (a path, the whole tree): the window's colours and single distances need no
    parents, so a tree that is only looked at never pays for them. ``compute_ms`` is
    what was computed so far; ``step_ms`` splits it by step (distances, then parents
    once made)."""

    def __init__(self, graph, metric: str, source: int, dist, parents, tail, backend,
                 compute_ms: float = 0.0, level_ms: dict | None = None,
                 step_ms: dict | None = None) -> None:
        self.graph, self.metric, self.source = graph, metric, int(source)
        self.dist, self.tail = dist, tail
        self._parents = parents
        self.backend = backend
        self.compute_ms = compute_ms
        self.level_ms = level_ms
        self.step_ms = step_ms or {}

    @property
    def parent_arc(self):
        if callable(self._parents):
            timer = Timer(self.backend)
            with timer.step("parents"):
                self._parents = self._parents()
            self.step_ms["parents"] = timer.total_ms()
            self.compute_ms += self.step_ms["parents"]
        return self._parents

    @property
    def xp(self):
        return self.backend.xp

    @property
    def num_nodes(self) -> int:
        return int(self.dist.size)

    def distance(self, node: int) -> int:
        """The distance to ``node``, -1 when it is not reached (8 bytes copied)."""
        check_node(self.graph, node)
        return int(self.dist[int(node)])

    def reached(self) -> int:
        return int(self.xp.count_nonzero(self.dist >= 0))

    def farthest(self) -> int:
        """The largest distance of a reached node (0 when only the source is)."""
        return int(self.dist.max())

    def path(self, target: int) -> Path:
        """The tree's path to ``target`` as original arcs (raises
        engine.core.paths.Unreachable); on the GPU only its arcs are copied."""
        check_node(self.graph, target)
        target = int(target)
        d = self.distance(target)
        if d < 0:
            raise unreachable(self.graph, self.source, target)
        arcs = self._walk_gpu(target) if self.backend.is_gpu else self._walk_cpu(target)
        return path_from_arcs(self.graph, self.source, target, self.metric, d, arcs[::-1])

    def _walk_cpu(self, target: int) -> np.ndarray:
        arcs, v = [], target
        while v != self.source:
            a = int(self.parent_arc[v])
            if a < 0 or len(arcs) > self.num_nodes:
                raise self._broken(v)
            arcs.append(a)
            v = int(self.tail[a])
        return np.asarray(arcs, dtype=np.int32)

    def _walk_gpu(self, target: int) -> np.ndarray:
        xp, room = self.xp, min(FIRST_WALK, self.num_nodes)
        count = xp.zeros(1, dtype=np.int32)
        while True:
            arcs = xp.empty(max(room, 1), dtype=np.int32)
            self.backend.launch("tree", "tree_walk", (self.parent_arc, self.tail,
                                np.int32(self.source), np.int32(target), np.int32(room),
                                arcs, count), grid=(1,), block=(1,))
            k = int(count[0])
            if k == -2 and room < self.num_nodes:    # longer than the first room: all of it
                room = self.num_nodes
                continue
            if k < 0:
                raise self._broken(target)
            return self.backend.to_host(arcs[:k])

    def _broken(self, v: int) -> RuntimeError:
        return RuntimeError(f"broken shortest-path tree at node {self.graph.node_id[v]}")

    def bins(self, factor: float, max_bins: int = tree_bins.MAX_BINS) -> tree_bins.TreeBins:
        """The window's colouring: bins of a nice width in the reading unit (``factor``
        per raw unit) and every node's bin, one byte per node on the host."""
        xp = self.xp
        lows, highs = tree_bins.bin_edges(tree_bins.bodies(xp, self.dist), factor, max_bins)
        node_bin = tree_bins.node_bins(xp, self.dist, lows)
        return tree_bins.TreeBins(lows, highs, self.backend.to_host(node_bin, pinned=True))

    def to_host(self) -> ShortestPathTree:
        """The whole tree on the host: distance int64, parent and parent arc int32."""
        xp, backend = self.xp, self.backend
        if self.tail.size:
            parent = xp.where(self.parent_arc >= 0, self.tail[xp.maximum(self.parent_arc, 0)], -1)
        else:                                      # no arc: nothing has a parent
            parent = xp.full(self.num_nodes, -1)
        parent = parent.astype(np.int32)
        if not backend.is_gpu:
            return ShortestPathTree(self.source, self.metric, self.dist, parent, self.parent_arc)
        return ShortestPathTree(self.source, self.metric, backend.to_host(self.dist, pinned=True),
                                backend.to_host(parent, pinned=True),
                                backend.to_host(self.parent_arc, pinned=True))
