"""Decoding: a metric decoder (engine.crp.metric.decoder) applied to one graph gives an
integral cost per arc and a weight per turn (turn cost + cost of the arc it enters).

``DecodeInputs`` uploads the graph's arc attributes and the turn arrays once; each
decode then compiles the decoder to a ``DecoderProgram`` (engine.crp.metric.program)
and runs one interpreter kernel per arc and one per turn: engine/kernels/crp_decode.cu
on the GPU, its Numba twin (engine.crp.metric.interpreter) on the CPU. GPU and CPU
costs are bit-identical.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.backend import cpu_backend
from engine.crp.metric import FORBIDDEN
from engine.crp.metric.decoder import Decoder
from engine.crp.metric.interpreter import arc_costs_cpu, turn_weights_cpu
from engine.crp.metric.program import (ATTR_FLAG, ERRORS, FLAG_BITS, NUM_CLASSES, DecodeError,
                                       DecoderProgram, compile_decoder)


@dataclass(frozen=True, eq=False)
class DecodedCosts:
    arc_cost: object        # int32 [m] on the backend; FORBIDDEN marks a forbidden arc
    turn_weight: object     # int32 [T]: turn cost + arc_cost[to_arc], or FORBIDDEN
    program: DecoderProgram
    decoder: Decoder

    @property
    def notes(self) -> tuple[str, ...]:
        return self.program.notes


class DecodeInputs:
    """A graph's arc attributes, metric columns and turns on one backend, uploaded
    once and reused by every decode (a metric edit uploads only the program)."""

    def __init__(self, graph, turns, backend=None) -> None:
        self.graph, self.turns = graph, turns
        self.backend = backend or cpu_backend()
        attrs, m = graph.arc_attrs, graph.num_arcs
        self.has = frozenset(k for k in (*ATTR_FLAG, *FLAG_BITS) if k in attrs)
        if "road_class" in attrs and m and not (
                0 <= int(attrs["road_class"].min()) and int(attrs["road_class"].max()) < NUM_CLASSES):
            raise DecodeError(f"{graph.source}: road_class outside 0..{NUM_CLASSES - 1}")
        flags = np.zeros(m, dtype=np.uint8)
        for name, bit in FLAG_BITS.items():
            if name in attrs:
                flags |= np.where(np.asarray(attrs[name], dtype=bool), bit, 0).astype(np.uint8)
        self.metric_names = list(graph.metric_names)
        metrics = (np.stack([graph.metrics[k] for k in self.metric_names]).astype(np.int32)
                   if self.metric_names else np.zeros((1, m), dtype=np.int32))
        host = {"length_m": np.float32, "road_class": np.int8, "speed_kmh": np.float32,
                "lanes": np.int8}
        arrays = {k: np.ascontiguousarray(attrs[k], dtype=t) if k in attrs else np.zeros(1, t)
                  for k, t in host.items()}
        arrays.update(flags=flags, metrics=metrics, to_arc=turns.to_arc, turn_type=turns.turn_type)
        put = self.backend.to_device
        self.arrays = {k: put(np.ascontiguousarray(v)) for k, v in arrays.items()}
        self.num_arcs = m

    def decode(self, decoder: Decoder, check: bool = True) -> DecodedCosts:
        return decode(self.graph, self.turns, decoder, self.backend, inputs=self, check=check)


def decode(graph, turns, decoder: Decoder, backend=None, inputs: DecodeInputs | None = None,
           check: bool = True) -> DecodedCosts:
    """Arc costs and turn weights of ``decoder`` on ``graph`` (backend None: NumPy).
    Raises DecodeError when the decoder needs data the graph lacks or (``check``) a
    cost is not a finite non-negative int32. Without ``check`` nothing waits for the
    device: the caller runs ``check_costs`` later, off the critical path."""
    if inputs is None:
        inputs = DecodeInputs(graph, turns, backend)
    program = compile_decoder(decoder, inputs)
    backend, a = inputs.backend, inputs.arrays
    xp = backend.xp
    ints, floats = backend.to_device(program.ints), backend.to_device(program.floats)
    arc_cost = xp.empty(inputs.num_arcs, dtype=np.int32)
    turn_weight = xp.empty(a["to_arc"].size, dtype=np.int32)
    if backend.is_gpu:
        backend.launch("crp_decode", "crp_arc_costs",
                       (ints, floats, a["length_m"], a["road_class"], a["speed_kmh"],
                        a["lanes"], a["flags"], a["metrics"], np.int64(arc_cost.size),
                        arc_cost), threads=arc_cost.size)
        backend.launch("crp_decode", "crp_turn_weights",
                       (ints, a["to_arc"], a["turn_type"], arc_cost, np.int64(turn_weight.size),
                        turn_weight), threads=turn_weight.size)
    else:
        arc_costs_cpu(ints, floats, a["length_m"], a["road_class"], a["speed_kmh"],
                      a["lanes"], a["flags"], a["metrics"], arc_cost)
        turn_weight[...] = turn_weights_cpu(program.turn_cost, a["to_arc"], a["turn_type"],
                                            arc_cost)
    costs = DecodedCosts(arc_cost, turn_weight, program, decoder)
    if check:
        check_costs(costs, inputs)
    return costs


def check_costs(costs: DecodedCosts, inputs: DecodeInputs) -> None:
    """DecodeError for an error code among the costs, the arcs' first (a bad arc cost
    also spoils the turn weights into it)."""
    _check_arcs(costs.arc_cost, inputs, costs.decoder)
    _check_turns(costs.turn_weight, inputs, costs.decoder)


# ----------------------------------------------------------------- checks
def _check_arcs(arc_cost, inputs: DecodeInputs, decoder: Decoder) -> None:
    if arc_cost.size == 0 or int(arc_cost.min()) >= 0:
        return
    xp, graph = inputs.backend.xp, inputs.graph
    arc = int(xp.flatnonzero(arc_cost < 0)[0])
    count = int((arc_cost < 0).sum())
    tail, head = graph.node_id[graph.tail[arc]], graph.node_id[graph.head[arc]]
    raise DecodeError(f"{decoder.source}: the cost of arc {arc} ({tail} -> {head}) "
                      f"{ERRORS[int(arc_cost[arc])]}; {count} arcs fail")


def _check_turns(turn_weight, inputs: DecodeInputs, decoder: Decoder) -> None:
    if turn_weight.size and int(turn_weight.min()) < 0:
        t = int(inputs.backend.xp.flatnonzero(turn_weight < 0)[0])
        raise DecodeError(f"{decoder.source}: turn {t} (arc {int(inputs.turns.from_arc[t])} -> "
                          f"{int(inputs.turns.to_arc[t])}): turn cost + arc cost overflows "
                          f"int32 (>= {FORBIDDEN})")


__all__ = ["FORBIDDEN", "DecodeError", "DecodeInputs", "DecodedCosts", "decode", "check_costs"]
