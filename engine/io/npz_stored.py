"""Reading an uncompressed ``.npz`` (RouteLab's graph cache, engine.io.cache) straight
into its arrays, the members in parallel, for caches of continental size.

``np.load`` reads a zip member through zipfile in small pieces, copies each piece into
the array and runs the CRC on the way, one member after the other: about 1.6 s of CPU
for a 4 M-node cache here, so about 10 s at 24 M. A stored (uncompressed) member is one
contiguous run of bytes in the file: its ``.npy`` header is read and checked (the same
checks as engine.io.npz.read_npz: no objects, sizes within the member, the file and the
memory budget), then its data is read with ``os.preadv`` into the allocated array and
its zip CRC-32 is checked, each member in a thread of its own (both calls release the
GIL). An archive with a compressed member goes through engine.io.npz.read_npz instead.
"""
from __future__ import annotations

import math
import os
import struct
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.io.errors import LoadError
from engine.io.limits import check_allocation, check_regular_file
from engine.io.npz import _READ_ERRORS, _member_nbytes, read_npz

_LOCAL_HEADER = struct.Struct("<4s22xHH")     # signature, ..., name length, extra length
_MAX_READ = 1 << 30                           # preadv moves at most ~2 GiB per call


@dataclass(frozen=True)
class _Member:
    name: str                   # the array's name (member name less ".npy")
    header: bytes               # the .npy magic and header, which the CRC covers too
    data_at: int                # file offset of the array's bytes
    shape: tuple
    fortran: bool
    dtype: np.dtype
    crc: int


def read_stored_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of ``path``, as engine.io.npz.read_npz gives them, with its checks."""
    path = Path(path)
    check_regular_file(path)
    size = os.path.getsize(path)
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            total = sum(_member_nbytes(path, zf, info, size) for info in infos)
            if any(info.compress_type != zipfile.ZIP_STORED for info in infos) or \
                    not hasattr(os, "preadv"):          # Windows has no preadv
                return read_npz(path, what)
            check_allocation(total, f"the arrays of this {what}", path)
            with open(path, "rb") as f:
                members = [_member(path, f, info) for info in infos]
    except _READ_ERRORS as e:
        raise LoadError(path, f"not a readable {what} ({e})") from None
    arrays = {m.name: np.empty(math.prod(m.shape), dtype=m.dtype) for m in members}
    fd = os.open(path, os.O_RDONLY)
    try:
        with ThreadPoolExecutor(max_workers=min(len(members), os.cpu_count() or 1) or 1) as pool:
            bad = [m.name for m, ok in zip(members, pool.map(
                lambda m: _fill(fd, m, arrays[m.name]), members)) if not ok]
    except OSError as e:
        raise LoadError(path, f"not a readable {what} ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if bad:
        raise LoadError(path, f"damaged {what}: member {bad[0] + '.npy'!r} fails its CRC check")
    return {m.name: arrays[m.name].reshape(m.shape, order="F" if m.fortran else "C")
            for m in members}


def _member(path, f, info: zipfile.ZipInfo) -> _Member:
    """Where a stored member's array lies in the file, from its local header and its
    ``.npy`` header (already checked by _member_nbytes)."""
    f.seek(info.header_offset)
    signature, name_len, extra_len = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise LoadError(path, f"member {info.filename!r}: damaged zip header")
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    f.seek(start)
    version = np.lib.format.read_magic(f)
    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
            else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = read(f)
    header_len = f.tell() - start
    if header_len + math.prod(shape) * dtype.itemsize != info.file_size:
        raise LoadError(path, f"member {info.filename!r} declares shape {shape} but holds "
                              f"{info.file_size - header_len:,} bytes of data")
    f.seek(start)
    return _Member(info.filename[:-4], f.read(header_len), start + header_len, tuple(shape),
                   fortran, dtype, info.CRC)


def _fill(fd: int, m: _Member, array: np.ndarray) -> bool:
    """Read the member's bytes into ``array``; whether its CRC-32 matches."""
    view = memoryview(array.view(np.uint8))
    done = 0
    while done < view.nbytes:
        got = os.preadv(fd, [view[done:done + _MAX_READ]], m.data_at + done)
        if got <= 0:
            raise OSError(0, "the file ends inside an array")
        done += got
    return zlib.crc32(view, zlib.crc32(m.header)) == m.crc
