"""A corpus of malformed graph caches (.rlg) and hierarchies (.rlh), each made by
mutating a valid file: every one is refused with a one-line LoadError naming the file
and the reason, and no crafted pickle is ever executed."""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.ch import Hierarchy, contract
from engine.generate.network import generate_road_network
from engine.io import LoadError, load
from engine.io.cache import save_cache
from engine.io.cache import check_graph
from engine.io.hierarchy_file import ARRAYS, NARROW, write_hierarchy
from engine.io.hierarchy_file import _realised_fault as realised_fault

N_BIG = 10**9


@pytest.fixture(scope="module")
def graph():
    return generate_road_network(2000, seed=1)


@pytest.fixture(scope="module")
def hierarchy(graph):
    return contract(graph, K=200, backend=cpu_backend())


def read_arrays(path) -> tuple[dict, dict]:
    with np.load(path) as z:
        arrays = dict(z)
    return arrays, json.loads(arrays.pop("meta").tobytes().decode())


def write_arrays(path, arrays: dict, meta=None) -> None:
    if meta is not None:
        arrays = {**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _set(name, index, value):
    def mutate(a, meta):
        a[name] = a[name].copy()
        a[name][index] = value
    return mutate


def _put(name, make):
    def mutate(a, meta):
        a[name] = make(a[name], meta)
    return mutate


def _meta(key, value):
    def mutate(a, meta):
        meta[key] = value
    return mutate


def _drop(name):
    def mutate(a, meta):
        del a[name]
    return mutate


CACHE_CASES = {
    "metric int64 >= 2^32": (_put("metric/distance", lambda w, m: w.astype(np.int64) + 2**32),
                             r"out of range 0\.\.2147483647"),
    "metric float": (_put("metric/distance", lambda w, m: w.astype(np.float64) + 0.5),
                     "not integral"),
    "metric int64 small": (_put("metric/distance", lambda w, m: w.astype(np.int64)),
                           "dtype <i8, expected int32"),
    "metric negative": (_set("metric/travel_time", 3, -7), "holds -7, out of range"),
    "metric short": (_put("metric/distance", lambda w, m: w[:-1]), "one cost per arc"),
    "duplicate node ids": (_set("node_id", 5, 0), "appears twice"),
    "duplicate node ids side by side": (_put("node_id", lambda x, m: np.sort(np.where(
        np.arange(x.size) == 1, x[0], x))), "appears twice"),
    "node_id wrong length": (_put("node_id", lambda x, m: x[:-1]), "node_id has shape"),
    "node_id int32": (_put("node_id", lambda x, m: x.astype(np.int32)), "node_id has dtype"),
    "first_out not from 0": (_set("first_out", 0, 1), "first_out must run from 0"),
    "first_out reversed": (_put("first_out", lambda x, m: x[::-1].copy()), "first_out must run"),
    "first_out decreasing": (_set("first_out", 10, 1000), "first_out decreases"),
    "first_out int64": (_put("first_out", lambda x, m: x.astype(np.int64)), "first_out has dtype"),
    "head out of range": (_set("head", 7, 2003), "arc head holds 2003"),
    "head 10^9": (_set("head", 0, N_BIG), "arc head holds"),
    "head two-dimensional": (_put("head", lambda x, m: x.reshape(-1, 1)), "head has shape"),
    "lon nan": (_set("lon", 3, np.nan), "not finite"),
    "lon without lat": (_drop("lat"), "both lon and lat"),
    "lat float32": (_put("lat", lambda x, m: x.astype(np.float32)), "lat has dtype"),
    "attribute short": (_put("attr/road_class", lambda x, m: x[:5]), "one value per arc"),
    "geometry offsets past points": (_set("geometry_first", -1, 10**7), "geometry_first must run"),
    "geometry offsets decreasing": (_put("geometry_first", lambda x, m: np.where(
        np.arange(x.size) == 1, x[-1], x)), "geometry_first decreases"),
    "geometry points 3 columns": (_put("geometry_lonlat", lambda x, m: np.zeros((x.shape[0], 3))),
                                  "geometry_lonlat has shape"),
    "turn arc out of range": (_set("turn_to_arc", 0, 10**6), "turn_to_arc holds"),
    "turn arcs do not meet": (_set("turn_to_arc", 0, 0), "do not meet"),
    "turn arrays differ in length": (_put("turn_to_arc", lambda x, m: x[:-1]), "turn_to_arc has"),
    "meta is a JSON list": (lambda a, m: a.update(meta=np.frombuffer(b"[1, 2]", np.uint8)),
                            "not a JSON object"),
    "meta is not JSON": (lambda a, m: a.update(meta=np.frombuffer(b"{nope", np.uint8)),
                         "unreadable metadata"),
    "meta missing": (_drop("meta"), "no metadata"),
    "meta float array": (lambda a, m: a.update(meta=np.zeros(3)), "no metadata"),
    "wrong format": (_meta("format", "routelab-hierarchy"), "not a RouteLab graph cache"),
    "future version": (_meta("version", 99), "version 99 is not supported"),
    "metrics not a list": (_meta("metrics", "distance"), "'metrics' is missing or not a list"),
    "metric names not strings": (_meta("metrics", [1]), "list of names"),
    "listed metric missing": (_meta("metrics", ["distance", "fuel"]), "'metric/fuel' is missing"),
    "units not names": (_meta("metric_units", {"distance": 3}), "map names to units"),
    "first_out missing": (_drop("first_out"), "'first_out' is missing"),
}


@pytest.mark.parametrize("case", list(CACHE_CASES))
def test_malformed_cache_is_refused(tmp_path, graph, case):
    mutate, reason = CACHE_CASES[case]
    path = save_cache(graph, tmp_path / "g.rlg")
    mutated(path, mutate)
    assert_refused(path, reason, lambda: load([path]))


def mutated(path, mutate) -> None:
    """Rewrite the .npz at ``path`` after ``mutate(arrays, meta)``; the metadata is
    re-encoded unless the mutation replaced or dropped its array."""
    arrays, meta = read_arrays(path)
    arrays["meta"] = original = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    mutate(arrays, meta)
    if arrays.get("meta") is original:
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    write_arrays(path, arrays)


def assert_refused(path, reason: str, load_it) -> None:
    with pytest.raises(LoadError, match=reason) as info:
        load_it()
    message = str(info.value)
    assert str(path) in message and "\n" not in message, message


# ------------------------------------------------------------ containers and sizes
def _npy_header(shape, dtype="<i8") -> bytes:
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                                "shape": shape})
    return buf.getvalue()


def test_plain_npy_is_refused(tmp_path):
    path = tmp_path / "plain.rlg"
    with open(path, "wb") as f:
        np.save(f, np.arange(10))
    assert_refused(path, "not a readable RouteLab cache", lambda: load([path]))


def test_huge_shape_header_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.rlg"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("head.npy", _npy_header((2**40,)) + b"\0" * 64)
    assert_refused(path, "memory budget", lambda: load([path]))


def test_shape_larger_than_member_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "short.rlg"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("head.npy", _npy_header((1000,)) + b"\0" * 64)
    assert_refused(path, r"declares shape \(1000,\)", lambda: load([path]))


def test_deflate_bomb_is_refused(tmp_path):
    path = tmp_path / "bomb.rlg"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("head.npy", "w") as f:
            f.write(_npy_header((2_500_000,)))
            for _ in range(20):
                f.write(bytes(1_000_000))
    assert os.path.getsize(path) < 200_000
    assert_refused(path, "decompression bomb", lambda: load([path]))


def test_cache_above_the_memory_budget_is_refused(tmp_path, graph, monkeypatch):
    path = save_cache(graph, tmp_path / "g.rlg")
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "16K")
    assert_refused(path, "memory budget", lambda: load([path]))


def test_foreign_member_is_refused(tmp_path):
    path = tmp_path / "odd.rlg"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", b"hello")
    assert_refused(path, "not a NumPy array", lambda: load([path]))


def test_compressed_cache_still_loads(tmp_path, graph):
    path = save_cache(graph, tmp_path / "g.rlg")
    arrays, meta = read_arrays(path)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(open(path, "wb"), **arrays)
    assert load([path]).num_arcs == graph.num_arcs


@pytest.mark.parametrize("offset", [200, 2000, -300])
def test_corrupt_deflate_stream_is_refused(tmp_path, graph, offset):
    path = save_cache(graph, tmp_path / "g.rlg")
    arrays, meta = read_arrays(path)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(open(path, "wb"), **arrays)
    data = bytearray(path.read_bytes())
    data[offset:offset + 40] = bytes(range(40))
    path.write_bytes(bytes(data))
    assert_refused(path, "not a readable|not a RouteLab|damaged", lambda: load([path]))


def test_flipped_bit_in_a_stored_member_is_refused(tmp_path, graph):
    """A change no range check could see (a cost that is still valid) fails the
    archive's CRC-32 of that member."""
    path = save_cache(graph, tmp_path / "g.rlg")
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("metric/distance.npy")
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + 168] ^= 1
    path.write_bytes(bytes(data))
    assert_refused(path, "CRC", lambda: load([path]))


def test_valid_graphs_pass_check_graph(graph, tmp_path):
    check_graph(graph)
    check_graph(load([save_cache(graph, tmp_path / "g.rlg")]), tmp_path / "g.rlg")


def test_fifo_is_refused(tmp_path):
    path = tmp_path / "pipe.rlg"
    os.mkfifo(path)
    assert_refused(path, "not a regular file", lambda: load([path]))


# ------------------------------------------------------------ hierarchies
def _shortcut(name, value):
    """Set ``name`` of the first shortcut (right after the original arcs)."""
    def mutate(a, meta):
        a[name] = a[name].copy()
        a[name][meta["num_original_arcs"]] = value
    return mutate


def _shortcuts_weight_one(a, meta):
    a["arc_weight"] = a["arc_weight"].copy()
    a["arc_weight"][meta["num_original_arcs"]:] = 1


def _core_entry(delta):
    def mutate(a, meta):
        d = a["core_dist"].copy()
        i, j = np.argwhere((d > 0) & (d < np.iinfo(np.int64).max))[0]
        d[i, j] += delta
        a["core_dist"] = d
    return mutate


def _omit_up_arc(a, meta):
    """Drop the last up arc of level 0 (and shift the offsets after it)."""
    first = a["up_first"].copy()
    a["up_harc"] = np.delete(a["up_harc"], first[1] - 1)
    first[1:] -= 1
    a["up_first"] = first


def _duplicate_up_arc(a, meta):
    a["up_harc"] = a["up_harc"].copy()
    a["up_harc"][1] = a["up_harc"][0]


def _down_arc_into_wrong_level(a, meta):
    a["down_harc"] = a["down_harc"].copy()
    a["down_harc"][0] = a["up_harc"][0]


def _drop_core_node(a, meta):
    a["core_nodes"] = a["core_nodes"][:-1]
    a["core_dist"] = a["core_dist"][:-1, :-1].copy()
    a["core_pred"] = np.where(a["core_pred"][:-1, :-1] >= a["core_nodes"].size, -1,
                              a["core_pred"][:-1, :-1])


HIERARCHY_CASES = {
    "shortcut head n+3": (_shortcut("arc_head", 2003), "arc head holds 2003"),
    "shortcut head 10^9": (_shortcut("arc_head", N_BIG), "arc head holds 1000000000"),
    "shortcut tail -1": (_shortcut("arc_tail", -1), "arc tail holds -1"),
    "core node 10^8": (_set("core_nodes", 0, 10**8), "core node holds 100000000"),
    "5x5 core matrix": (_put("core_dist", lambda d, m: d[:5, :5].copy()), "core_dist has shape"),
    "shortcut weights 1": (_shortcuts_weight_one, "not the sum of its children"),
    "zero core matrix": (_put("core_dist", lambda d, m: np.zeros_like(d)), "core_dist is not"),
    "core entry too short": (_core_entry(-1), "core_dist is not realised"),
    "core entry too long": (_core_entry(+5), "core_dist is not"),
    "core negative": (_put("core_dist", lambda d, m: np.where(d == 0, -1, d)), "negative"),
    "core_pred int64": (_put("core_pred", lambda p, m: p.astype(np.int64)), "core_pred has dtype"),
    "core_pred out of range": (_set("core_pred", (0, 1), 10**6), "core_pred holds"),
    "core node missing": (_drop_core_node, "not exactly the nodes of the top level"),
    "up_first reversed": (_put("up_first", lambda f, m: f[::-1].copy()), "up_first must run"),
    "up_first decreasing": (_set("up_first", 1, 10**9), "up_first"),
    "num_levels 10^6": (_meta("num_levels", 10**6), "out of range"),
    "num_levels negative": (_meta("num_levels", -1), "non-negative"),
    "num_nodes string": (_meta("num_nodes", "2000"), "'num_nodes' is missing or not an integer"),
    "node_level above top": (_set("node_level", 0, 10**4), "node_level holds 10000"),
    "node_level int64": (_put("node_level", lambda x, m: x.astype(np.int64)), "node_level has"),
    "arc_weight float": (_put("arc_weight", lambda w, m: w.astype(np.float64)), "arc_weight has"),
    "arc_head short": (_put("arc_head", lambda x, m: x[:-1]), "arc_head has shape"),
    "child not earlier": (lambda a, m: _shortcut("arc_child1", m["num_original_arcs"])(a, m),
                          "not an earlier arc"),
    "child of another shortcut": (_shortcut("arc_child2", 0), "outer ends|sum of its children"),
    "original with a child": (_set("arc_child1", 0, 5), "an original arc has children"),
    "up_harc out of range": (_set("up_harc", 0, N_BIG), "up_harc holds"),
    "up arc twice": (_duplicate_up_arc, "appears twice|sorted by tail"),
    "up arc omitted": (_omit_up_arc, "in neither up_harc nor down_harc"),
    "down arc of wrong level": (_down_arc_into_wrong_level, "does not enter its level"),
    "original weight changed": (_set("arc_weight", 0, 1), "sum of its children|other arcs"),
    "metric hash changed": (_meta("metric_hash", "0123456789abcdef"), "other arcs or costs"),
    "metric hash garbage": (_meta("metric_hash", "x" * 40), "not a metric hash"),
    "unknown metric": (_meta("metric", "fuel"), "does not have"),
    "other graph size": (_meta("num_original_arcs", 10), "belongs to a graph|children|child"),
    "meta a JSON list": (lambda a, m: a.update(meta=np.frombuffer(b"[]", np.uint8)),
                         "not a JSON object"),
    "iterations malformed": (_meta("iterations", [1, 2]), "iteration record"),
    "missing array": (_drop("core_pred"), "core_pred is missing"),
    "wrong format": (_meta("format", "routelab-graph"), "not a RouteLab hierarchy"),
}


@pytest.mark.parametrize("case", list(HIERARCHY_CASES))
def test_malformed_hierarchy_is_refused(tmp_path, graph, hierarchy, case):
    mutate, reason = HIERARCHY_CASES[case]
    path = hierarchy.save(tmp_path / "g.rlh")
    mutated(path, mutate)
    assert_refused(path, reason, lambda: Hierarchy.load(path, graph))


def test_valid_files_load(tmp_path, graph, hierarchy):
    g = load([save_cache(graph, tmp_path / "g.rlg")])
    h = Hierarchy.load(hierarchy.save(tmp_path / "g.rlh"), g)
    assert h.num_shortcuts == hierarchy.num_shortcuts and h.metric_hash == hierarchy.metric_hash


# ------------------------------------------------------------ crafted pickles
class Payload:
    """Unpickling it would create the marker file."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


@pytest.mark.parametrize("suffix, member", [(".rlg", "head"), (".npz", "meta"),
                                            (".rlh", "core_dist"), (".rlh", "meta")])
def test_pickle_payload_is_never_executed(tmp_path, graph, hierarchy, suffix, member):
    marker = tmp_path / "pwned"
    path = tmp_path / f"g{suffix}"
    if suffix == ".rlh":
        hierarchy.save(path)
    else:
        save_cache(graph, path)
    arrays, meta = read_arrays(path)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    arrays[member] = np.array([Payload(marker)], dtype=object)
    with open(path, "wb") as f:
        np.savez(f, **arrays)         # np.savez pickles object arrays
    loader = (lambda: Hierarchy.load(path, graph)) if suffix == ".rlh" else (lambda: load([path]))
    assert_refused(path, "holds Python objects", loader)
    assert not marker.exists()


# ------------------------------------------------------------ hierarchy file versions
def as_version_1(path) -> None:
    """Rewrite a saved hierarchy as version 1 wrote it: every id array int64."""
    arrays, meta = read_arrays(path)
    write_arrays(path, {k: a.astype(np.int64) if k in NARROW else a for k, a in arrays.items()},
                 {**meta, "version": 1})


def _same_arrays(h, reference) -> None:
    for name in ARRAYS:
        a, b = getattr(h, name), getattr(reference, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_version_2_round_trips_with_int32_ids(tmp_path, graph, hierarchy):
    path = hierarchy.save(tmp_path / "g.rlh")
    arrays, meta = read_arrays(path)
    assert meta["version"] == 2
    assert {name: arrays[name].dtype for name in NARROW} == dict.fromkeys(NARROW, np.int32)
    h = Hierarchy.load(path, graph)
    _same_arrays(h, hierarchy)                   # int64 ids in memory, as contraction makes
    assert {getattr(h, name).dtype for name in NARROW} == {np.dtype(np.int64)}
    _same_arrays(Hierarchy.load(h.save(tmp_path / "again.rlh"), graph), hierarchy)


def test_version_1_files_still_load(tmp_path, graph, hierarchy):
    path = hierarchy.save(tmp_path / "g.rlh")
    as_version_1(path)
    assert read_arrays(path)[1]["version"] == 1
    h = Hierarchy.load(path, graph)
    _same_arrays(h, hierarchy)
    assert read_arrays(h.save(tmp_path / "new.rlh"))[1]["version"] == 2


@pytest.mark.parametrize("case", list(HIERARCHY_CASES))
def test_malformed_version_1_hierarchy_is_refused(tmp_path, graph, hierarchy, case):
    mutate, reason = HIERARCHY_CASES[case]
    path = hierarchy.save(tmp_path / "g.rlh")
    as_version_1(path)
    mutated(path, mutate)
    assert_refused(path, reason, lambda: Hierarchy.load(path, graph))


VERSION_CASES = {
    "version 2 with int64 arc_tail": (_put("arc_tail", lambda x, m: x.astype(np.int64)),
                                      "arc_tail has dtype <i8, expected int32"),
    "version 2 with uint32 core_nodes": (_put("core_nodes", lambda x, m: x.astype(np.uint32)),
                                         "core_nodes has dtype"),
    "int32 ids labelled version 1": (_meta("version", 1), "arc_tail has dtype <i4, expected int64"),
    "version 3": (_meta("version", 3), "version 3 is not supported"),
    "version true": (_meta("version", True), "version True is not supported"),
    "arc tail -1": (_set("arc_tail", 0, -1), "arc tail holds -1"),
    "arc tail n": (_set("arc_tail", 5, 2000), "arc tail holds 2000"),
    "shortcut head int32 min": (_shortcut("arc_head", -2**31), "arc head holds -2147483648"),
    "shortcut head int32 max": (_shortcut("arc_head", 2**31 - 1), "arc head holds 2147483647"),
    "child -2": (_shortcut("arc_child2", -2), "not an earlier arc"),
    "child int32 max": (_shortcut("arc_child1", 2**31 - 1), "not an earlier arc"),
    "child int32 min": (_shortcut("arc_child1", -2**31), "not an earlier arc"),
    "original child 0": (_set("arc_child2", 3, 0), "an original arc has children"),
    "up_harc -7": (_set("up_harc", 3, -7), "up_harc holds -7"),
    "down_harc int32 max": (_set("down_harc", 0, 2**31 - 1), "down_harc holds 2147483647"),
    "down_harc = arcs": (lambda a, m: _set("down_harc", 0, a["arc_tail"].size)(a, m),
                         "down_harc holds"),
    "core node -1": (_set("core_nodes", 0, -1), "core node holds -1"),
    "core node int32 max": (_set("core_nodes", 0, 2**31 - 1), "core node holds 2147483647"),
}


@pytest.mark.parametrize("case", list(VERSION_CASES))
def test_damaged_version_2_hierarchy_is_refused(tmp_path, graph, hierarchy, case):
    mutate, reason = VERSION_CASES[case]
    path = hierarchy.save(tmp_path / "g.rlh")
    mutated(path, mutate)
    assert_refused(path, reason, lambda: Hierarchy.load(path, graph))


def test_saving_an_id_beyond_int32_is_refused(tmp_path, hierarchy):
    arrays = {name: getattr(hierarchy, name) for name in ARRAYS}
    arrays["arc_head"] = arrays["arc_head"].copy()
    arrays["arc_head"][0] = 2**32 + 1           # would wrap to 1 as int32
    with pytest.raises(ValueError, match="arc_head"):
        write_hierarchy(tmp_path / "g.rlh", arrays, {})
    assert not (tmp_path / "g.rlh").exists()


def _realised_by_doubling(dist, pred, weight) -> int:
    """Version 1's NumPy formulation of the core certificate: the oracle."""
    k, inf = dist.shape[0], np.iinfo(np.int64).max
    finite = pred >= 0
    rows, cols = np.nonzero(finite)
    p = pred[rows, cols].astype(np.int64)
    via = weight[p, cols]
    with np.errstate(over="ignore"):
        if np.any(via == inf) or np.any(dist[rows, p] == inf) or \
                np.any(dist[rows, p] + via != dist[rows, cols]):
            return 1
    up = np.where(finite, pred, np.arange(k)[:, None]).astype(np.int64)
    for _ in range(max(1, int(k).bit_length())):
        up = np.take_along_axis(up, up, axis=1)
    return 2 if np.any(up[finite] != np.repeat(np.arange(k), finite.sum(axis=1))) else 0


@pytest.mark.parametrize("seed", range(200))
def test_core_certificate_matches_pointer_doubling(seed):
    """Random small cores with zero-weight arcs (so predecessor cycles can pass the
    distance test): the memoised walk refuses exactly what pointer doubling refuses."""
    rng = np.random.default_rng(seed)
    k, inf = int(rng.integers(1, 7)), np.iinfo(np.int64).max
    weight = np.where(rng.random((k, k)) < 0.7, rng.integers(0, 2, (k, k)), inf)
    pred = rng.integers(-1, k, (k, k)).astype(np.int32)
    np.fill_diagonal(pred, -1)
    dist = np.where(pred >= 0, rng.integers(0, 2, (k, k)), inf)
    np.fill_diagonal(dist, 0)
    assert realised_fault(dist, pred, weight) == _realised_by_doubling(dist, pred, weight)
