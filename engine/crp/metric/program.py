"""A metric decoder compiled for one graph: ``compile_decoder(decoder, inputs) ->
DecoderProgram``, the two small arrays (< 1 KB with the expression) that the decode
kernels read besides the graph's own (engine/kernels/crp_decode.cu on the GPU,
engine.crp.metric.interpreter on the CPU).

The layout of those arrays (the I_*, D_*, F_* offsets and flags, the error codes) is
shared with both interpreters and must match crp_decode.cu.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.graph import ROAD_CLASS_INDEX, ROAD_CLASSES
from engine.core.turns import TURN_TYPES
from engine.crp.metric import FORBIDDEN
from engine.crp.metric.decoder import FORBIDDEN_TURN, Decoder, DecoderError
from engine.crp.metric.expression import ExpressionError, compile_program, names_in, parse

NUM_CLASSES = len(ROAD_CLASSES)
KIND_CODE = {"time": 0, "distance": 1, "metric": 2}
# ints: kind, forbidden-class mask, flags, metric row, code length, turn costs, code
I_KIND, I_CLASSES, I_FLAGS, I_METRIC, I_NCODE, I_TURN = 0, 1, 2, 3, 4, 5
I_CODE = I_TURN + len(TURN_TYPES)
# floats: speed cap, scale, class speeds, class multipliers, expression constants
D_CAP, D_SCALE, D_SPEED = 0, 1, 2
D_MULT = D_SPEED + NUM_CLASSES
D_CONST = D_MULT + NUM_CLASSES
# flags: what the decoder asks and which attributes the graph has
F_TOLL, F_MAXSPEED, F_EXPR = 1, 2, 4
F_LENGTH, F_CLASS, F_SPEED, F_LANES, F_FLAGS = 8, 16, 32, 64, 128
ATTR_FLAG = {"length_m": F_LENGTH, "road_class": F_CLASS, "speed_kmh": F_SPEED,
              "lanes": F_LANES}
BIT_TOLL, BIT_ONEWAY, BIT_ROUNDABOUT = 1, 2, 4
FLAG_BITS = {"toll": BIT_TOLL, "oneway": BIT_ONEWAY, "roundabout": BIT_ROUNDABOUT}
# an arc cost below 0 is one of these errors (never a cost)
ERR_NAN, ERR_NEGATIVE, ERR_TOO_LARGE = -1, -2, -3
ERRORS = {ERR_NAN: "is not a number (0/0 or inf-inf in the expression?)",
           ERR_NEGATIVE: "is negative",
           ERR_TOO_LARGE: f"is infinite or too large (>= {FORBIDDEN}; a division by zero?)"}



class DecodeError(DecoderError):
    """A decoder that does not fit this graph, or costs that cannot be represented."""


@dataclass(frozen=True, eq=False)
class DecoderProgram:
    """One decoder compiled for one graph: everything the kernels read besides the
    graph's arrays. ``ints`` and ``floats`` are the two uploads."""
    ints: np.ndarray        # int32: header, turn costs [8], expression code
    floats: np.ndarray      # float64: cap, scale, speeds [NC], multipliers [NC], constants
    notes: tuple[str, ...]  # what the decoder asks that this graph's data cannot honour

    @property
    def class_speed(self) -> np.ndarray:
        return self.floats[D_SPEED:D_MULT]

    @property
    def class_multiplier(self) -> np.ndarray:
        return self.floats[D_MULT:D_CONST]

    @property
    def turn_cost(self) -> np.ndarray:
        return self.ints[I_TURN:I_CODE]

    @property
    def forbidden_classes(self) -> list[str]:
        return [c for i, c in enumerate(ROAD_CLASSES) if self.ints[I_CLASSES] >> i & 1]

    @property
    def nbytes(self) -> int:
        return self.ints.nbytes + self.floats.nbytes



def compile_decoder(decoder: Decoder, inputs) -> DecoderProgram:
    """The program of ``decoder`` for the graph of ``inputs`` (engine.crp.metric.costs.
    DecodeInputs: what the graph has, its metric names)."""
    has, notes = inputs.has, []
    where = f"{decoder.source}: "
    _require(decoder, has, inputs)
    ints = np.zeros(I_CODE, dtype=np.int32)
    ints[I_KIND] = KIND_CODE[decoder.kind]
    ints[I_FLAGS] = sum(f for k, f in ATTR_FLAG.items() if k in has)
    if any(k in has for k in FLAG_BITS):
        ints[I_FLAGS] |= F_FLAGS
    for item in decoder.forbid:
        if item in ROAD_CLASS_INDEX:
            ints[I_CLASSES] |= 1 << ROAD_CLASS_INDEX[item]
        elif item == "toll" and "toll" in has:
            ints[I_FLAGS] |= F_TOLL
        else:
            notes.append(f"forbid {item}: not in this graph's data (ignored)")
    speeds = dict(decoder.speeds)
    if decoder.use_maxspeed or not speeds:
        if "speed_kmh" in has:
            ints[I_FLAGS] |= F_MAXSPEED
        elif decoder.use_maxspeed:
            notes.append("use_maxspeed: the graph has no speed_kmh (class speeds used)")
    if decoder.kind == "metric":
        column = metric_column(decoder, inputs.metric_names)
        if column != decoder.metric:
            notes.append(f"metric: this graph's one metric column, '{column}', stands for "
                         f"'{decoder.metric}'")
        ints[I_METRIC] = inputs.metric_names.index(column)
    ints[I_TURN:I_CODE] = _turn_costs(decoder, where)
    floats = np.zeros(D_CONST, dtype=np.float64)
    floats[D_CAP] = decoder.max_speed if decoder.max_speed is not None else np.inf
    floats[D_SCALE] = decoder.scale
    floats[D_SPEED:D_MULT] = [speeds.get(c, 0.0) for c in ROAD_CLASSES]
    floats[D_MULT:D_CONST] = [dict(decoder.multipliers).get(c, 1.0) for c in ROAD_CLASSES]
    if decoder.expression is not None:
        code, consts = _expression_program(decoder, inputs, bool(speeds))
        ints[I_FLAGS] |= F_EXPR
        ints[I_NCODE] = code.size
        ints, floats = np.concatenate([ints, code]), np.concatenate([floats, consts])
    return DecoderProgram(ints, floats, tuple(notes))


def _require(decoder: Decoder, has: frozenset, inputs) -> None:
    """Refuse a decoder whose base cost needs data the graph lacks."""
    graph = inputs.graph.source or "this graph"
    need = {"time": ("length_m", "road_class"), "distance": ("length_m",)}.get(decoder.kind, ())
    if decoder.multipliers or any(f in ROAD_CLASS_INDEX for f in decoder.forbid):
        need += ("road_class",)
    missing = [k for k in dict.fromkeys(need) if k not in has]
    if missing:
        raise DecodeError(f"{decoder.source}: kind: a {decoder.kind} decoder with these classes "
                          f"needs the arc attributes {', '.join(missing)}, which {graph} lacks "
                          f"(a graph with metric columns only takes a kind = \"metric\" "
                          f"decoder such as dimacs-time)")
    if decoder.kind == "metric" and metric_column(decoder, inputs.metric_names) is None:
        names = inputs.metric_names
        raise DecodeError(f"{decoder.source}: metric: {graph} has no metric column "
                          f"'{decoder.metric}' (it has: {', '.join(names)}; a decoder with "
                          f"metric = \"{names[0] if names else 'distance'}\" reads it)")


def metric_column(decoder: Decoder, names) -> str | None:
    """The metric column a kind = "metric" decoder reads: the one it names, else, on a
    graph with a single column (a one-metric DIMACS file calls it 'weight'), that one,
    so that dimacs-distance and dimacs-time work there; None when neither."""
    names = tuple(names)
    if decoder.metric in names:
        return decoder.metric
    return names[0] if names == ("weight",) else None


def _turn_costs(decoder: Decoder, where: str) -> np.ndarray:
    """Turn costs in cost units: seconds -> deciseconds for time decoders."""
    factor = 10.0 if decoder.kind == "time" else (decoder.scale if decoder.kind == "metric" else 1.0)
    out = np.zeros(len(TURN_TYPES), dtype=np.int32)
    for i, (name, value) in enumerate(decoder.turn_costs().items()):
        if value == FORBIDDEN_TURN:
            out[i] = FORBIDDEN
            continue
        cost = float(np.rint(value * factor))
        if cost >= FORBIDDEN:
            raise DecodeError(f"{where}turns.{name}: the cost {cost:g} does not fit int32")
        out[i] = int(cost)
    return out


def _expression_program(decoder: Decoder, inputs, has_speeds: bool):
    has = inputs.has
    speed_ok = "speed_kmh" in has or (has_speeds and "road_class" in has)
    available = set(has) | {"cost"} | set(inputs.metric_names)
    if speed_ok:
        available.add("speed_kmh")
        if "length_m" in has:
            available.add("time_s")
    try:
        tree = parse(decoder.expression)
        for name, column in sorted(names_in(tree), key=lambda nc: nc[1]):
            if name not in available:
                raise ExpressionError(column, f"'{name}' is not in this graph's data "
                                              f"({inputs.graph.source or 'this graph'})")
        program = compile_program(tree, inputs.metric_names)
    except ExpressionError as e:
        raise DecodeError(f"{decoder.source}: expression: {e}") from None
    return program.code, program.consts
