"""CRP: turn-aware multilevel overlay, metric decoders, customization and queries
(Delling, Kobitzsch, Werneck, "Customizing Driving Directions with GPUs").

Phases are types, as in RoutingKit and OSRM:

    turns.py        turn_graph(graph) -> Turns: allowed turns with types, bans removed
    partition.py    partition_graph(graph) -> Partition (nested METIS cells; .rlp files)
    overlay.py      Overlay(graph, partition): entries, exits, matrix layout, local graphs
    decoder.py      Decoder: a TOML metric decoder (data, never code); expression.py
    decode.py       decode(...) -> arc costs and turn weights (one kernel, Numba twin)
    customize.py    customize(overlay, decoder, backend) -> CellMetric
    microcode.py    level 0 by microinstructions (CPU; microcode_gpu.py on the device)
    local_search.py the CPU twin of the levels above 0 (a Dijkstra per entry)
    customize_gpu.py GpuCustomizer: a variant per level (min-plus rounds above level 0;
                    local/global Bellman-Ford), device events;
                    customize_layout.py: its metric-independent device layout
    flat.py         the levels' arrays concatenated; query_space.py: the query's numbering
    search.py       the bidirectional overlay query; unpack.py: shortcuts to arcs
    query.py        CrpQuery(overlay, metric): route(s, t) -> Path, with reset()
"""
from __future__ import annotations

from engine.crp.customization.customize import CellMetric, CostOverflow, customize, customize_costs
from engine.crp.metric.decoder import Decoder, DecoderError, load_decoder, shipped_decoders
from engine.crp.partition.overlay import Overlay
from engine.crp.partition.nested import Partition, partition_graph
from engine.crp.query.router import CrpQuery
from engine.core.turns import TURN_TYPES, Turns, turn_graph

__all__ = ["CellMetric", "CostOverflow", "customize", "customize_costs", "Decoder",
           "DecoderError", "load_decoder", "shipped_decoders", "Overlay", "Partition",
           "partition_graph", "CrpQuery", "TURN_TYPES", "Turns", "turn_graph"]
