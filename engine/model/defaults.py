"""The default decoder of a metric column: the turn costs a plain route pays.

The rule (README, "Turn-aware routing"):

- On a graph with turn information (an OSM extract, the generated network: they carry
  road classes or turn restrictions) a metric column pays the turn costs of the shipped
  profile for its kind of cost: a distance in metres takes car-shortest's turn table
  (metres), a travel time in deciseconds takes car-fastest's (its seconds x 10). A
  column in any other unit pays no turn costs.
- On a graph without turn information (DIMACS) no turn costs: by the benchmark's own
  definition its route is the classic shortest path between nodes.
- Banned turns are banned under every decoder.

A default decoder is ``kind = "metric"`` on the column itself (scale 1) with those turn
costs, so a plain route and a CRP route under ``--decoder default`` agree.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:           # engine.crp loads Numba: `routelab info` never needs it
    from engine.crp.metric.decoder import Decoder

DEFAULT = "default"      # the decoder name that means "the metric's default decoder"

# unit of a metric column -> (shipped profile whose turn table it takes, factor to the unit)
TURN_PROFILE = {"m": ("car-shortest", 1.0), "ds": ("car-fastest", 10.0)}


def has_turn_information(graph) -> bool:
    """True for road data that knows its turns (OSM, generated), False for DIMACS."""
    return graph.turn_restrictions is not None or "road_class" in graph.arc_attrs


def restrictions_in_force(graph) -> int:
    r = graph.turn_restrictions
    return 0 if r is None else len(r)


def turns_change_nothing(graph, metric: str | None = None) -> bool:
    """True when the metric's default decoder is known to need no turns (``needs_turns``
    of it is False) without building it, which would load engine.crp: no restriction in
    force, and no turn costs (no turn information, or a unit no turn table serves).
    False means: build the default decoder and ask ``needs_turns``."""
    metric = metric or graph.default_metric
    if restrictions_in_force(graph):
        return False
    return not has_turn_information(graph) or graph.metric_units.get(metric, "") not in TURN_PROFILE


def default_decoder(graph, metric: str | None = None) -> Decoder:
    """The decoder a plain route on ``metric`` (default: the graph's first) follows."""
    from engine.crp.metric.decoder import FORBIDDEN_TURN, Decoder, load_decoder
    metric = metric or graph.default_metric
    graph.metric(metric)                                    # KeyError naming the metrics
    unit = graph.metric_units.get(metric, "")
    turns: tuple = ()
    profile = TURN_PROFILE.get(unit) if has_turn_information(graph) else None
    if profile is not None:
        name, factor = profile
        costs = load_decoder(name).turn_costs()
        turns = tuple((k, v if v == FORBIDDEN_TURN else v * factor) for k, v in costs.items())
    told = f"{dict(turns)['u_turn']:g} {unit} per U-turn, " if turns else "no turn costs, "
    return Decoder(name=f"{metric}", kind="metric", metric=metric, scale=1.0, turns=turns,
                   description=f"the {metric} column; {told}banned turns never taken",
                   source=f"default decoder of {metric}")


def is_plain_column(decoder: Decoder) -> bool:
    """True when the decoder's arc costs are its metric column unchanged."""
    return (decoder.kind == "metric" and decoder.scale == 1.0 and not decoder.forbid
            and decoder.expression is None)


def needs_turns(graph, decoder: Decoder) -> bool:
    """False exactly when a node-based search on the decoder's column gives the
    turn-aware answer: no restriction in force, every turn free, arc costs the column
    itself. Then every walk through the nodes is a legal arc sequence of the same cost,
    so the node-based shortest path is the turn-aware one (tests/engine/test_turn_model.py)."""
    free = all(v == 0 for v in decoder.turn_costs().values())
    return not (free and is_plain_column(decoder) and restrictions_in_force(graph) == 0)
