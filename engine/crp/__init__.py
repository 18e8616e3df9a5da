"""CRP: turn-aware multilevel overlay, metric decoders, customization and queries
(Delling, Kobitzsch, Werneck, "Customizing Driving Directions with GPUs").

Phases are types, as in RoutingKit and OSRM:

    core/turns.py   turn_graph(graph) -> Turns: allowed turns with types, bans removed
    partition/      nested.py: partition_graph(graph) -> Partition (nested METIS cells;
                    .rlp files); overlay.py: Overlay(graph, partition): entries, exits,
                    matrix layout, local graphs (topology only, no weights)
    metric/         decoder.py: Decoder, a TOML metric decoder (data, never code), its
                    expression.py; program.py: the decoder compiled for one graph;
                    interpreter.py: its Numba twin of crp_decode.cu; costs.py: decode()
                    -> arc costs and turn weights; FORBIDDEN, the cost of "no way"
    customization/  customize.py: Customizer(overlay, backend).customize(decoder) ->
                    CellMetric (cell_metric.py); cpu.py: the CPU twin above level 0 (a
                    Dijkstra per entry); microcode.py: level 0 by microinstructions
                    (microcode_gpu.py on the device); gpu.py: GpuCustomizer, a variant per
                    level, and layout.py, its metric-independent device layout
    query/          flat.py: the levels' arrays concatenated; query_space.py: the query's
                    numbering; search.py: the bidirectional overlay query; unpack.py:
                    shortcuts to arcs; router.py: CrpQuery(overlay, metric): route(s, t)
"""
from __future__ import annotations

from engine.crp.customization.cell_metric import CellMetric, CostOverflow
from engine.crp.customization.customize import Customizer, customize, customize_costs
from engine.crp.metric import FORBIDDEN
from engine.crp.metric.decoder import Decoder, DecoderError, load_decoder, shipped_decoders
from engine.crp.partition.overlay import Overlay
from engine.crp.partition.nested import Partition, partition_graph
from engine.crp.query.router import CrpQuery
from engine.core.turns import TURN_TYPES, Turns, turn_graph

__all__ = ["CellMetric", "CostOverflow", "Customizer", "customize", "customize_costs",
           "FORBIDDEN", "Decoder", "DecoderError", "load_decoder", "shipped_decoders", "Overlay",
           "Partition", "partition_graph", "CrpQuery", "TURN_TYPES", "Turns", "turn_graph"]
