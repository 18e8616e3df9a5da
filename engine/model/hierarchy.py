"""The turn-aware hierarchy: CU-CH (engine.ch.contract, unchanged, on the GPU or its
CPU twin) run on a TurnModel's expanded graph, as OSRM contracts its edge-based graph.
Start and end nodes have edges one way only (a free crossing's pair is a chain of
two), so they are contracted early and cheaply; the CH query and PHAST then run on it as
on any hierarchy."""
from __future__ import annotations

import numpy as np

from engine.io.hierarchy_file import TURN_AWARE
from engine.model.expanded import TurnModel


def contract_turn_aware(model: TurnModel, metric: str, **kwargs):
    """The contraction hierarchy of ``model``'s expanded graph for ``metric``, marked
    turn-aware (saved in the .rlh, checked when it is loaded); kwargs as engine.ch.contract."""
    from engine.ch import contract
    return mark_turn_aware(contract(model.expanded, metric, **kwargs), model.graph)


def mark_turn_aware(hierarchy, road_graph):
    """Say in the hierarchy (and its .rlh) that it holds the expanded graph of
    ``road_graph``, and that graph's size, for the message that refuses another graph."""
    hierarchy.params.update(model=TURN_AWARE, road_nodes=road_graph.num_nodes,
                            road_arcs=road_graph.num_arcs)
    return hierarchy


def road_node_level(hierarchy, graph) -> np.ndarray:
    """A level per road node, to colour the map: the node's own for a node-based
    hierarchy; for a turn-aware one the highest of the arcs (arc nodes) at the node."""
    if not hierarchy.turn_aware:
        return hierarchy.node_level
    from engine.model.expanded import Layout
    arc_level = hierarchy.node_level[Layout.of(graph).arc_node]
    level = np.zeros(graph.num_nodes, dtype=np.int32)
    np.maximum.at(level, graph.tail, arc_level)
    np.maximum.at(level, graph.head, arc_level)
    return level


def turns_matter(graph, metric: str | None = None) -> bool:
    """Whether routes on ``metric`` need the turn model (restrictions or turn costs);
    where the answer is known without building the default decoder, no decoder is built."""
    from engine.model.defaults import default_decoder, needs_turns, turns_change_nothing
    if turns_change_nothing(graph, metric):
        return False
    return needs_turns(graph, default_decoder(graph, metric))


# Peak growth of the process while CU-CH on the CPU contracts a generated network's turn
# model (default K and C), per road arc: 50 k road nodes (127 k arcs) 2.05 GB, 17.3 KB
# an arc; 100 k (253 k arcs) 4.2 GB, 17.8 KB an arc (6.3 KB an arc kept: the hierarchy
# and the turn model). The background hierarchy of a graph load
# starts only where this fits what the memory budget (engine.io.limits) leaves beside
# the process as it is; Hierarchy > Contract is not refused by it.
CONTRACTION_BYTES_PER_ROAD_ARC = 18_000


def background_refusal(graph) -> str | None:
    """None when contracting ``graph``'s turn model in the background fits the memory
    budget beside what this process holds now; else why not, for the person to read."""
    from engine.io.limits import BUDGET_ENV, gib, memory_budget
    needed = CONTRACTION_BYTES_PER_ROAD_ARC * graph.num_arcs
    budget, held = memory_budget(), resident_bytes()
    if held + needed <= budget:
        return None
    return (f"The turn-aware hierarchy was not built in the background: contracting this "
            f"network's turn model needs about {gib(needed)} GiB, and the memory budget of "
            f"{gib(budget)} GiB leaves {gib(max(budget - held, 0))} GiB beside the "
            f"{gib(held)} GiB the program holds ({BUDGET_ENV} sets it). Routes are exact "
            f"without it (turn-aware bidirectional Dijkstra); Hierarchy ▸ Contract builds it anyway.")


def resident_bytes() -> int:
    """The process's resident memory now (Linux /proc; 0 where it cannot be read)."""
    import os
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def bytes_per_arc(hierarchy, road_arcs: int) -> float:
    """The hierarchy's arrays in bytes per road arc (the memory figure the README gives)."""
    from engine.io.hierarchy_file import ARRAYS
    return sum(getattr(hierarchy, a).nbytes for a in ARRAYS) / max(road_arcs, 1)
