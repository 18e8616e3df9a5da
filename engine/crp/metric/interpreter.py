"""The CPU twin of engine/kernels/crp_decode.cu: the decoder program
(engine.crp.metric.program) run per arc by a Numba interpreter of its postfix
expression code, and the turn weights from the arc costs.

Like the kernel it evaluates in float64 with round-to-nearest +, -, *, / and no fused
multiply-add, and rounds with rint, so GPU and CPU costs are bit-identical.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.crp.metric import FORBIDDEN
from engine.crp.metric.expression import MAX_STACK, METRIC_SLOT0, OP, SLOT, compile_program, parse
from engine.crp.metric.program import (BIT_ONEWAY, BIT_ROUNDABOUT, BIT_TOLL, D_CAP, D_CONST,
                                       D_MULT, D_SCALE, D_SPEED, ERR_NAN, ERR_NEGATIVE,
                                       ERR_TOO_LARGE, F_CLASS, F_EXPR, F_FLAGS, F_LANES,
                                       F_LENGTH, F_MAXSPEED, F_TOLL, I_CLASSES, I_CODE, I_FLAGS,
                                       I_KIND, I_METRIC, I_NCODE)


def turn_weights_cpu(turn_cost, to_arc, turn_type, arc_cost) -> np.ndarray:
    """CPU twin of crp_turn_weights."""
    tc = turn_cost.astype(np.int64)[turn_type]
    ac = arc_cost.astype(np.int64)[to_arc]
    w = tc + ac
    w[w >= FORBIDDEN] = ERR_TOO_LARGE
    w[(tc == FORBIDDEN) | (ac == FORBIDDEN)] = FORBIDDEN
    return w.astype(np.int32)



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
def arc_costs_cpu(ints, floats, length, cls, speed, lanes, flags, metrics, out) -> None:
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
