"""Streaming parser of DIMACS-style text: comment lines, one problem line, records.

A file arrives in blocks of whole lines (engine.io.limits.read_chunks). Each block
is parsed with NumPy on its byte buffer (line starts, token starts, a byte-class
table, NumPy's C number reader); only when something is wrong does the parser look
at single lines, to name the first bad one with its line number in the file.
"""
from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine.io.errors import LoadError
from engine.io.limits import read_chunks

MAX_DIGITS = 18  # keeps every number inside int64
PARSE_THREADS = max(1, min(8, os.cpu_count() or 1))   # blocks parsed at once (~60 MB each)

# 0 = not allowed, 1 = whitespace, 2 = minus sign, 3 = digit
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[[9, 10, 13, 32]] = 1
_BYTE_CLASS[45] = 2
_BYTE_CLASS[48:58] = 3


class Lines:
    """Line layout of one block: start/end offsets and first byte of each line."""

    def __init__(self, path, data: bytes, line0: int = 0) -> None:
        self.path = path
        self.line0 = line0          # lines of the file before this block
        self.buf = np.frombuffer(data, dtype=np.uint8)
        zero = data.find(b"\0")
        if zero >= 0:
            raise LoadError(path, "binary data, not a DIMACS text file",
                            line=line0 + data.count(b"\n", 0, zero) + 1)
        newlines = np.flatnonzero(self.buf == 10)
        self.start = np.concatenate([[0], newlines + 1])
        self.end = np.concatenate([newlines, [self.buf.size]])
        if self.start[-1] == self.buf.size:  # block ends with a newline: no last line
            self.start, self.end = self.start[:-1], self.end[:-1]
        self.first = np.append(self.buf, np.uint8(10))[self.start]

    @property
    def count(self) -> int:
        return int(self.start.size)

    def text(self, i: int) -> str:
        return bytes(self.buf[self.start[i]:self.end[i]]).decode("utf-8", "replace").strip()

    def line_of(self, byte_pos: int) -> int:
        return int(np.searchsorted(self.start, byte_pos, side="right")) - 1

    def number(self, i: int) -> int:
        """The 1-based line number in the file of the block's line ``i``."""
        return self.line0 + int(i) + 1

    def error(self, i: int, reason: str) -> LoadError:
        return LoadError(self.path, reason, line=self.number(i))


class RecordStream:
    """One file's problem line and records, fed block by block.

    ``on_problem(lines, index, words)`` checks the problem line (and the counts it
    announces) before any record is kept; ``on_block(lines, rec_lines, values)``
    checks and keeps one block's records ([k, fields] int64).
    """

    def __init__(self, path, tag: str, problem: str, fields: int, signed: bool,
                 on_problem, on_block) -> None:
        self.path, self.tag, self.problem = path, tag, problem
        self.fields, self.signed = fields, signed
        self.on_problem, self.on_block = on_problem, on_block
        self.p_line: int | None = None     # file line number of the problem line
        self.early: int | None = None      # first record line seen before any problem line
        self.count = 0

    def run(self, cancel=None) -> "RecordStream":
        """Parse the file: blocks are split into lines, classified and their numbers read
        in worker threads (NumPy releases the GIL), at most ``2 * PARSE_THREADS`` blocks
        ahead, and consumed in file order, so every check and error is the one a
        sequential pass would meet first."""
        line0, ahead = 0, deque()
        blocks = read_chunks(self.path, cancel)
        pool = ThreadPoolExecutor(max_workers=PARSE_THREADS)
        try:
            while (block := self._next(blocks, ahead)) is not None:
                ahead.append(pool.submit(self._parse, block, line0))
                line0 += block.count(b"\n") + (not block.endswith(b"\n"))
                if len(ahead) >= 2 * PARSE_THREADS:
                    self._consume(*ahead.popleft().result())
            while ahead:
                if cancel is not None:
                    cancel.check()
                self._consume(*ahead.popleft().result())
        except BaseException:
            # cancelled or refused: blocks not started are dropped, and those being
            # parsed finish in the background (one block each), unwaited for
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        if self.p_line is None:
            raise LoadError(self.path, f"no problem line ('{self.problem} N ...')")
        return self

    def _next(self, blocks, ahead: deque) -> bytes | None:
        """The next block, None at the end; when reading fails (a damaged compressed
        file), the blocks read before it are consumed first, so that their faults,
        earlier in the file, are the ones named."""
        try:
            return next(blocks)
        except StopIteration:
            return None
        except LoadError:
            while ahead:
                self._consume(*ahead.popleft().result())
            raise

    def _parse(self, block: bytes, line0: int):
        """(lines, classes or the error, values or the error) of one block: the work
        that needs no state, done ahead; errors are kept for their turn."""
        lines = Lines(self.path, block, line0)
        try:
            classes = _classify(lines, self.tag)
        except LoadError as e:
            return lines, e, None
        try:
            values = parse_int_fields(lines, np.flatnonzero(classes[0]), self.tag,
                                      self.fields, self.signed)
        except LoadError as e:
            values = e
        return lines, classes, values

    def _consume(self, lines: Lines, classes, values) -> None:
        """One block in file order: the problem line, then its records."""
        if isinstance(classes, LoadError):
            raise classes
        is_rec, is_p = classes
        p_lines, rec_lines = np.flatnonzero(is_p), np.flatnonzero(is_rec)
        if p_lines.size:
            if self.p_line is not None or p_lines.size > 1:
                raise lines.error(p_lines[0 if self.p_line is not None else 1],
                                  "second problem line")
            before = rec_lines[rec_lines < p_lines[0]]
            if self.early is None and before.size:
                self.early = lines.number(before[0])
        elif self.p_line is None:   # no problem line yet: only remember where records began
            if self.early is None and rec_lines.size:
                self.early = lines.number(rec_lines[0])
            return
        if self.early is not None:
            raise LoadError(self.path, f"'{self.tag}' line before the problem line",
                            line=self.early)
        if p_lines.size:
            self.p_line = lines.number(p_lines[0])
            self.on_problem(lines, int(p_lines[0]), lines.text(p_lines[0]).split())
        if isinstance(values, LoadError):
            raise values
        self.count += values.shape[0]
        self.on_block(lines, rec_lines, values)


def _classify(lines: Lines, tag: str) -> tuple[np.ndarray, np.ndarray]:
    """(is record, is problem line) per line; any line that is neither, nor a
    comment or blank, is an error."""
    first = lines.first
    blank = np.isin(first, (10, 13, 32, 9)) & (lines.end - lines.start <= 1) | \
        (lines.end == lines.start)
    is_rec = first == ord(tag)
    is_p = first == ord("p")
    other = ~(blank | is_rec | is_p | (first == ord("c")))
    if other.any():
        i = int(np.argmax(other))
        raise lines.error(i, f"unexpected line {lines.text(i)[:40]!r} "
                             f"(expected 'c', 'p' or '{tag}' lines)")
    return is_rec, is_p


def parse_int_fields(lines: Lines, rec_lines: np.ndarray, tag: str, fields: int,
                     signed: bool) -> np.ndarray:
    """Integer parsing of the record lines: [k, fields] int64.

    Non-record lines and tag bytes are blanked, the byte classes are checked with a
    lookup table, tokens are counted per line, and NumPy's C text reader converts
    the numbers once the buffer is known to hold nothing else.
    """
    k = rec_lines.size
    if k == 0:
        return np.zeros((0, fields), dtype=np.int64)
    c = lines.buf.copy()
    other = np.ones(lines.start.size, dtype=bool)
    other[rec_lines] = False
    c[_ragged_positions(lines.start[other], lines.end[other])] = 32
    c[lines.start[rec_lines]] = 32
    cls = _BYTE_CLASS[c]
    bad = np.flatnonzero(cls == 0)
    if bad.size:
        i = lines.line_of(bad[0])
        raise lines.error(i, f"non-numeric value in {lines.text(i)[:60]!r}")
    tok_start, tok_end = _tokens(cls >= 2)
    per_line = np.searchsorted(tok_start, lines.end[rec_lines]) - \
        np.searchsorted(tok_start, lines.start[rec_lines])
    wrong = np.flatnonzero(per_line != fields)
    if wrong.size:
        i = rec_lines[wrong[0]]
        raise lines.error(i, f"expected {fields} numbers after '{tag}', "
                             f"got {lines.text(i)[:60]!r}")
    too_long = np.flatnonzero(tok_end - tok_start > MAX_DIGITS)
    if too_long.size:
        i = lines.line_of(tok_start[too_long[0]])
        raise lines.error(i, f"number too large in {lines.text(i)[:60]!r}")
    _check_signs(lines, c, cls, tok_start, signed)
    values = np.fromstring(c.tobytes(), dtype=np.int64, sep=" ")
    if values.size != k * fields:  # cannot happen after the checks above
        raise LoadError(lines.path, "could not read all numbers")
    return values.reshape(k, fields)


def _tokens(in_tok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edges = np.flatnonzero(in_tok[1:] != in_tok[:-1]) + 1
    if in_tok[0]:
        edges = np.concatenate([[0], edges])
    if in_tok[-1]:
        edges = np.concatenate([edges, [in_tok.size]])
    return edges[0::2], edges[1::2]


def _check_signs(lines: Lines, c, cls, tok_start, signed: bool) -> None:
    """A sign must open a token and be followed by a digit (and be allowed at all)."""
    minus = np.flatnonzero(c == 45)
    if not minus.size:
        return
    pos = np.minimum(np.searchsorted(tok_start, minus), tok_start.size - 1)
    at_start = tok_start[pos] == minus
    digit_next = cls[np.minimum(minus + 1, c.size - 1)] == 3
    misplaced = ~(at_start & digit_next & (minus + 1 < c.size))
    if misplaced.any() or not signed:
        pos = minus[np.argmax(misplaced)] if misplaced.any() else minus[0]
        i = lines.line_of(pos)
        reason = "malformed number" if misplaced.any() else "negative value"
        raise lines.error(i, f"{reason} in {lines.text(i)[:60]!r}")


def _ragged_positions(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """All positions in the half-open ranges [starts[i], ends[i])."""
    lengths = ends - starts
    total = int(lengths.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets


def problem_numbers(lines: Lines, index: int, words: list[str], expect: list[str],
                    count: int) -> list[int]:
    """Check the problem line ``p <expect...> <count ints>`` and return its integers."""
    nums = words[1 + len(expect):]
    if words[1:1 + len(expect)] != expect or len(nums) != count or \
            not all(w.isascii() and w.isdigit() and len(w) <= MAX_DIGITS for w in nums):
        raise lines.error(index, f"malformed problem line {' '.join(words)!r} "
                                 f"(expected 'p {' '.join(expect)}{' N' * count}')")
    return [int(w) for w in nums]
