"""One validator per file format, run on every load (as RoutingKit's
``check_contraction_hierarchy_for_errors``): a file is refused with its name and the
reason before any of its indices can reach a Numba loop or a kernel.

Checks are vectorised and cheap (O(n + m), O(k²) for a core matrix). ``read_npz``
inspects every member's ``.npy`` header first: no object arrays (never unpickled),
declared sizes within the memory budget, the member's own size and a decompression
ratio limit. Hierarchy checks live in engine/io/validate_hierarchy.py.
"""
from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from engine.core.graph import GraphError, path_cost_bound
from engine.io.errors import LoadError
from engine.io.limits import check_allocation, check_regular_file

INT32_MAX = int(np.iinfo(np.int32).max)
# what a damaged archive raises: bad zip, CRC, deflate stream, encryption, odd method
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
                RuntimeError, zlib.error)
MAX_RATIO = 100          # a compressed member may expand to at most 100 × the file size


def need(path, a, name: str, dtype, shape=None) -> np.ndarray:
    """``a`` as exactly ``dtype`` and ``shape`` (None: any length in that axis)."""
    if not isinstance(a, np.ndarray):
        raise LoadError(path, f"{name} is missing or not an array")
    if a.dtype != np.dtype(dtype):
        raise LoadError(path, f"{name} has dtype {a.dtype.str}, expected {np.dtype(dtype).name}")
    if shape is not None and (a.ndim != len(shape) or
                              any(s is not None and s != t for s, t in zip(shape, a.shape))):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        raise LoadError(path, f"{name} has shape {a.shape}, expected {want}")
    return a


def in_range(path, a: np.ndarray, name: str, low: int, high: int) -> None:
    """Every value of ``a`` in low..high (inclusive)."""
    if a.size and (int(a.min()) < low or int(a.max()) > high):
        bad = a[(a < low) | (a > high)].flat[0]
        raise LoadError(path, f"{name} holds {bad}, out of range {low}..{high}")


def offsets(path, first: np.ndarray, name: str, end: int) -> None:
    """A CSR offset array: starts at 0, never decreases, ends at ``end``."""
    if first.size == 0 or first[0] != 0 or first[-1] != end:
        raise LoadError(path, f"{name} must run from 0 to {end} (an offset array)")
    if np.any(first[1:] < first[:-1]):
        raise LoadError(path, f"{name} decreases (offsets must be monotone)")


# ------------------------------------------------------------------ .npz containers
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


def read_meta(path, arrays: dict, fmt: str, version: int, what: str, keys: dict) -> dict:
    """The JSON object stored as ``meta``: format and version, then each key's type."""
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
    if meta.get("version") != version:
        raise LoadError(path, f"{what} version {meta.get('version')!r} is not supported (this "
                              f"RouteLab reads version {version}); make it again from the source")
    for key, kind in keys.items():
        value = meta.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise LoadError(path, f"damaged {what}: metadata {key!r} is missing or not "
                                  f"{_kind_name(kind)}")
    return meta


def _kind_name(kind) -> str:
    return {str: "a string", int: "an integer", list: "a list", dict: "an object"}.get(kind, "valid")


def str_list(path, value, key: str) -> list[str]:
    if not all(isinstance(v, str) for v in value):
        raise LoadError(path, f"damaged cache: metadata {key!r} must be a list of names")
    return value


# ------------------------------------------------------------------ graphs
def check_graph_arrays(path, *, first_out, head, node_id, metrics: dict, arc_attrs=None,
                       lon=None, lat=None, geometry_first=None, geometry_lonlat=None,
                       turn_from_arc=None, turn_to_arc=None) -> None:
    """A RoadGraph's arrays, before the graph is built: dtypes, shapes, ranges, offsets."""
    need(path, first_out, "first_out", np.int32, (None,))
    n = first_out.size - 1
    head = need(path, head, "head", np.int32, (None,))
    m = head.size
    offsets(path, first_out, "first_out", m)
    in_range(path, head, "arc head", 0, n - 1)
    node_id = need(path, node_id, "node_id", np.int64, (n,))
    ids = np.sort(node_id)
    if np.any(ids[1:] == ids[:-1]):
        raise LoadError(path, f"node id {ids[1:][ids[1:] == ids[:-1]][0]} appears twice")
    if not metrics:
        raise LoadError(path, "a graph needs at least one metric")
    for name, w in metrics.items():
        check_metric(path, name, w, n, m)
    for name, a in (arc_attrs or {}).items():
        if not isinstance(a, np.ndarray) or a.ndim == 0 or a.shape[0] != m:
            raise LoadError(path, f"attribute {name!r} must have one value per arc ({m})")
    if (lon is None) != (lat is None):
        raise LoadError(path, "coordinates need both lon and lat")
    for name, c in (("lon", lon), ("lat", lat)):
        if c is not None and not np.isfinite(need(path, c, name, np.float64, (n,))).all():
            raise LoadError(path, f"{name} holds a value that is not finite")
    _check_geometry(path, geometry_first, geometry_lonlat, m)
    _check_turns(path, turn_from_arc, turn_to_arc, first_out, head)


def check_metric(path, name: str, w, n: int, m: int) -> None:
    """One cost per arc, integral, 0..2^31-1, stored as int32, path costs within int64."""
    what = f"metric {name!r}"
    if not isinstance(w, np.ndarray) or w.shape != (m,):
        raise LoadError(path, f"{what} must have one cost per arc ({m})")
    if not np.issubdtype(w.dtype, np.integer):
        raise LoadError(path, f"{what} is not integral (dtype {w.dtype.str})")
    in_range(path, w, what, 0, INT32_MAX)
    need(path, w, what, np.int32)
    try:
        path_cost_bound(n, w)
    except GraphError as e:
        raise LoadError(path, f"{what}: {e}") from None


def _check_geometry(path, first, points, m: int) -> None:
    if (first is None) != (points is None):
        raise LoadError(path, "arc geometry needs both geometry_first and geometry_lonlat")
    if first is None:
        return
    need(path, first, "geometry_first", np.int64, (m + 1,))
    points = need(path, points, "geometry_lonlat", np.float64, (None, 2))
    offsets(path, first, "geometry_first", points.shape[0])


def _check_turns(path, from_arc, to_arc, first_out, head) -> None:
    if (from_arc is None) != (to_arc is None):
        raise LoadError(path, "turn restrictions need both turn_from_arc and turn_to_arc")
    if from_arc is None:
        return
    need(path, from_arc, "turn_from_arc", np.int32, (None,))
    need(path, to_arc, "turn_to_arc", np.int32, from_arc.shape)
    for name, arcs in (("turn_from_arc", from_arc), ("turn_to_arc", to_arc)):
        in_range(path, arcs, name, 0, head.size - 1)
    tail_of_to = np.searchsorted(first_out, to_arc, side="right") - 1
    if np.any(head[from_arc] != tail_of_to):
        raise LoadError(path, "a turn restriction joins arcs that do not meet")


def check_graph(graph, path=None) -> None:
    """The same checks on a built RoadGraph (e.g. before saving or after a transform)."""
    tr = graph.turn_restrictions
    check_graph_arrays(path or graph.source, first_out=graph.first_out, head=graph.head,
                       node_id=graph.node_id, metrics=graph.metrics, arc_attrs=graph.arc_attrs,
                       lon=graph.lon, lat=graph.lat, geometry_first=graph.geometry_first,
                       geometry_lonlat=graph.geometry_lonlat,
                       turn_from_arc=None if tr is None else tr.from_arc,
                       turn_to_arc=None if tr is None else tr.to_arc)


# ------------------------------------------------------------------ .rlg caches
CACHE_KEYS = {"metrics": list, "attrs": list, "metric_units": dict, "source": str,
              "data_license": str}


def check_cache(path, meta: dict, arrays: dict) -> None:
    """A graph cache's metadata names its arrays; every one present and valid."""
    metrics = str_list(path, meta["metrics"], "metrics")
    attrs = str_list(path, meta["attrs"], "attrs")
    units = meta["metric_units"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in units.items()):
        raise LoadError(path, "damaged cache: metadata 'metric_units' must map names to units")
    wanted = ["first_out", "head", "node_id", *(f"metric/{m}" for m in metrics),
              *(f"attr/{a}" for a in attrs)]
    missing = [name for name in wanted if name not in arrays]
    if missing:
        raise LoadError(path, f"damaged cache: array {missing[0]!r} is missing")
    check_graph_arrays(
        path, first_out=arrays["first_out"], head=arrays["head"], node_id=arrays["node_id"],
        metrics={m: arrays[f"metric/{m}"] for m in metrics},
        arc_attrs={a: arrays[f"attr/{a}"] for a in attrs},
        lon=arrays.get("lon"), lat=arrays.get("lat"),
        geometry_first=arrays.get("geometry_first"),
        geometry_lonlat=arrays.get("geometry_lonlat"),
        turn_from_arc=arrays.get("turn_from_arc"), turn_to_arc=arrays.get("turn_to_arc"))
