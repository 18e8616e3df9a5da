"""The independent oracle for turn-aware routing, built here and not by the code under
test: SciPy's Dijkstra on an explicit arc-to-arc matrix made from the road graph's own
arrays (every in-arc x out-arc pair at every node, less the banned pairs read from
``graph.turn_restrictions``), weighted by the turn's cost by type plus the next arc's
cost. Only the definition of a turn's type is borrowed (engine.core.turns._turn_types);
the turn cost per type comes from the decoder's TOML values as written."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from engine.core.turns import TURN_TYPES, _turn_types

EPS = 1e-9          # SciPy drops explicit zeros: a zero-cost edge is stored as EPS
FORBIDDEN = np.iinfo(np.int32).max      # a decoder's cost for "never": drops the arc or turn


def turn_cost_table(decoder) -> np.ndarray:
    """Cost per turn type in the column's units (a kind = "metric", scale 1 decoder)."""
    assert decoder.kind == "metric" and decoder.scale == 1
    costs = decoder.turn_costs()
    return np.array([int(round(float(costs[t]))) for t in TURN_TYPES], dtype=np.int64)


def _all_turns(graph) -> tuple[np.ndarray, np.ndarray]:
    """Every (in-arc, out-arc) pair meeting at a node, from the reverse adjacency."""
    bwd = graph.backward
    indeg = np.diff(bwd.first_in).astype(np.int64)[graph.tail]     # in-arcs at each tail
    to_arc = np.repeat(np.arange(graph.num_arcs, dtype=np.int64), indeg)
    k = np.arange(to_arc.size) - np.repeat(np.cumsum(indeg) - indeg, indeg)
    from_arc = bwd.in_arc[bwd.first_in[graph.tail[to_arc]] + k].astype(np.int64)
    return from_arc, to_arc


class EdgeOracle:
    """``arc_cost``: a metric's name, or a decoder's cost per arc (as
    engine.crp.metric.costs.decode gives it, FORBIDDEN in an arc or turn cost
    removing that arc or turn)."""

    def __init__(self, graph, arc_cost, turn_cost_by_type) -> None:
        self.graph = graph
        if isinstance(arc_cost, str):
            arc_cost = graph.metric(arc_cost)
        self.arc_cost = np.asarray(arc_cost, dtype=np.int64)
        m = graph.num_arcs
        frm, to = _all_turns(graph)
        r = graph.turn_restrictions
        self.banned = set() if r is None else set(zip(r.from_arc.tolist(), r.to_arc.tolist()))
        banned = np.array([a * m + b for a, b in self.banned], dtype=np.int64)
        turn_cost = np.asarray(turn_cost_by_type, dtype=np.int64)[_turn_types(graph, frm, to)]
        keep = ~np.isin(frm * m + to, banned) & (turn_cost != FORBIDDEN) & \
            (self.arc_cost[frm] != FORBIDDEN) & (self.arc_cost[to] != FORBIDDEN)
        w = (turn_cost + self.arc_cost[to])[keep].astype(np.float64)
        self.matrix = sp.csr_matrix((np.where(w == 0, EPS, w), (frm[keep], to[keep])),
                                    shape=(m, m))

    def distances_from(self, source: int) -> np.ndarray:
        """Turn-aware distance from road node ``source`` to every node (-1: unreachable)."""
        g = self.graph
        out = np.arange(g.first_out[source], g.first_out[source + 1])
        out = out[self.arc_cost[out] != FORBIDDEN]
        node = np.full(g.num_nodes, np.inf)
        node[source] = 0
        if out.size:
            d = csgraph.dijkstra(self.matrix, directed=True, indices=out)
            by_arc = (d + self.arc_cost[out][:, None]).min(axis=0)
            np.minimum.at(node, g.head, by_arc)
        ok = np.isfinite(node)
        return np.where(ok, np.rint(np.where(ok, node, 0)), -1).astype(np.int64)

    def check_legal(self, path) -> None:
        """Walk the path's turns: consecutive arcs meet, no banned pair, ends right."""
        g, arcs = self.graph, [int(a) for a in path.arcs]
        if not arcs:
            assert path.source == path.target
            return
        assert g.tail[arcs[0]] == path.source and g.head[arcs[-1]] == path.target
        for a, b in zip(arcs, arcs[1:]):
            assert g.head[a] == g.tail[b], f"arcs {a} and {b} do not meet"
            assert (a, b) not in self.banned, f"the path takes the banned turn {a} -> {b}"


def least_length_within_budget(lengths: EdgeOracle, costs: EdgeOracle, source: int, target: int,
                               budget: int) -> int | None:
    """The least turn-aware length from ``source`` to ``target`` whose turn-aware cost is
    within ``budget`` (None: none), by a plain label-setting over arcs: labels (length,
    cost) per arc, dominated ones dropped, pruned by the cost still needed (SciPy on
    the reversed cost matrix)."""
    import heapq
    g = lengths.graph
    ends = np.flatnonzero(g.head == target)
    rev = costs.matrix.T.tocsr()
    need = csgraph.dijkstra(rev, directed=True, indices=ends).min(axis=0) if ends.size else None
    if need is None:
        return None
    L, C = lengths.matrix, costs.matrix
    heap = []
    for a in range(g.first_out[source], g.first_out[source + 1]):
        lab = (int(lengths.arc_cost[a]), int(costs.arc_cost[a]), a)
        if lab[1] + need[a] <= budget + 0.5:
            heapq.heappush(heap, lab)
    front: dict[int, list] = {}
    while heap:
        length, cost, a = heapq.heappop(heap)
        if any(c <= cost for c in front.get(a, ())):
            continue
        front.setdefault(a, []).append(cost)
        if g.head[a] == target:
            return length
        for k in range(L.indptr[a], L.indptr[a + 1]):
            b = int(L.indices[k])
            nl = length + int(round(L.data[k]))
            nc = cost + int(round(C.data[k]))
            if nc + need[b] <= budget + 0.5 and not any(c <= nc for c in front.get(b, ())):
                heapq.heappush(heap, (nl, nc, b))
    return None


_ORACLES: dict = {}


def oracle_for(graph, metric: str) -> EdgeOracle:
    """The oracle of ``graph`` under ``metric``'s default decoder (kept per graph)."""
    from engine.model.defaults import default_decoder
    key = (id(graph), metric)
    if key not in _ORACLES or _ORACLES[key][0] is not graph:
        _ORACLES[key] = (graph, EdgeOracle(graph, metric,
                                           turn_cost_table(default_decoder(graph, metric))))
    return _ORACLES[key][1]


def check_turn_aware(graph, path) -> None:
    """``path`` is legal and as short as the oracle's turn-aware distance."""
    oracle = oracle_for(graph, path.metric)
    oracle.check_legal(path)
    assert path.distance == oracle.distances_from(int(path.source))[path.target]


def turns_matter(graph, metric: str) -> bool:
    from engine.model.defaults import default_decoder, needs_turns
    return needs_turns(graph, default_decoder(graph, metric))


def check_route(graph, path) -> None:
    """A route in the routing model: turn-aware where turns matter, else a valid
    node-based shortest path (engine.core.paths.check_path and SciPy's distance)."""
    if turns_matter(graph, path.metric):
        check_turn_aware(graph, path)
        return
    from engine.core.paths import check_path
    from engine.routing.reference import sssp
    check_path(graph, path)
    assert path.distance == sssp(graph, int(path.source), path.metric).distance[path.target]


def model_distances(graph, source: int, metric: str) -> np.ndarray:
    """Distances from ``source`` in the routing model (turn-aware where turns matter)."""
    if turns_matter(graph, metric):
        return oracle_for(graph, metric).distances_from(int(source))
    from engine.routing.reference import sssp
    return sssp(graph, int(source), metric).distance
