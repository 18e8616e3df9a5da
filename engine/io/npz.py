"""RouteLab's binary files (graph caches, hierarchies, partitions): an ``.npz`` of plain
arrays and a JSON ``meta`` member, read with every member's header checked first and
written atomically.

``read_npz`` inspects every member's ``.npy`` header before anything is
decompressed: no object arrays (never unpickled), declared sizes within the member,
the file and the memory budget, and a decompression ratio limit. ``read_meta``
checks the format, its version and each key's type; each format's module
(engine.io.cache, hierarchy_file, pareto_hierarchy_file, partition_file) then checks
its arrays.
"""
from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from engine.io.atomic import atomic_write
from engine.io.errors import LoadError
from engine.io.limits import check_allocation, check_regular_file

# what a damaged archive raises: bad zip, CRC, deflate stream, encryption, odd method
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
                RuntimeError, zlib.error)
MAX_RATIO = 100          # a compressed member may expand to at most 100 × the file size


def write_npz(path, arrays: dict, meta: dict) -> Path:
    """``arrays`` and ``meta`` (a JSON object) into ``path``; the old file stays if the
    write fails. (np.savez appends .npz to names without it: written through a
    handle, a temporary one renamed over the target only once complete.)"""
    path = Path(path)
    arrays = dict(arrays, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    with atomic_write(path) as f:
        np.savez(f, **arrays)
    return path


def read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of an ``.npz``, after checking each member's header: never an
    object array, declared sizes within the member, the file and the memory budget."""
    path = Path(path)
    check_regular_file(path)
    file_size = os.path.getsize(path)
    try:
        with zipfile.ZipFile(path) as zf:
            total = sum(_member_nbytes(path, zf, info, file_size) for info in zf.infolist())
    except _READ_ERRORS as e:
        raise LoadError(path, f"not a readable {what} ({e})") from None
    check_allocation(total, f"the arrays of this {what}", path)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {name: z[name] for name in z.files}
    except _READ_ERRORS as e:
        raise LoadError(path, f"not a readable {what} ({e})") from None


def _member_nbytes(path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, file_size: int) -> int:
    """Bytes the member's array declares, refused before anything is decompressed."""
    name = info.filename
    if not name.endswith(".npy"):
        raise LoadError(path, f"member {name!r} is not a NumPy array")
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        raise LoadError(path, f"member {name!r} declares a size it does not hold")
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_RATIO * file_size:
        raise LoadError(path, f"member {name!r} would expand to {info.file_size:,} bytes from a "
                              f"{file_size:,}-byte file (a decompression bomb?)")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(f)
    if dtype.hasobject:
        raise LoadError(path, f"member {name!r} holds Python objects (pickles are never loaded)")
    nbytes = math.prod(shape) * dtype.itemsize
    check_allocation(nbytes, f"array {name!r}", path)
    if nbytes > info.file_size:
        raise LoadError(path, f"array {name!r} declares shape {shape} ({nbytes:,} bytes) but the "
                              f"member holds {info.file_size:,} bytes")
    return nbytes


def read_meta(path, arrays: dict, fmt: str, version, what: str, keys: dict) -> dict:
    """The JSON object stored as ``meta``: format and version (an int, or a tuple of
    the versions read), then each key's type."""
    raw = arrays.pop("meta", None)
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1:
        raise LoadError(path, f"not a {what} (no metadata)")
    try:
        meta = json.loads(raw.tobytes().decode())
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise LoadError(path, f"not a {what} (unreadable metadata)") from None
    if not isinstance(meta, dict):
        raise LoadError(path, f"not a {what} (its metadata is not a JSON object)")
    if meta.get("format") != fmt:
        raise LoadError(path, f"not a {what}")
    versions = version if isinstance(version, tuple) else (version,)
    found = meta.get("version")
    if isinstance(found, bool) or found not in versions:
        readable = " or ".join(str(v) for v in versions)
        raise LoadError(path, f"{what} version {found!r} is not supported (this "
                              f"RouteLab reads version {readable}); make it again from the source")
    for key, kind in keys.items():
        value = meta.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise LoadError(path, f"damaged {what}: metadata {key!r} is missing or not "
                                  f"{_kind_name(kind)}")
    return meta


def _kind_name(kind) -> str:
    return {str: "a string", int: "an integer", list: "a list", dict: "an object"}.get(kind, "valid")
