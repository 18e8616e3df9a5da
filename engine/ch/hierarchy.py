"""The Hierarchy that contraction builds: levels, upward/downward arcs by level,
the arc table that unpacks shortcuts, the core's distance matrix, and statistics.

All arrays are host NumPy arrays (saved next to the graph cache); query code
copies what it needs to the device once. In memory ids are int64 as below; a
version-2 ``.rlh`` stores node ids, arc ids and children as int32 and load widens
them after validation (engine.io.hierarchy_file), so both versions load the same.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.io import proven
from engine.io.errors import LoadError
from engine.io.hierarchy_file import ARRAYS, TURN_AWARE, read_hierarchy, write_hierarchy


@dataclass(eq=False)
class Hierarchy:
    metric: str                     # the metric's name
    num_nodes: int
    num_levels: int                 # contraction iterations; core nodes have this level
    node_level: np.ndarray          # int32 [n]
    arc_tail: np.ndarray            # int64 [h] every hierarchy arc: originals, then shortcuts
    arc_head: np.ndarray
    arc_weight: np.ndarray
    arc_child1: np.ndarray          # int64 [h] -1 for original arcs
    arc_child2: np.ndarray
    up_first: np.ndarray            # int64 [levels+1] up arcs of level l: up_first[l]:up_first[l+1]
    up_harc: np.ndarray             # int64 hierarchy-arc ids, tail at level l, head higher
    down_first: np.ndarray          # int64 [levels+1]
    down_harc: np.ndarray           # head at level l, tail higher; sorted by head within a level
    core_nodes: np.ndarray          # int64 [k]
    core_dist: np.ndarray           # int64 [k, k], INT64_MAX where no path
    core_pred: np.ndarray           # int32 [k, k] predecessor (core index), -1 none
    num_original_arcs: int
    iterations: list = field(default_factory=list)   # per-iteration records (dicts)
    params: dict = field(default_factory=dict)
    graph: object = None            # the RoadGraph it was built from (not saved)
    metric_hash: str = ""            # engine.core.metric.Metric.hash of the weights it was built from
    proof: object = None            # engine.ch.proof.Proof of a loaded file (not saved)

    @property
    def num_shortcuts(self) -> int:
        return int(self.arc_tail.size) - self.num_original_arcs

    @property
    def turn_aware(self) -> bool:
        """Contracted from a turn model's expanded graph (engine.model), not the road graph."""
        return self.params.get("model") == TURN_AWARE

    @property
    def edge_growth(self) -> float:
        """(|E_up| + |E_down|) / |E| as the paper reports it."""
        return (self.up_harc.size + self.down_harc.size) / max(self.num_original_arcs, 1)

    def is_shortcut(self, harc) -> np.ndarray:
        return np.asarray(harc) >= self.num_original_arcs

    def unpack(self, harc: int) -> np.ndarray:
        """Original arc ids of a hierarchy arc, in path order."""
        out, stack = [], [int(harc)]
        while stack:
            a = stack.pop()
            if self.arc_child1[a] < 0:
                out.append(a)
            else:
                stack.append(int(self.arc_child2[a]))
                stack.append(int(self.arc_child1[a]))
        return np.asarray(out, dtype=np.int64)

    def midpoint(self, harc: int) -> int:
        """The contracted node a shortcut bypasses (-1 for an original arc)."""
        c = int(self.arc_child1[harc])
        return -1 if c < 0 else int(self.arc_head[c])

    def node_arcs(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        """(upward, downward) hierarchy arcs at node v: up arcs leaving v, down arcs entering v."""
        up = self.up_harc[self.arc_tail[self.up_harc] == v]
        down = self.down_harc[self.arc_head[self.down_harc] == v]
        return up, down

    def summary(self) -> dict:
        total_ms = sum(sum(r["ms"].values()) for r in self.iterations)
        return {"levels": self.num_levels, "core_nodes": int(self.core_nodes.size),
                "shortcuts": self.num_shortcuts, "edge_growth": round(self.edge_growth, 3),
                "contract_ms": round(total_ms + self.params.get("apsp_ms", 0.0), 2),
                "model": self.params.get("model", "node_based"),
                **{k: v for k, v in self.params.items() if k in ("K", "C", "backend", "apsp_ms")}}

    # ----------------------------------------------------------- saving
    def save(self, path) -> Path:
        """Write to ``path`` (engine.io.hierarchy_file; the old file stays if it fails)."""
        meta = {"metric": self.metric, "metric_hash": self.metric_hash,
                "num_nodes": self.num_nodes, "num_levels": self.num_levels,
                "num_original_arcs": self.num_original_arcs,
                "iterations": self.iterations, "params": self.params}
        return write_hierarchy(path, {name: getattr(self, name) for name in ARRAYS}, meta)

    @classmethod
    def load(cls, path, graph=None) -> "Hierarchy":
        """A saved hierarchy, refused (LoadError naming the file) unless every array
        passes engine.io.hierarchy_file's validator and engine.ch.proof's witness check
        (no shortcut missing: its result is ``proof``; a file that passed before and is
        untouched since skips it, engine.io.proven); attached to ``graph`` when given."""
        from engine.ch.proof import prove
        path = Path(path)
        meta, arrays = read_hierarchy(path)
        h = cls(metric=meta["metric"], num_nodes=meta["num_nodes"], num_levels=meta["num_levels"],
                num_original_arcs=meta["num_original_arcs"], iterations=meta["iterations"],
                params=meta["params"], metric_hash=meta["metric_hash"], **arrays)
        if graph is not None:
            h.attach(graph, path)
        if proven.known(path, "rlh"):         # passed before, untouched since
            h.proof = proven.Remembered()
        else:
            h.proof = prove(h, path)
            proven.remember(path, "rlh")
        return h

    def attach(self, graph, path=None) -> "Hierarchy":
        """Bind to the graph it belongs to; refuses a graph it was not built from
        (``path``, the file it came from, names it in the error)."""
        if graph.num_nodes != self.num_nodes or graph.num_arcs != self.num_original_arcs:
            raise LoadError(path, f"this hierarchy belongs to a graph of {self.num_nodes:,} nodes "
                                  f"and {self.num_original_arcs:,} arcs, not to "
                                  f"{graph.num_nodes:,} / {graph.num_arcs:,}")
        if self.metric not in graph.metrics:
            raise LoadError(path, f"this hierarchy is for the metric {self.metric!r}, which this "
                                  f"graph does not have ({', '.join(graph.metrics)})")
        metric = graph.metric_of(self.metric)
        m = self.num_original_arcs
        if not (self.arc_tail.size >= m and np.array_equal(self.arc_tail[:m], graph.tail) and
                np.array_equal(self.arc_head[:m], graph.head) and
                np.array_equal(self.arc_weight[:m], metric.weights) and
                self.metric_hash in ("", metric.hash)):
            raise LoadError(path, "this hierarchy was built on other arcs or costs "
                                  f"than this graph's {self.metric!r}")
        self.metric_hash = metric.hash
        self.graph = graph
        return self

    def serves(self, metric) -> bool:
        """True when this hierarchy was built from exactly ``metric``'s weights."""
        return metric.name == self.metric and metric.hash == self.metric_hash

    def check_metric(self, metric) -> None:
        """Refuse a metric this hierarchy was not built from, with a message that says why."""
        if metric.name != self.metric:
            raise ValueError(f"the hierarchy was built for the metric {self.metric!r}, "
                             f"not {metric.name!r}; contract again for {metric.name!r}")
        if metric.hash != self.metric_hash:
            raise ValueError(f"the metric {metric.name!r} changed since the hierarchy was built "
                             "(its weights differ); contract again")
