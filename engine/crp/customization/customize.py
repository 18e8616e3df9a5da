"""customize(overlay, decoder, backend) -> CellMetric: the metric-dependent half of CRP.

The decoder turns arc and turn properties into costs (engine.crp.metric.costs), then the
cells are costed bottom-up: level 0 on the turns inside each cell, level l on the
shortcut matrices of level l-1. On the CPU each cell runs a Dijkstra per entry
(Numba, cells in parallel); on the GPU engine.crp.customization.gpu runs the paper's
kernels. Both give identical shortcut costs (integers; the minimum is unique).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine.crp.customization.cpu import FORBIDDEN, customize_cells
from engine.crp.customization.microcode import run_microcode_cpu


class CostOverflow(ArithmeticError):
    """A path cost inside a cell reached 2^31-1: scale the decoder's costs down."""


@dataclass(eq=False)
class CellMetric:
    """Costs of one metric on one overlay: arc costs, turn weights (turn + next arc) and
    every level's shortcut matrices, as NumPy arrays (host copies of GPU results)."""
    overlay: object
    name: str                       # the decoder's name
    arc_cost: np.ndarray            # int32 [m], FORBIDDEN for arcs the decoder forbids
    turn_weight: np.ndarray         # int32 [T]
    shortcuts: list[np.ndarray]     # int32 S_l per level
    timings: list[dict] = field(default_factory=list)   # per level: phase -> ms
    total_ms: float = 0.0
    backend: str = "cpu"
    unit: str = ""
    decode_ms: float = 0.0
    notes: tuple = ()
    decoder: object = None
    device_bytes: int | None = None  # device memory in use after customizing (GPU), else None
    flat_shortcuts: np.ndarray | None = None   # every S_l in one array (shortcuts are views of it)
    turn_weight_q: np.ndarray | None = None    # turn weights in the query's order (query_space)

    def level_weights(self, level: int) -> np.ndarray:
        """The weights the local edges of ``level`` index: turns, or S_{level-1}."""
        return self.turn_weight if level == 0 else self.shortcuts[level - 1]


def microcode(overlay):
    """Level 0's microinstructions, compiled once per overlay (metric-independent)."""
    mc = overlay.__dict__.get("_microcode")
    if mc is None:
        from engine.crp.customization.microcode import compile_microcode
        mc = overlay._microcode = compile_microcode(overlay, 0)
    return mc


def customize_costs(overlay, arc_cost, turn_weight, *, name: str = "", unit: str = "",
                    cancel=None, on_level=None) -> CellMetric:
    """Cost every cell from given arc costs and turn weights on the CPU."""
    arc_cost = np.ascontiguousarray(arc_cost, dtype=np.int32)
    turn_weight = np.ascontiguousarray(turn_weight, dtype=np.int32)
    metric = CellMetric(overlay, name, arc_cost, turn_weight, [], unit=unit)
    t_all = time.perf_counter()
    for topo in overlay.levels:
        if cancel is not None:
            cancel.check()            # an engine.core.progress.CancelToken: raises Cancelled
        t0 = time.perf_counter()
        s = _customize_level(overlay, topo, metric.level_weights(topo.level))
        metric.shortcuts.append(s)
        record = {"level": topo.level, "cells": topo.num_cells, "shortcuts": topo.num_shortcuts,
                  "variant": "microcode" if topo.level == 0 else "dijkstra",
                  "ms": {"search": (time.perf_counter() - t0) * 1000}}
        metric.timings.append(record)
        if on_level is not None:
            on_level(record)
    metric.total_ms = (time.perf_counter() - t_all) * 1000
    return metric


def _customize_level(overlay, topo, weights) -> np.ndarray:
    """S_l on the CPU: microinstructions for level 0, a Dijkstra per entry above."""
    if topo.level == 0:
        return run_microcode_cpu(microcode(overlay), weights)
    s = np.empty(topo.num_shortcuts, dtype=np.int32)
    if customize_cells(topo.vertex_first, topo.entry_first, topo.exit_first, topo.edge_first,
                       topo.edge_to, topo.edge_weight, weights, topo.clique_first, s):
        raise CostOverflow(f"a path inside a level-{topo.level} cell costs 2^31 or more: "
                           f"the decoder's costs are too large for this graph")
    return s


def customize(overlay, decoder, backend=None, *, cancel=None, on_level=None) -> CellMetric:
    """Decode ``decoder`` into arc and turn costs and cost every cell, on ``backend``
    (the CPU when None). The decoder's inputs are uploaded once per overlay and backend."""
    from engine.crp.metric.costs import DecodeInputs
    name = getattr(backend, "name", "cpu")
    inputs = overlay.__dict__.setdefault("_decode_inputs", {}).get(name)
    if inputs is None:
        inputs = DecodeInputs(overlay.graph, overlay.turns, backend if name == "gpu" else None)
        overlay._decode_inputs[name] = inputs
    unit = _unit(overlay.graph, decoder)
    if name == "gpu":
        metric = _customize_gpu(overlay, inputs, decoder, backend, unit, cancel, on_level)
    else:
        t0 = time.perf_counter()
        costs = inputs.decode(decoder)
        decode_ms = (time.perf_counter() - t0) * 1000
        metric = customize_costs(overlay, costs.arc_cost, costs.turn_weight, name=decoder.name,
                                 unit=unit, cancel=cancel, on_level=on_level)
        metric.decode_ms = decode_ms
        metric.notes = tuple(costs.notes)
    metric.decoder = decoder
    return metric


def _customize_gpu(overlay, inputs, decoder, backend, unit, cancel, on_level) -> CellMetric:
    """Decode and customize with one wait for the device: the decoder's error codes are
    checked after the levels ran (a bad decoder still raises DecodeError, never a
    metric). decode_ms is the decode's device time, and decode_ms + total_ms the wall
    time from the call until the device finished."""
    from engine.crp.metric.costs import check_costs
    t0 = time.perf_counter()
    start = backend.mark()
    costs = inputs.decode(decoder, check=False)
    end = backend.mark()
    try:
        metric = customize_costs_gpu(overlay, costs.arc_cost, costs.turn_weight, backend,
                                     name=decoder.name, unit=unit, cancel=cancel,
                                     on_level=on_level)
    except (CostOverflow, RuntimeError):
        check_costs(costs, inputs)       # error codes as costs: that is the real error
        raise
    wall_ms = (time.perf_counter() - t0) * 1000 - metric.copy_ms
    check_costs(costs, inputs)
    metric.decode_ms = backend.elapsed_ms(start, end)
    metric.total_ms = wall_ms - metric.decode_ms
    metric.notes = tuple(costs.notes)
    return metric


def customize_costs_gpu(overlay, arc_cost, turn_weight, backend, customizer=None, *,
                        name: str = "", unit: str = "", cancel=None,
                        on_level=None) -> CellMetric:
    """``customize_costs`` on the GPU (engine.crp.customization.gpu): the same CellMetric,
    shortcuts as host copies, the device arrays kept on ``metric.device_shortcuts``.
    Without ``customizer`` the overlay's own is used, built (uploads) on first use."""
    from engine.crp.customization.gpu import GpuCustomizer
    if cancel is not None:
        cancel.check()
    t_all = time.perf_counter()
    if customizer is None:
        customizer = overlay.__dict__.get("_gpu_customizer")
        if customizer is None or customizer.backend is not backend:
            customizer = overlay._gpu_customizer = GpuCustomizer(overlay, backend,
                                                                 microcode=microcode(overlay))
    elif customizer.overlay is not overlay:
        raise ValueError("the GpuCustomizer was built for another overlay")
    device_shortcuts, records = customizer.run(turn_weight)
    backend.synchronize()
    run_ms = (time.perf_counter() - t_all) * 1000
    metric = _host_metric(overlay, backend, arc_cost, turn_weight, device_shortcuts, records)
    metric.name, metric.unit = name, unit
    if on_level is not None:
        for record in records:
            on_level(record)
    metric.total_ms = run_ms                      # on the device; the copies are apart
    metric.copy_ms = (time.perf_counter() - t_all) * 1000 - run_ms
    return metric


def _host_metric(overlay, backend, arc_cost, turn_weight, device_shortcuts, records) -> CellMetric:
    """The GPU's results on the host for the CPU query, in few pinned copies: the
    matrices as one array (each S_l a view of it) and the turn weights already in the
    query's order (gathered on the device), so a new metric costs the query no
    host-side gathering or first-touch pages."""
    from engine.crp.query.flat import flatten
    from engine.crp.query.query_space import query_space
    xp = backend.xp
    order = overlay.__dict__.setdefault("_device_turn_order", {})
    if backend.name not in order:
        order[backend.name] = xp.asarray(query_space(overlay, flatten(overlay)).turn_order)
    turn_weight = xp.asarray(turn_weight, dtype=xp.int32)
    flat = xp.concatenate(device_shortcuts) if device_shortcuts else xp.zeros(0, xp.int32)
    host = [backend.to_host(xp.ascontiguousarray(xp.asarray(a, dtype=xp.int32)), pinned=True)
            for a in (arc_cost, turn_weight, turn_weight[order[backend.name]], flat)]
    ends = np.cumsum([s.size for s in device_shortcuts])
    shortcuts = np.split(host[3], ends[:-1]) if device_shortcuts else []
    metric = CellMetric(overlay, "", host[0], host[1], shortcuts, records, backend="gpu")
    metric.flat_shortcuts, metric.turn_weight_q = host[3], host[2]
    metric.device_shortcuts = device_shortcuts
    return metric


def _unit(graph, decoder) -> str:
    if decoder.kind == "time":
        return "ds"
    if decoder.kind == "distance":
        return "m"
    return graph.metric_units.get(decoder.metric, "")


__all__ = ["CellMetric", "CostOverflow", "customize", "customize_costs", "customize_costs_gpu",
           "FORBIDDEN"]
