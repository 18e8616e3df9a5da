"""A route for a one-shot command: SciPy's compiled Dijkstra (scipy.sparse.csgraph) on
the graph's own CSR, so that a process answering one query loads no Numba.

``routelab route G.rlg --from S --to T`` answers one query and exits. Numba's search is
faster per query (1-5 ms on NY against about 50 ms for SciPy's one-to-all search),
but a process pays about 0.8 s to import Numba and load its first compiled function,
even from the cache; SciPy's search is compiled already and costs about 0.2 s to
import. The Workspace of a one-shot run (``Workspace.one_shot``: the command line)
uses it where the node-based search on the road graph is the answer (no turn model
needed, no hierarchy): exact, with the same distance as every router. The path is
the one SciPy's tree gives; where several paths share the shortest distance it may
be another of them than bidirectional Dijkstra's (tests/engine/test_scipy_dijkstra.py
checks that it is the same path wherever the shortest path is unique).

SciPy reads the CSR as it is: parallel arcs are separate edges (the cheapest wins)
and explicit zeros are zero-cost edges (the tests pin both). Costs become float64,
exact while every sum of arc costs stays below 2^53 (``exact_in_float``).
"""
from __future__ import annotations

import numpy as np

from engine.core.paths import Path, check_node, unreachable

FLOAT_EXACT = 2**53


def exact_in_float(weights: np.ndarray) -> bool:
    """Whether every path cost of these arc costs is an exact float64."""
    return int(weights.astype(np.int64).sum()) < FLOAT_EXACT


class ScipyDijkstra:
    """Exact point-to-point routes on ``graph`` under one metric (Router interface), by
    one-to-all Dijkstra from the source (scipy.sparse.csgraph.dijkstra)."""

    name = "dijkstra_scipy"
    label = "Dijkstra (SciPy)"
    needs_warm_up = False           # compiled ahead of time: its first query is no slower

    def __init__(self, graph, metric: str | None = None) -> None:
        from scipy.sparse import csr_array
        self.graph = graph
        self.metric = graph.metric_of(metric).name
        self._w = graph.metric(self.metric)
        if not exact_in_float(self._w):
            raise ValueError("the metric's costs are too large for an exact float64 search")
        n = graph.num_nodes
        self._matrix = csr_array((self._w.astype(np.float64), graph.head, graph.first_out),
                                 shape=(n, n))

    def route(self, source: int, target: int) -> Path:
        from scipy.sparse.csgraph import dijkstra
        g = self.graph
        check_node(g, source)
        check_node(g, target)
        s, t = int(source), int(target)
        dist, pred = dijkstra(self._matrix, directed=True, indices=s, return_predecessors=True)
        if not np.isfinite(dist[t]):
            raise unreachable(g, s, t)
        nodes = [t]
        while nodes[-1] != s:
            nodes.append(int(pred[nodes[-1]]))
        nodes = np.array(nodes[::-1], dtype=np.int32)
        arcs = self._arcs(nodes)
        distance = int(self._w[arcs].astype(np.int64).sum())
        if distance != dist[t]:
            raise RuntimeError(f"SciPy's distance {dist[t]} is not its path's cost {distance}")
        return Path(s, t, self.metric, distance, nodes, arcs)

    def _arcs(self, nodes: np.ndarray) -> np.ndarray:
        """The arc of each step u -> v: the cheapest of the parallel ones, the first of
        equal ones (as the Numba searches pick)."""
        g, w = self.graph, self._w
        arcs = np.empty(nodes.size - 1, dtype=np.int32)
        for i in range(arcs.size):
            lo, hi = g.first_out[nodes[i]], g.first_out[nodes[i] + 1]
            candidates = lo + np.flatnonzero(g.head[lo:hi] == nodes[i + 1])
            arcs[i] = candidates[np.argmin(w[candidates])]
        return arcs
