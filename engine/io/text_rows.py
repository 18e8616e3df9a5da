"""Text lines built with NumPy: many rows of numbers and table strings formatted into
one byte buffer, for the writers of large text formats (DIMACS ``.gr``/``.co``, OSM's
OPL that engine.generate.osm_writer hands to libosmium).

Python's ``%``-formatting costs about a microsecond per number and ``np.savetxt`` is
a Python loop over rows, so a 61 M-arc ``.gr`` would take minutes. Here every piece of
a row has a fixed width in a [rows, width] byte matrix (numbers right-aligned, digit by
digit over the whole column), a mask marks the bytes that are used, and
``matrix[mask]`` is the text: a few passes over the block per digit, no Python per row.
Callers format blocks of at most a few hundred thousand rows, so memory stays bounded.
"""
from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

_POW10 = 10 ** np.arange(19, dtype=np.int64)    # 1, 10, ..., 10^18
THREADS = max(1, min(8, os.cpu_count() or 1))   # blocks formatted at once


@dataclass(frozen=True)
class Int:
    """A column of integers in decimal; ``pad`` zero-pads to that many digits;
    ``negative`` (where given) decides the sign instead of the values' own; where
    ``present`` is False the row has nothing here."""
    values: np.ndarray
    pad: int = 0
    negative: np.ndarray | None = None
    present: np.ndarray | None = None


@dataclass(frozen=True)
class Table:
    """A column of codes, each written as ``strings[code]``."""
    codes: np.ndarray
    strings: tuple[bytes, ...]


def fixed(values: np.ndarray, decimals: int) -> list:
    """Pieces that write integers ``values`` scaled by 10^-decimals as fixed-point decimals
    ("-0.0000001" for -1 with 7 decimals), exactly: no float formatting involved."""
    v = np.asarray(values, dtype=np.int64)
    a = np.abs(v)
    return [Int(a // _POW10[decimals], negative=v < 0), b".", Int(a % _POW10[decimals], pad=decimals)]


def digits(a: np.ndarray) -> np.ndarray:
    """Decimal digits of each non-negative integer (1 for 0)."""
    return np.maximum(np.searchsorted(_POW10, a, side="right"), 1)


def rows(*pieces) -> bytes:
    """The text of ``len(column)`` rows, each the concatenation of ``pieces``: bytes
    constants (the same in every row), ``Int`` and ``Table`` columns; lists of pieces
    are flattened. Rows are not terminated unless a piece says so (b"\\n")."""
    flat = []
    for p in pieces:
        flat.extend(p if isinstance(p, list) else [p])
    k = next(len(p.values if isinstance(p, Int) else p.codes) for p in flat
             if not isinstance(p, bytes))
    parts = [_piece(p, k) for p in flat]
    width = sum(m.shape[1] for m, _ in parts)
    matrix = np.empty((k, width), dtype=np.uint8)
    used = np.empty((k, width), dtype=bool)
    at = 0
    for m, mask in parts:
        matrix[:, at:at + m.shape[1]] = m
        used[:, at:at + m.shape[1]] = mask
        at += m.shape[1]
    return matrix[used].tobytes()


def _piece(p, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(bytes [k, w], used [k, w]) of one piece."""
    if isinstance(p, bytes):
        row = np.frombuffer(p, dtype=np.uint8)
        return np.broadcast_to(row, (k, row.size)), np.ones((1, row.size), dtype=bool)
    if isinstance(p, Table):
        return _table(p)
    return _int(p)


def _table(p: Table):
    lengths = np.array([len(s) for s in p.strings], dtype=np.int64)
    table = np.zeros((len(p.strings), max(1, int(lengths.max(initial=0)))), dtype=np.uint8)
    for i, s in enumerate(p.strings):
        table[i, :len(s)] = np.frombuffer(s, dtype=np.uint8)
    codes = np.asarray(p.codes)
    return table[codes], np.arange(table.shape[1]) < lengths[codes][:, None]


def _int(p: Int):
    v = np.asarray(p.values, dtype=np.int64)
    negative = (v < 0) if p.negative is None else np.asarray(p.negative, dtype=bool)
    a = np.abs(v)
    nd = np.maximum(digits(a), p.pad)
    w = int(nd.max(initial=1)) + int(negative.any())
    matrix = np.empty((v.size, w), dtype=np.uint8)
    used = np.empty((v.size, w), dtype=bool)
    for d in range(w):                  # column w-1-d holds the digit of 10^d
        matrix[:, w - 1 - d] = a % 10 + 48
        used[:, w - 1 - d] = nd > d
        a //= 10
    if negative.any():                  # the sign just before the first digit
        r = np.flatnonzero(negative)
        matrix[r, w - 1 - nd[r]] = 45
        used[r, w - 1 - nd[r]] = True
    if p.present is not None:
        used &= np.asarray(p.present, dtype=bool)[:, None]
    return matrix, used


def in_order(make, items, threads: int = THREADS):
    """``make(item)`` for every item, made in worker threads (NumPy releases the GIL)
    at most ``2 * threads`` ahead of the caller, yielded in the items' order: the caller
    writes block k while blocks k+1... are being formatted, and memory stays a few
    blocks. On an exception in the caller, blocks not started are dropped."""
    ahead = deque()
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        for item in items:
            ahead.append(pool.submit(make, item))
            if len(ahead) >= 2 * threads:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
