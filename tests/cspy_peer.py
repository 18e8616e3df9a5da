"""cspy (the only Python peer for cost-budgeted paths) on our graphs: the networkx graph
it wants. Used by the Rome99 test and the csp_cpu benchmark section."""
from __future__ import annotations

import numpy as np


def cspy_graph(graph, length, cost, source=None, target=None):
    """Resources [hops, cost]; "Source" and "Sink" hang off source and target by free
    arcs (``set_terminals`` moves them); parallel arcs (a DiGraph keeps one) go
    through a midpoint node each."""
    import networkx as nx
    G = nx.DiGraph(directed=True, n_res=2)
    seen = set()
    for a, (u, v) in enumerate(zip(graph.tail.tolist(), graph.head.tolist())):
        res = np.array([1.0, float(cost[a])])
        if (u, v) in seen:
            G.add_edge(u, ("mid", a), weight=float(length[a]), res_cost=res)
            G.add_edge(("mid", a), v, weight=0.0, res_cost=np.zeros(2))
        else:
            G.add_edge(u, v, weight=float(length[a]), res_cost=res)
        seen.add((u, v))
    if source is not None:
        set_terminals(G, source, target)
    return G


def set_terminals(G, source, target) -> None:
    """Point "Source" at ``source`` and ``target`` at "Sink" (replacing earlier ones)."""
    if "Source" in G:
        G.remove_node("Source")
        G.remove_node("Sink")
    G.add_edge("Source", source, weight=0.0, res_cost=np.zeros(2))
    G.add_edge(target, "Sink", weight=0.0, res_cost=np.zeros(2))
