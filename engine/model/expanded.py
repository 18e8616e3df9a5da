"""TurnModel: the turn-expanded graph on which node-based algorithms search turn-aware.

Nodes of the expanded graph (N = m + 2n for a road graph of n nodes, m arcs), in one
block per road node v, in v's order (``Layout``):

    end(v), start(v), then the arc node of every arc leaving v ("has just driven
    along arc a"), so that a search going through v reads one stretch of memory

Edges (sorted by tail, so the expanded graph is an ordinary RoadGraph):

    a -> b          every allowed turn a -> b (engine.core.turns), weight turn cost + cost(b),
                    at a crossing v whose turns are not all allowed and free
    end(v) -> start(v)  weight 0, at a free crossing v instead: every turn there is allowed
                    and costs nothing, so in-arcs -> hub -> out-arcs is the same set of
                    moves with indeg + outdeg edges instead of indeg x outdeg
    a -> end(head a)  weight 0
    start(v) -> a   every arc a leaving v, weight cost(a)

Only a free crossing's end node has a way on (to its own start node), so a path
start(s) -> ... -> end(t) is exactly a legal arc sequence from s to t (the arc nodes on
it, in order), and its length is the turn-aware cost (OSRM's edge-based graph with
phantom ends). On a graph where every crossing is free (DIMACS with its turns forced
on) the expanded graph is the road graph with each arc split in two: contraction and
searches cost about what they cost node-based. Weights come from
engine.crp.metric.costs.decode, the very code CRP customizes with, so a route here and
a CRP route under the same decoder cost the same. An arc or turn a decoder forbids in
any of the model's metrics is left out.

Memory: per expanded node 4 B (first_out) + 8 B (node_id) + 16 B (lon, lat, where the
road graph has coordinates); per edge 4 B (head) + 4 B per metric. NY (n 264 k,
m 734 k, 2.3 M turns): 1.26 M nodes, 3.8 M edges.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.graph import RoadGraph
from engine.core.paths import Path, ShortestPathTree
from engine.core.turns import TURN_TYPES, Turns, turn_graph
from engine.crp.metric.costs import FORBIDDEN, decode
from engine.model.defaults import restrictions_in_force


@dataclass(frozen=True, eq=False)
class TurnModel:
    graph: RoadGraph            # the road graph
    expanded: RoadGraph         # searched by every node-based algorithm
    decoders: dict              # metric name -> engine.crp.metric.decoder.Decoder
    turns: Turns
    arc_cost: dict              # metric name -> int64 [m] cost of each road arc
    free_node: np.ndarray       # bool [n]: every turn allowed and free (a hub: see above)
    layout: "Layout"
    @property
    def restrictions(self) -> int:
        """Banned turns in force (OSM restrictions, the generated network's left turns)."""
        return restrictions_in_force(self.graph)

    def start(self, v: int) -> int:
        return int(self.layout.start_node[v])

    def end(self, v: int) -> int:
        return int(self.layout.end_node[v])

    def road_path(self, path: Path, source: int, target: int) -> Path:
        """An expanded path start(source) -> ... -> end(target) as road arcs (built
        directly: this runs once per turn-aware CH query, ~1 % of its time)."""
        arcs = self.layout.road_arc[path.nodes]
        arcs = arcs[arcs >= 0]
        nodes = np.empty(arcs.size + 1, dtype=np.int32)
        nodes[0] = source
        nodes[1:] = self.graph.head[arcs]
        return Path(int(source), int(target), path.metric, path.distance, nodes, arcs)

    def road_arcs_of_nodes(self, nodes) -> np.ndarray:
        """The road arcs on an expanded path given by its nodes: its arc nodes, in order."""
        arcs = self.layout.road_arc[np.asarray(nodes, dtype=np.int64)]
        return arcs[arcs >= 0]

    def road_tree(self, tree: ShortestPathTree, source: int) -> ShortestPathTree:
        """An expanded tree from start(source) as a road tree: a node's distance is the
        least over the arcs entering it; ``arc_parent`` keeps the arc tree, so a path
        read off it (engine.core.paths.path_from_tree) is a legal one."""
        lay = self.layout
        distance = tree.distance[lay.end_node].astype(np.int64, copy=True)
        parent_arc = lay.arc_of(tree.parent[lay.end_node])    # an end node's: arc nodes
        parent_arc[distance < 0] = -1
        distance[source], parent_arc[source] = 0, -1
        parent = np.where(parent_arc >= 0, self.graph.tail[np.maximum(parent_arc, 0)], -1)
        before = tree.parent[lay.arc_node]
        arc_parent = lay.arc_of(before)
        hub = lay.start_of(before)           # from a start node: of the source (a first
        via = hub >= 0                       # arc) or of a free crossing passed through
        arc_parent[via] = np.where(hub[via] == source, -1,
                                   lay.arc_of(tree.parent[lay.end_node[hub[via]]]))
        return ShortestPathTree(int(source), tree.metric, distance, parent.astype(np.int32),
                                parent_arc, arc_parent)

    def turns_taken(self, path: Path) -> dict:
        """{"by_type": count per turn type, "cost": turn costs paid, "unit": their unit}
        along a road path (the form of engine.crp.query.router.path_turns)."""
        arcs = path.arcs.astype(np.int64)
        by_type = dict.fromkeys(TURN_TYPES, 0)
        if arcs.size > 1:
            t = self.turns.ids(arcs[:-1], arcs[1:])
            if (t < 0).any():
                i = int(np.argmax(t < 0))
                raise KeyError(f"arc {arcs[i]} -> arc {arcs[i + 1]} is not an allowed turn")
            for k, c in zip(*np.unique(self.turns.turn_type[t], return_counts=True)):
                by_type[TURN_TYPES[k]] = int(c)
        paid = path.distance - int(self.arc_cost[path.metric][arcs].sum())
        return {"by_type": by_type, "cost": paid,
                "unit": self.graph.metric_units.get(path.metric, "")}



def turn_model(graph: RoadGraph, decoders: dict, turns: Turns | None = None) -> TurnModel:
    """The turn model of ``graph`` for each metric name -> decoder in ``decoders``."""
    turns = turns if turns is not None else turn_graph(graph)
    costs = {name: decode(graph, turns, d) for name, d in decoders.items()}
    m, n = graph.num_arcs, graph.num_nodes
    arc_ok = np.ones(m, dtype=bool)
    turn_ok = np.ones(turns.num_turns, dtype=bool)
    for c in costs.values():
        arc_ok &= np.asarray(c.arc_cost) != FORBIDDEN
        turn_ok &= np.asarray(c.turn_weight) != FORBIDDEN
    turn_ok &= arc_ok[turns.from_arc] & arc_ok[turns.to_arc]
    arc_cost = {name: np.asarray(c.arc_cost).astype(np.int64) for name, c in costs.items()}
    free_node = _free_nodes(graph, turns, turn_ok, costs, arc_cost)
    turn_ok &= ~free_node[graph.head[turns.from_arc]]     # a free crossing is one hub edge
    lay = Layout.of(graph)
    first_out, head, metrics = _edges(graph, lay, turns, turn_ok, arc_ok, free_node, costs)
    lon, lat = _coordinates(graph, lay)
    expanded = RoadGraph(
        first_out=first_out, head=head,
        metrics=metrics, node_id=np.arange(lay.size, dtype=np.int64), lon=lon, lat=lat,
        metric_units={k: graph.metric_units[k] for k in metrics if k in graph.metric_units},
        source=f"{graph.source or 'graph'} (turn-expanded)")
    return TurnModel(graph, expanded, dict(decoders), turns, arc_cost, free_node, lay)


def _edges(graph, lay, turns: Turns, turn_ok, arc_ok, free_node, costs: dict):
    """(first_out, head, metric name -> weight) of the expanded graph, written in tail
    order by engine.model.expanded_edges (no sort). Weights: turn cost + cost(b) on a
    turn a -> b, cost(a) on start -> a, 0 on a -> end and on a hub edge."""
    from engine.model.expanded_edges import expanded_edges

    def rows(column):
        r = [np.asarray(getattr(c, column), dtype=np.int32) for c in costs.values()]
        return r[0][None] if len(r) == 1 else np.stack(r)   # one metric: a view, no copy
    first_out, head, w = expanded_edges(graph, lay, turns, turn_ok, arc_ok, free_node,
                                        rows("turn_weight"), rows("arc_cost"))
    return first_out, head, {name: w[i] for i, name in enumerate(costs)}


def _free_nodes(graph, turns: Turns, turn_ok, costs: dict, arc_cost: dict) -> np.ndarray:
    """Crossings where every turn (U-turns included) is allowed and costs nothing under
    every metric of the model."""
    free = turn_ok.copy()
    for name, c in costs.items():
        free &= np.asarray(c.turn_weight, dtype=np.int64) == arc_cost[name][turns.to_arc]
    via = graph.head[turns.from_arc]
    degree = np.diff(graph.first_out).astype(np.int64) * \
        np.diff(graph.backward.first_in).astype(np.int64)
    return (np.bincount(via[free], minlength=graph.num_nodes) == degree) & (degree > 0)


@dataclass(frozen=True, eq=False)
class Layout:
    """Where each road arc and node lies in the expanded graph, and back."""
    arc_node: np.ndarray      # int64 [m]
    start_node: np.ndarray    # int64 [n]
    end_node: np.ndarray      # int64 [n]
    road_arc: np.ndarray      # int32 [N]: the arc of an arc node, else -1
    start_owner: np.ndarray   # int32 [N]: the road node of a start node, else -1

    @property
    def size(self) -> int:
        return int(self.road_arc.size)

    @classmethod
    def of(cls, graph) -> "Layout":
        n, m = graph.num_nodes, graph.num_arcs
        end = graph.first_out[:-1].astype(np.int64) + 2 * np.arange(n, dtype=np.int64)
        arc_node = np.arange(m, dtype=np.int64) + 2 * graph.tail.astype(np.int64) + 2
        road_arc = np.full(m + 2 * n, -1, dtype=np.int32)
        road_arc[arc_node] = np.arange(m, dtype=np.int32)
        start_owner = np.full(m + 2 * n, -1, dtype=np.int32)
        start_owner[end + 1] = np.arange(n, dtype=np.int32)
        return cls(arc_node, end + 1, end, road_arc, start_owner)

    def arc_of(self, nodes) -> np.ndarray:
        """The road arc of each expanded node (-1: not an arc node, or -1 given)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return np.where(nodes >= 0, self.road_arc[np.maximum(nodes, 0)], -1).astype(np.int32)

    def start_of(self, nodes) -> np.ndarray:
        """The road node whose start node each is (-1: none)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return np.where(nodes >= 0, self.start_owner[np.maximum(nodes, 0)], -1)


def _coordinates(graph, lay: Layout):
    """Arc nodes at their arc's middle, start and end nodes at their road node."""
    if graph.lon is None:
        return None, None
    t, h = graph.tail, graph.head
    out = []
    for x in (graph.lon, graph.lat):
        c = np.empty(lay.size, dtype=np.float64)
        c[lay.arc_node] = (x[t] + x[h]) / 2
        c[lay.start_node] = c[lay.end_node] = x
        out.append(c)
    return out[0], out[1]


def model_bytes(model: TurnModel) -> int:
    """Bytes of a turn model's own arrays: the expanded graph (its cached derived arrays
    included), the layout, the arc costs and the allowed turns (engine.core.turns)."""
    import dataclasses
    arrays = [model.free_node, *model.arc_cost.values(),
              *(getattr(model.layout, f.name) for f in dataclasses.fields(model.layout)),
              *(v for v in vars(model.turns).values() if isinstance(v, np.ndarray))]
    x = model.expanded        # its fields and cached arrays (tail, xy) are in vars(x)
    arrays += [*x.metrics.values(), *(v for v in vars(x).values() if isinstance(v, np.ndarray))]
    return sum(int(a.nbytes) for a in arrays)
