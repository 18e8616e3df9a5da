"""The block structure of an OSM PBF file: blob headers, decompression, the header
block's features, and the data blocks decoded on a thread pool in file order.

A PBF file is a sequence of (4-byte big-endian length, BlobHeader, Blob); each Blob
holds one block, zlib-compressed (or raw, or lzma). Blocks are independent, so they
are decompressed (zlib releases the GIL) and decoded (engine.io.pbf_decode, a
``nogil`` Numba function) on several threads while this thread reads ahead; at most
``2 x threads`` blocks are in flight, so memory stays bounded by the block size
(the format caps a blob at 32 MiB). ``Unsupported`` names what this reader leaves to
libosmium: other compressions, history files, locations on ways, unusual coordinate
granularity.
"""
from __future__ import annotations

import lzma
import os
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine.io.pbf_decode import decode_block

__all__ = ["Unsupported", "Damaged", "data_blocks"]

MAX_HEADER = 64 * 1024          # the format's limits on a BlobHeader and a Blob
MAX_BLOB = 32 * 1024 * 1024
_FEATURES = frozenset({"OsmSchema-V0.6", "DenseNodes"})


class Unsupported(Exception):
    """A valid file this reader leaves to libosmium (the reason says what)."""


class Damaged(Exception):
    """Not a readable PBF file; the message says where and why."""


def _varint(data, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise Damaged("truncated varint in a block header")
        b = data[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(data):
    """(number, value) of a small protobuf message: ints, or memoryviews of payloads."""
    data = memoryview(data)
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise Damaged("a block header field runs past its end")
            value, pos = data[pos:pos + length], pos + length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
            continue
        else:
            raise Damaged(f"unknown protobuf wire type {wire}")
        yield number, value


def _blobs(f, size: int):
    """(offset, type, blob bytes) of every blob in the file, read sequentially."""
    offset = 0
    while offset < size:
        head = f.read(4)
        if len(head) < 4:
            raise Damaged(f"truncated block length at byte {offset}")
        n = int.from_bytes(head, "big")
        if n > MAX_HEADER:
            raise Damaged(f"block header of {n} bytes at byte {offset} (at most {MAX_HEADER})")
        header = f.read(n)
        kind, datasize = None, None
        for number, value in _fields(header):
            if number == 1:
                kind = bytes(value).decode("utf-8", "replace")
            elif number == 3:
                datasize = value
        if kind is None or datasize is None or datasize > MAX_BLOB:
            raise Damaged(f"bad block header at byte {offset}")
        blob = f.read(datasize)
        if len(blob) < datasize:
            raise Damaged(f"truncated block at byte {offset}")
        yield offset, kind, blob
        offset += 4 + n + datasize


def _inflate(blob, offset: int) -> np.ndarray:
    """The block's bytes, decompressed."""
    raw_size, data = None, None
    for number, value in _fields(blob):
        if number == 2:
            raw_size = value
        elif number in (1, 3, 4):
            data = number, value
        elif number in (5, 6, 7):
            raise Unsupported(f"{('bzip2', 'lz4', 'zstd')[number - 5]}-compressed blocks")
    if data is None:
        raise Damaged(f"block at byte {offset} holds no data")
    try:
        if data[0] == 1:
            out = bytes(data[1])
        elif data[0] == 3:
            out = zlib.decompress(data[1], bufsize=raw_size or zlib.DEF_BUF_SIZE)
        else:
            out = lzma.decompress(data[1])
    except (zlib.error, lzma.LZMAError) as e:
        raise Damaged(f"block at byte {offset} does not decompress: {e}") from None
    if raw_size is not None and len(out) != raw_size:
        raise Damaged(f"block at byte {offset} decompresses to {len(out)} bytes, "
                      f"its header says {raw_size}")
    return np.frombuffer(out, np.uint8)


def _check_header(block: np.ndarray) -> None:
    """Refuse features this reader does not implement (libosmium reads those)."""
    for number, value in _fields(block.tobytes()):
        if number == 4:
            feature = bytes(value).decode("utf-8", "replace")
            if feature not in _FEATURES:
                raise Unsupported(f"required feature {feature}")


def _decode(blob, offset: int, prepare):
    """One data block: decompress, decode; check what this reader can represent; then
    the caller's ``prepare`` (still on the worker thread)."""
    buf = _inflate(blob, offset)
    try:
        out = decode_block(buf)
    except ValueError as e:
        raise Damaged(f"block at byte {offset}: {e}") from None
    meta = out[0]
    if meta[3]:
        raise Unsupported("unpacked repeated fields")
    if meta[0] % 100 or meta[1] % 100 or meta[2] % 100:
        raise Unsupported("coordinate granularity or offsets finer than 1e-7 degrees")
    out = (buf,) + out
    return prepare(out) if prepare is not None else out


def data_blocks(path, threads: int | None = None, on_bytes=None, prepare=None):
    """Decoded data blocks of a PBF file, in file order: (buffer, *decode_block), or
    what ``prepare`` makes of that on the worker thread (work that needs no shared
    state runs there, in parallel).

    ``on_bytes(n)`` is called with the file offset reached, for progress."""
    size = os.path.getsize(path)
    threads = threads or min(os.cpu_count() or 1, 16)
    seen_header = False
    with open(path, "rb") as f, ThreadPoolExecutor(threads) as pool:
        pending = deque()
        for offset, kind, blob in _blobs(f, size):
            if kind == "OSMHeader":
                _check_header(_inflate(blob, offset))
                seen_header = True
                continue
            if kind != "OSMData":
                continue   # the format says: skip unknown blob types
            if not seen_header:
                raise Damaged("data block before the file's header block")
            pending.append((offset, pool.submit(_decode, blob, offset, prepare)))
            while len(pending) > 2 * threads:
                yield _done(pending, on_bytes)
        while pending:
            yield _done(pending, on_bytes)
    if not seen_header:
        raise Damaged("no OSMHeader block (not a PBF file)")


def _done(pending: deque, on_bytes):
    offset, future = pending.popleft()
    if on_bytes is not None:
        on_bytes(offset)
    return future.result()
