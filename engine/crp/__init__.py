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
                    numbering; search.py: the bidirectional overlay query; staged.py:
                    between top cells, each cell alone then an A* across; unpack.py:
                    shortcuts to arcs; router.py: CrpQuery(overlay, metric): route(s, t)
"""
from __future__ import annotations

import importlib

# name -> the module that defines it; imported on first use (PEP 562), so that reading
# a decoder (engine.crp.metric.decoder) loads neither Numba nor the customization
_WHERE = {
    "CellMetric": "engine.crp.customization.cell_metric",
    "CostOverflow": "engine.crp.customization.cell_metric",
    "Customizer": "engine.crp.customization.customize",
    "customize": "engine.crp.customization.customize",
    "customize_costs": "engine.crp.customization.customize",
    "FORBIDDEN": "engine.crp.metric",
    "Decoder": "engine.crp.metric.decoder", "DecoderError": "engine.crp.metric.decoder",
    "load_decoder": "engine.crp.metric.decoder", "shipped_decoders": "engine.crp.metric.decoder",
    "Overlay": "engine.crp.partition.overlay",
    "Partition": "engine.crp.partition.nested", "partition_graph": "engine.crp.partition.nested",
    "CrpQuery": "engine.crp.query.router",
    "TURN_TYPES": "engine.core.turns", "Turns": "engine.core.turns", "turn_graph": "engine.core.turns",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
