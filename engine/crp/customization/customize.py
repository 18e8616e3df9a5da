"""customize(overlay, decoder, backend) -> CellMetric: the metric-dependent half of CRP,
and ``Customizer(overlay, backend)``, which keeps what customizing one overlay on one
backend reuses from metric to metric.

The decoder turns arc and turn properties into costs (engine.crp.metric.costs), then the
cells are costed bottom-up: level 0 on the turns inside each cell, level l on the
shortcut matrices of level l-1. On the CPU level 0 runs microinstructions
(engine.crp.customization.microcode) and the levels above a Dijkstra per entry (Numba,
cells in parallel: engine.crp.customization.cpu); on the GPU
engine.crp.customization.gpu runs the paper's kernels, and on several GPUs
engine.crp.customization.multi_gpu splits them by cell ranges. All give identical
shortcut costs (integers; the minimum is unique).

This module is the top of customization: it picks the CPU twin or the GPU customizer,
and nothing below imports it. The Overlay stays topology only: the decoder's uploaded
inputs, level 0's microcode, the GPU's device layout and the query's numbering live on
the Customizer, built on first use.
"""
from __future__ import annotations

import time
from functools import cached_property

import numpy as np

from engine.core.backend import cpu_backend
from engine.crp.customization.cell_metric import CellMetric, CostOverflow
from engine.crp.customization.cpu import customize_cells
from engine.crp.customization.microcode import compile_microcode, run_microcode_cpu
from engine.crp.customization.trees import tree_layout
from engine.crp.metric.costs import DecodeInputs, check_costs


class Customizer:
    """Customizes ``overlay`` on ``backend`` (None: the CPU) for any number of decoders.

    Metric-independent state is built once, on first use: ``inputs`` (the graph's
    attributes and turns on the backend), ``microcode`` (level 0's instructions),
    ``gpu`` (engine.crp.customization.gpu.GpuCustomizer: the device layout, with
    ``level_variants`` and ``gpu_options``) and ``query_space`` (the query's numbering,
    shared with the CrpQuery on this overlay). ``device_shortcuts``: the last one-GPU
    run's S_l on the device (None on the CPU and on several GPUs); they never leave
    the engine.

    ``devices``: several GPU Backends (engine.core.backend.gpu_backend(i)) to split
    the work over (engine.crp.customization.multi_gpu); the first, the main GPU, is
    then ``backend``. Each decodes the metric; the results equal one GPU's.
    ``split_level``: the level whose cells are split (None: chosen by estimated work).
    ``microcode`` and ``query_space``: level 0's instructions and the query's numbering
    when already built for this overlay (shared by several customizers: at 24 M nodes
    each takes seconds)."""

    def __init__(self, overlay, backend=None, level_variants=None, *, devices=None,
                 split_level: int | None = None, microcode=None, query_space=None,
                 **gpu_options) -> None:
        self.overlay = overlay
        for name, given in (("microcode", microcode), ("query_space", query_space)):
            if given is not None:
                self.__dict__[name] = given               # the cached property's value
        self.devices = tuple(devices) if devices and len(devices) > 1 else ()
        if self.devices:
            if backend is not None and backend != self.devices[0]:
                raise ValueError("the backend of a multi-GPU customization is its first device")
            if any(not d.is_gpu for d in self.devices):
                raise ValueError("multi-GPU customization needs GPU backends")
            backend = self.devices[0]
        elif devices:
            backend = devices[0] if backend is None else backend
        self.backend = backend if backend is not None else cpu_backend()
        self.level_variants, self.gpu_options = level_variants, gpu_options
        self.split_level = split_level
        self.device_shortcuts: list | None = None

    @property
    def on_gpu(self) -> bool:
        return bool(self.backend.is_gpu)

    @cached_property
    def microcode(self):
        """Level 0's microinstructions (engine.crp.customization.microcode)."""
        return compile_microcode(self.overlay, 0)

    @cached_property
    def inputs(self) -> DecodeInputs:
        return DecodeInputs(self.overlay.graph, self.overlay.turns,
                            self.backend if self.on_gpu else None)

    @cached_property
    def device_inputs(self) -> list[DecodeInputs]:
        """The decoder's inputs on every GPU of a multi-GPU customization (the main
        GPU's are ``inputs``; a device named twice shares them)."""
        made = {self.backend.device_id: self.inputs}
        for b in self.devices:
            if b.device_id not in made:
                with b.active():
                    made[b.device_id] = DecodeInputs(self.overlay.graph, self.overlay.turns, b)
        return [made[b.device_id] for b in self.devices]

    @cached_property
    def gpu(self):
        """The GPU customizer (uploads the device layout when first asked): one GPU's,
        or the multi-GPU one when there are ``devices``."""
        if self.devices:
            from engine.crp.customization.multi_gpu import MultiGpuCustomizer
            made = MultiGpuCustomizer(self.overlay, self.devices, self.level_variants,
                                      self.split_level, microcode=self.microcode,
                                      **self.gpu_options)
        else:
            from engine.crp.customization.gpu import GpuCustomizer
            made = GpuCustomizer(self.overlay, self.backend, self.level_variants,
                                 microcode=self.microcode, **self.gpu_options)
        # The device holds level 0's instructions now: the host copy (8 bytes an
        # instruction, 12.7 GB at 24 M nodes) is compiled again only if asked for.
        self.__dict__.pop("microcode", None)
        return made

    @cached_property
    def query_space(self):
        """The query's numbering of this overlay (engine.crp.query.query_space)."""
        from engine.crp.query.flat import flatten
        from engine.crp.query.query_space import query_space
        return query_space(self.overlay, flatten(self.overlay))

    @cached_property
    def tree_layout(self):
        """Where the CPU twin keeps each cell's shortest-path trees (customization/trees.py)."""
        return tree_layout(self.overlay)

    @cached_property
    def _device_turn_order(self):
        return self.backend.xp.asarray(self.query_space.turn_order)

    # ------------------------------------------------------------ customizing
    def customize(self, decoder, *, cancel=None, on_level=None) -> CellMetric:
        """Decode ``decoder`` into arc and turn costs and cost every cell."""
        unit = _unit(self.overlay.graph, decoder)
        try:
            if self.on_gpu:
                with self.backend.active():
                    metric = self._customize_gpu(decoder, unit, cancel, on_level)
            else:
                t0 = time.perf_counter()
                costs = self.inputs.decode(decoder)
                decode_ms = (time.perf_counter() - t0) * 1000
                metric = self.customize_costs(costs.arc_cost, costs.turn_weight,
                                              name=decoder.name, unit=unit, cancel=cancel,
                                              on_level=on_level)
                metric.decode_ms = decode_ms
                metric.notes = tuple(costs.notes)
        except CostOverflow as e:
            raise e.naming(decoder.name) from None
        metric.decoder = decoder
        return metric

    def customize_costs(self, arc_cost, turn_weight, *, name: str = "", unit: str = "",
                        cancel=None, on_level=None) -> CellMetric:
        """Cost every cell from given arc costs and turn weights (int32; on the GPU they
        may be device arrays)."""
        if not self.on_gpu:
            return self._costs_cpu(arc_cost, turn_weight, name=name, unit=unit, cancel=cancel,
                                   on_level=on_level)
        with self.backend.active():
            return self._costs_gpu(arc_cost, turn_weight, name=name, unit=unit, cancel=cancel,
                                   on_level=on_level)

    def _costs_cpu(self, arc_cost, turn_weight, *, name, unit, cancel, on_level) -> CellMetric:
        arc_cost = np.ascontiguousarray(arc_cost, dtype=np.int32)
        turn_weight = np.ascontiguousarray(turn_weight, dtype=np.int32)
        metric = CellMetric(self.overlay, name, arc_cost, turn_weight, [], unit=unit,
                            trees=self.tree_layout.empty())
        t_all = time.perf_counter()
        for topo in self.overlay.levels:
            if cancel is not None:
                cancel.check()        # an engine.core.progress.CancelToken: raises Cancelled
            t0 = time.perf_counter()
            metric.shortcuts.append(self._level_cpu(topo, metric.level_weights(topo.level),
                                                    metric.trees))
            record = {"level": topo.level, "cells": topo.num_cells,
                      "shortcuts": topo.num_shortcuts,
                      "variant": "microcode" if topo.level == 0 else "dijkstra",
                      "ms": {"search": (time.perf_counter() - t0) * 1000}}
            metric.timings.append(record)
            if on_level is not None:
                on_level(record)
        metric.total_ms = (time.perf_counter() - t_all) * 1000
        return metric

    def _level_cpu(self, topo, weights, trees) -> np.ndarray:
        """S_l on the CPU: microinstructions for level 0, a Dijkstra per entry above
        (which writes the level's trees into ``trees``)."""
        if topo.level == 0:
            return run_microcode_cpu(self.microcode, weights)
        s = np.empty(topo.num_shortcuts, dtype=np.int32)
        if customize_cells(topo.vertex_first, topo.entry_first, topo.exit_first, topo.edge_first,
                           topo.edge_to, topo.edge_weight, weights, topo.clique_first, s,
                           self.tree_layout.first[topo.level], trees):
            raise CostOverflow.at_level(topo.level)
        return s

    def _customize_gpu(self, decoder, unit, cancel, on_level) -> CellMetric:
        """Decode and customize with one wait for the device: the decoder's error codes
        are checked after the levels ran (a bad decoder still raises DecodeError, never
        a metric). decode_ms is the decode's device time, and decode_ms + total_ms the
        wall time from the call until the device finished."""
        backend, inputs = self.backend, self.inputs
        t0 = time.perf_counter()
        start = backend.mark()
        costs = inputs.decode(decoder, check=False)
        end = backend.mark()
        turn_weight = costs.turn_weight
        if self.devices:              # every GPU decodes for itself, at the same time
            turn_weight = [costs.turn_weight] + [
                _decoded(b, i, decoder) for b, i in zip(self.devices[1:], self.device_inputs[1:])]
        try:
            metric = self._costs_gpu(costs.arc_cost, turn_weight, name=decoder.name,
                                     unit=unit, cancel=cancel, on_level=on_level)
        except (CostOverflow, RuntimeError):
            check_costs(costs, inputs)       # error codes as costs: that is the real error
            raise
        wall_ms = (time.perf_counter() - t0) * 1000 - metric.copy_ms
        check_costs(costs, inputs)
        metric.decode_ms = backend.elapsed_ms(start, end)
        metric.total_ms = wall_ms - metric.decode_ms
        metric.notes = tuple(costs.notes)
        return metric

    def _costs_gpu(self, arc_cost, turn_weight, *, name, unit, cancel, on_level) -> CellMetric:
        """The GPU run: the same CellMetric as the CPU's, shortcuts as host copies, the
        device arrays kept on ``device_shortcuts``."""
        if cancel is not None:
            cancel.check()
        t_all = time.perf_counter()
        if self.devices:
            self.device_shortcuts, records = None, self.gpu.run(turn_weight)
            self.gpu.synchronize()
            turn_weight = turn_weight[0] if isinstance(turn_weight, list) else turn_weight
        else:
            self.device_shortcuts, records = self.gpu.run(turn_weight)
            self.backend.synchronize()
        run_ms = (time.perf_counter() - t_all) * 1000
        metric = self._host_metric(arc_cost, turn_weight, records)
        metric.name, metric.unit = name, unit
        if on_level is not None:
            for record in records:
                on_level(record)
        metric.total_ms = run_ms                      # on the device; the copies are apart
        metric.copy_ms = (time.perf_counter() - t_all) * 1000 - run_ms
        return metric

    def _host_metric(self, arc_cost, turn_weight, records) -> CellMetric:
        """The GPU's results on the host for the CPU query, in few pinned copies: the
        matrices as one array (each S_l a view of it) and the turn weights already in
        the query's order (gathered on the device), so a new metric costs the query no
        host-side gathering or first-touch pages."""
        backend, xp, device = self.backend, self.backend.xp, self.device_shortcuts
        turn_weight = xp.asarray(turn_weight, dtype=xp.int32)
        flat = xp.concatenate(device) if device else xp.zeros(0, xp.int32)
        # what the query reads at random (its turn weights, the matrices) on 2 MB pages
        host = [backend.to_host(xp.ascontiguousarray(xp.asarray(a, dtype=xp.int32)), pinned=True,
                                huge=huge)
                for a, huge in ((arc_cost, False), (turn_weight, False),
                                (turn_weight[self._device_turn_order], True), (flat, True))]
        sizes = [t.num_shortcuts for t in self.overlay.levels]
        if self.devices:             # each GPU copies its parts straight into one array
            host[3] = backend.host_empty(sum(sizes), np.int32, huge=True)
            self.gpu.copy_to_host(host[3])
        ends = np.cumsum(sizes)
        shortcuts = np.split(host[3], ends[:-1]) if sizes else []
        return CellMetric(self.overlay, "", host[0], host[1], shortcuts, records, backend="gpu",
                          flat_shortcuts=host[3], turn_weight_q=host[2])


def customize(overlay, decoder, backend=None, *, cancel=None, on_level=None) -> CellMetric:
    """Decode ``decoder`` and cost every cell of ``overlay`` on ``backend`` (the CPU when
    None). One-off: whoever customizes the same overlay again keeps a Customizer."""
    return Customizer(overlay, backend).customize(decoder, cancel=cancel, on_level=on_level)


def customize_costs(overlay, arc_cost, turn_weight, *, name: str = "", unit: str = "",
                    cancel=None, on_level=None) -> CellMetric:
    """Cost every cell from given arc costs and turn weights on the CPU."""
    return Customizer(overlay).customize_costs(arc_cost, turn_weight, name=name, unit=unit,
                                               cancel=cancel, on_level=on_level)


def _decoded(backend, inputs, decoder):
    """``decoder``'s turn weights decoded on another GPU (no wait: checked on the main)."""
    with backend.active():
        return inputs.decode(decoder, check=False).turn_weight


def _unit(graph, decoder) -> str:
    if decoder.kind == "time":
        return "ds"
    if decoder.kind == "distance":
        return "m"
    return graph.metric_units.get(decoder.metric, "")


__all__ = ["CellMetric", "CostOverflow", "Customizer", "customize", "customize_costs"]
