"""Random graphs for the tests, in one place: Hypothesis strategies, and builders from a
seed. A test states the sizes and weights it draws from where it calls one, so its
distribution reads there; self-loops, parallel arcs, zero weights and unreachable nodes
all occur unless a test says otherwise."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engine.core.graph import RoadGraph


# ----------------------------------------------------------------- Hypothesis
@st.composite
def random_graphs(draw, *, nodes: tuple[int, int], weights: st.SearchStrategy[int],
                  max_arcs: int | None = None, max_arcs_per_node: int | None = None,
                  metric: str = "w", dtype=np.int64, parallel_arc: bool = False) -> RoadGraph:
    """A RoadGraph of ``nodes`` = (least, most) nodes and 0 to ``max_arcs`` (or 0 to
    ``max_arcs_per_node`` times the nodes) arcs between uniform random ends, with one
    metric ``metric`` of ``dtype`` drawn from ``weights``. ``parallel_arc``: the first
    arc is added again with its weight + 1, a parallel arc for sure."""
    if (max_arcs is None) == (max_arcs_per_node is None):
        raise TypeError("give max_arcs or max_arcs_per_node")
    n = draw(st.integers(*nodes))
    m = draw(st.integers(0, max_arcs if max_arcs is not None else max_arcs_per_node * n))
    ends = st.lists(st.integers(0, n - 1), min_size=m, max_size=m)
    tail, head = draw(ends), draw(ends)
    w = draw(st.lists(weights, min_size=m, max_size=m))
    if parallel_arc and m:
        tail, head, w = tail + tail[:1], head + head[:1], w + [w[0] + 1]
    return RoadGraph.from_arcs(n, np.array(tail, np.int64), np.array(head, np.int64),
                               {metric: np.array(w, dtype)})


@st.composite
def random_arc_lists(draw, *, nodes: tuple[int, int], max_arcs: int,
                     weights: st.SearchStrategy[int]):
    """(n, arcs, source, target): ``nodes`` = (least, most) nodes, up to ``max_arcs``
    arcs (tail, head, length, cost) with both weights drawn from ``weights``, and a
    random source and target (equal at times)."""
    n = draw(st.integers(*nodes))
    node = st.integers(0, n - 1)
    arcs = draw(st.lists(st.tuples(node, node, weights, weights), max_size=max_arcs))
    return n, arcs, draw(node), draw(node)


# -------------------------------------------------------------- from a seed
def random_two_metric_graph(seed: int, n: int = 9, m: int = 26, zero: float = 0.15) -> RoadGraph:
    """``n`` nodes, ``m`` random arcs; "distance" and "travel_time" each 0-11, and 0 with
    probability ``zero`` (cost-budgeted paths: length and cost of every arc)."""
    rng = np.random.default_rng(seed)
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    length = rng.integers(0, 12, m) * (rng.random(m) > zero)
    cost = rng.integers(0, 12, m) * (rng.random(m) > zero)
    return RoadGraph.from_arcs(n, tail, head, {"distance": length, "travel_time": cost})


def dimacs_like_graph(seed: int, n: int, m: int, max_distance: int) -> RoadGraph:
    """A DIMACS-like graph: metric columns only ("distance" 1 to ``max_distance``,
    "travel_time" 2 to 9,000), no attributes, no coordinates; ``m`` random arcs, no
    self-loops."""
    rng = np.random.default_rng(seed)
    tail = rng.integers(0, n, m)
    head = (tail + rng.integers(1, n, m)) % n
    return RoadGraph.from_arcs(n, tail, head, {"distance": rng.integers(1, max_distance, m),
                                               "travel_time": rng.integers(2, 9000, m)})


def random_turn_weights(overlay, seed: int = 0, forbidden: float = 0.0, scale: int = 1,
                        u_turn: int = 0):
    """int32 turn weights for a CRP overlay: a random cost 0-29 per turn type plus the
    arc's own metric, times ``scale``, capped at FORBIDDEN; a ``forbidden`` share of the
    turns FORBIDDEN; ``u_turn`` (when not 0) the cost of every U-turn type."""
    from engine.core.turns import U_TURN
    from engine.crp.metric import FORBIDDEN
    rng = np.random.default_rng(seed)
    arc = overlay.graph.metric(None).astype(np.int64)
    by_type = rng.integers(0, 30, 8)
    by_type[U_TURN] = u_turn or by_type[U_TURN]
    tw = (by_type[overlay.turns.turn_type] + arc[overlay.turns.to_arc]) * scale
    tw[rng.random(tw.size) < forbidden] = FORBIDDEN
    return np.minimum(tw, FORBIDDEN).astype(np.int32)
