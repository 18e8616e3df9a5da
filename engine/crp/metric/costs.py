"""Decoding: a metric decoder (engine/crp/metric/decoder.py) applied to one graph gives an
integral cost per arc and a weight per turn (turn cost + cost of the arc it enters).

``DecodeInputs`` uploads the graph's arc attributes and the turn arrays once; each
decode then compiles the decoder to a ``DecoderProgram`` (two small arrays, < 1 KB
with the expression) and runs one interpreter kernel per arc and one per turn:
engine/kernels/crp_decode.cu on the GPU, the Numba twin below on the CPU. Both
evaluate in float64 with round-to-nearest +, -, *, / and no fused multiply-add, and
round with rint, so GPU and CPU costs are bit-identical.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.core.backend import cpu_backend
from engine.crp.metric.decoder import FORBIDDEN_TURN, Decoder, DecoderError
from engine.crp.metric.expression import (MAX_STACK, METRIC_SLOT0, OP, SLOT, ExpressionError,
                                   compile_program, names_in, parse)
from engine.core.turns import TURN_TYPES
from engine.core.graph import ROAD_CLASS_INDEX, ROAD_CLASSES

FORBIDDEN = int(np.iinfo(np.int32).max)
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
_ATTR_FLAG = {"length_m": F_LENGTH, "road_class": F_CLASS, "speed_kmh": F_SPEED,
              "lanes": F_LANES}
BIT_TOLL, BIT_ONEWAY, BIT_ROUNDABOUT = 1, 2, 4
_FLAG_BITS = {"toll": BIT_TOLL, "oneway": BIT_ONEWAY, "roundabout": BIT_ROUNDABOUT}
# an arc cost below 0 is one of these errors (never a cost)
ERR_NAN, ERR_NEGATIVE, ERR_TOO_LARGE = -1, -2, -3
_ERRORS = {ERR_NAN: "is not a number (0/0 or inf-inf in the expression?)",
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
        self.has = frozenset(k for k in (*_ATTR_FLAG, *_FLAG_BITS) if k in attrs)
        if "road_class" in attrs and m and not (
                0 <= int(attrs["road_class"].min()) and int(attrs["road_class"].max()) < NUM_CLASSES):
            raise DecodeError(f"{graph.source}: road_class outside 0..{NUM_CLASSES - 1}")
        flags = np.zeros(m, dtype=np.uint8)
        for name, bit in _FLAG_BITS.items():
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
    else:
        _arc_costs_cpu(ints, floats, a["length_m"], a["road_class"], a["speed_kmh"],
                       a["lanes"], a["flags"], a["metrics"], arc_cost)
    if backend.is_gpu:
        backend.launch("crp_decode", "crp_turn_weights",
                       (ints, a["to_arc"], a["turn_type"], arc_cost, np.int64(turn_weight.size),
                        turn_weight), threads=turn_weight.size)
    else:
        turn_weight[...] = _turn_weights_host(program.turn_cost, a["to_arc"], a["turn_type"],
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


# ----------------------------------------------------------------- compiling
def compile_decoder(decoder: Decoder, inputs: DecodeInputs) -> DecoderProgram:
    """The program of ``decoder`` for the graph of ``inputs``."""
    has, notes = inputs.has, []
    where = f"{decoder.source}: "
    _require(decoder, has, inputs)
    ints = np.zeros(I_CODE, dtype=np.int32)
    ints[I_KIND] = KIND_CODE[decoder.kind]
    ints[I_FLAGS] = sum(f for k, f in _ATTR_FLAG.items() if k in has)
    if any(k in has for k in _FLAG_BITS):
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
        ints[I_METRIC] = inputs.metric_names.index(decoder.metric)
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


def _require(decoder: Decoder, has: frozenset, inputs: DecodeInputs) -> None:
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
    if decoder.kind == "metric" and decoder.metric not in inputs.metric_names:
        raise DecodeError(f"{decoder.source}: metric: {graph} has no metric column "
                          f"'{decoder.metric}' (it has: {', '.join(inputs.metric_names)})")


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


def _expression_program(decoder: Decoder, inputs: DecodeInputs, has_speeds: bool):
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


# ----------------------------------------------------------------- checks
def _check_arcs(arc_cost, inputs: DecodeInputs, decoder: Decoder) -> None:
    if arc_cost.size == 0 or int(arc_cost.min()) >= 0:
        return
    xp, graph = inputs.backend.xp, inputs.graph
    arc = int(xp.flatnonzero(arc_cost < 0)[0])
    count = int((arc_cost < 0).sum())
    tail, head = graph.node_id[graph.tail[arc]], graph.node_id[graph.head[arc]]
    raise DecodeError(f"{decoder.source}: the cost of arc {arc} ({tail} -> {head}) "
                      f"{_ERRORS[int(arc_cost[arc])]}; {count} arcs fail")


def _check_turns(turn_weight, inputs: DecodeInputs, decoder: Decoder) -> None:
    if turn_weight.size and int(turn_weight.min()) < 0:
        t = int(inputs.backend.xp.flatnonzero(turn_weight < 0)[0])
        raise DecodeError(f"{decoder.source}: turn {t} (arc {int(inputs.turns.from_arc[t])} -> "
                          f"{int(inputs.turns.to_arc[t])}): turn cost + arc cost overflows "
                          f"int32 (>= {FORBIDDEN})")


def _turn_weights_host(turn_cost, to_arc, turn_type, arc_cost) -> np.ndarray:
    """CPU twin of crp_turn_weights."""
    tc = turn_cost.astype(np.int64)[turn_type]
    ac = arc_cost.astype(np.int64)[to_arc]
    w = tc + ac
    w[w >= FORBIDDEN] = ERR_TOO_LARGE
    w[(tc == FORBIDDEN) | (ac == FORBIDDEN)] = FORBIDDEN
    return w.astype(np.int32)


# ----------------------------------------------------------------- the CPU twin
# error_model="numpy": x/0 gives IEEE inf or nan as on the GPU, not an exception;
# no fastmath, so LLVM neither contracts a*b+c into an FMA nor reorders.
_JIT = dict(cache=True, error_model="numpy")
_CONST, _PROP, _NEG, _NOT, _WHERE = OP["const"], OP["prop"], OP["neg"], OP["not"], OP["where"]


@numba.njit(**_JIT)
def _run(ints, floats, base, metrics, a, stack) -> float:
    """Evaluate the postfix program of ``ints`` on one arc (twin of crp_decode.cu)."""
    sp = 0
    for i in range(ints[I_NCODE]):
        word = ints[I_CODE + i]
        op, arg = word & 0xFF, word >> 8
        if op == _CONST:
            stack[sp] = floats[D_CONST + arg]
            sp += 1
        elif op == _PROP:
            stack[sp] = base[arg] if arg < METRIC_SLOT0 else float(metrics[arg - METRIC_SLOT0, a])
            sp += 1
        elif op == _NEG:
            stack[sp - 1] = -stack[sp - 1]
        elif op == _NOT:
            stack[sp - 1] = 1.0 if stack[sp - 1] == 0.0 else 0.0
        elif op >= _WHERE:                  # where, clamp: three operands
            x, y, z = stack[sp - 3], stack[sp - 2], stack[sp - 1]
            if op == _WHERE:
                r = y if x != 0.0 else z
            else:
                r = x if x > y else y
                r = r if r < z else z
            sp -= 2
            stack[sp - 1] = r
        else:
            stack[sp - 2] = _binary(op, stack[sp - 2], stack[sp - 1])
            sp -= 1
    return stack[0]


@numba.njit(**_JIT)
def _binary(op, x, y) -> float:
    """add sub mul div (2-5), lt le gt ge eq ne (7-12), and or (13, 14), min max (16, 17)."""
    if op == 2:
        return x + y
    if op == 3:
        return x - y
    if op == 4:
        return x * y
    if op == 5:
        return x / y
    if op == 16:
        return x if x < y else y
    if op == 17:
        return x if x > y else y
    if op == 13:
        return 1.0 if (x != 0.0 and y != 0.0) else 0.0
    if op == 14:
        return 1.0 if (x != 0.0 or y != 0.0) else 0.0
    c = (x < y) if op == 7 else (x <= y) if op == 8 else (x > y) if op == 9 else \
        (x >= y) if op == 10 else (x == y) if op == 11 else (x != y)
    return 1.0 if c else 0.0


@numba.njit(**_JIT)
def _arc_costs_cpu(ints, floats, length, cls, speed, lanes, flags, metrics, out) -> None:
    stack = np.empty(MAX_STACK, dtype=np.float64)
    base = np.zeros(METRIC_SLOT0, dtype=np.float64)
    kind, mask, f = ints[I_KIND], ints[I_CLASSES], ints[I_FLAGS]
    for a in range(out.size):
        c = cls[a] if f & F_CLASS else 0
        bits = flags[a] if f & F_FLAGS else 0
        if (mask >> c) & 1 or (f & F_TOLL and bits & BIT_TOLL):
            out[a] = FORBIDDEN
            continue
        s = floats[D_SPEED + c]
        if f & F_MAXSPEED and speed[a] > 0:
            s = float(speed[a])
        s = s if s < floats[D_CAP] else floats[D_CAP]
        ln = float(length[a]) if f & F_LENGTH else 0.0
        time_s = ln / (s / 3.6)
        mult = floats[D_MULT + c]
        if kind == 0:
            cost = time_s * 10.0 * mult
        elif kind == 1:
            cost = ln * mult
        else:
            cost = float(metrics[ints[I_METRIC], a]) * floats[D_SCALE] * mult
        if f & F_EXPR:
            base[0], base[1], base[2], base[3] = ln, s, float(lanes[a]) if f & F_LANES else 0.0, c
            base[4], base[5] = bits & BIT_TOLL, (bits & BIT_ONEWAY) >> 1
            base[6], base[7], base[8] = (bits & BIT_ROUNDABOUT) >> 2, time_s, cost
            cost = _run(ints, floats, base, metrics, a, stack)
        out[a] = _rounded(cost)


@numba.njit(**_JIT)
def _rounded(cost) -> int:
    if cost != cost:
        return ERR_NAN
    if cost < 0.0:
        return ERR_NEGATIVE
    r = np.rint(cost)
    if r >= 2147483647.0:
        return ERR_TOO_LARGE
    return int(r) if r >= 1.0 else 1


def evaluate_expression(text: str, **values: float) -> float:
    """The value of expression ``text`` with the given property and metric values,
    run by the CPU interpreter (for tests and the editor's preview)."""
    metric_names = [k for k in values if k not in SLOT]
    program = compile_program(parse(text), metric_names)
    ints = np.concatenate([np.zeros(I_CODE, np.int32), program.code]).astype(np.int32)
    ints[I_NCODE] = program.code.size
    floats = np.concatenate([np.zeros(D_CONST), program.consts])
    base = np.array([float(values.get(k, 0.0)) for k in SLOT], dtype=np.float64)
    metrics = np.array([[float(values[k])] for k in metric_names] or [[0.0]]).astype(np.int32)
    return float(_run(ints, floats, base, metrics, 0, np.empty(MAX_STACK)))
