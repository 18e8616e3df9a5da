"""The turn-aware hierarchy: CU-CH (engine.ch.contract, unchanged, on the GPU or its
CPU twin) run on a TurnModel's expanded graph, as OSRM contracts its edge-based graph.
Start and end nodes have edges one way only, so they are contracted at level 0 with no
shortcut; the CH query and PHAST then run on it as on any hierarchy."""
from __future__ import annotations

from engine.io.hierarchy_file import TURN_AWARE
from engine.model.expanded import TurnModel


def contract_turn_aware(model: TurnModel, metric: str, **kwargs):
    """The contraction hierarchy of ``model``'s expanded graph for ``metric``, marked
    turn-aware (saved in the .rlh, checked when it is loaded); kwargs as engine.ch.contract."""
    from engine.ch import contract
    h = contract(model.expanded, metric, **kwargs)
    h.params["model"] = TURN_AWARE
    return h


def bytes_per_arc(hierarchy, road_arcs: int) -> float:
    """The hierarchy's arrays in bytes per road arc (the memory figure the README gives)."""
    from engine.io.hierarchy_file import ARRAYS
    return sum(getattr(hierarchy, a).nbytes for a in ARRAYS) / max(road_arcs, 1)
