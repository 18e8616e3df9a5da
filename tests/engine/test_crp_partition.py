"""The nested CRP partition: nesting, dense and parent-ordered ids, bounded cells,
determinism, boundary counts, the .rlp format (roundtrip, refusals, atomic save) and
the ``partition`` capability."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

import engine.capabilities.partition as cap   # registers "partition"
from engine.crp.partition.nested import (Partition, default_levels, merge_levels, partition_graph,
                                  partition_report)
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.io import LoadError, load
from engine.core.jobs import JobContext
from engine.core.progress import CancelToken, Cancelled
from tests.conftest import NY_D, need


@pytest.fixture(scope="module")
def graph():
    return generate_road_network(6000, seed=2)


@pytest.fixture(scope="module")
def part(graph):
    return partition_graph(graph, levels=(6, 8, 10), mezzanine=(4,), seed=1)


def tiny(n, arcs) -> RoadGraph:
    tail, head = (np.array(x, dtype=np.int64) for x in zip(*arcs)) if arcs else ([], [])
    return RoadGraph.from_arcs(n, tail, head, {"w": np.ones(len(arcs), dtype=np.int64)})


def check_structure(p: Partition, n: int) -> None:
    assert p.cell_of.dtype == np.int32 and p.cell_of.shape == (p.num_levels, n)
    for level in range(p.num_levels):
        cell = p.cell_of[level]
        if n:     # dense ids
            assert np.all(np.bincount(cell) > 0) and p.num_cells(level) == cell.max() + 1
    for level in range(p.num_levels - 1):
        cell, up = p.cell_of[level], p.cell_of[level + 1]
        parent = np.zeros(p.num_cells(level), dtype=np.int64)
        parent[cell] = up
        assert np.array_equal(parent[cell], up), "nested"
        assert np.all(np.diff(parent) >= 0), "subcells of a parent are contiguous ids"


# ------------------------------------------------------------------ structure
def test_nested_dense_ordered_and_bounded(graph, part):
    check_structure(part, graph.num_nodes)
    assert part.cell_sizes_log2 == (4, 6, 8, 10)
    assert part.query_level.tolist() == [False, True, True, True]
    for level, k in enumerate(part.cell_sizes_log2):
        assert np.bincount(part.cell_of[level]).max() <= 1.5 * 2 ** k
        assert part.num_cells(level) >= graph.num_nodes / 2 ** k


def test_deterministic_and_seeded(graph, part):
    again = partition_graph(graph, levels=(6, 8, 10), mezzanine=(4,), seed=1)
    assert np.array_equal(again.cell_of, part.cell_of) and again.graph_key == part.graph_key
    other = partition_graph(graph, levels=(6, 8, 10), mezzanine=(4,), seed=7)
    check_structure(other, graph.num_nodes)     # may differ, must still be valid


def test_boundary_arcs_match_a_direct_count(graph, part):
    tail = np.repeat(np.arange(graph.num_nodes), np.diff(graph.first_out))
    direct = [int(np.sum(c[tail] != c[graph.head])) for c in part.cell_of]
    assert part.boundary_arcs(graph) == direct
    assert direct == sorted(direct, reverse=True)       # coarser cells cut fewer arcs
    report = partition_report(graph, part)
    assert report["boundary_arcs"] == direct and report["cells"][0] == part.num_cells(0)
    assert report["mezzanine"] == [True, False, False, False]


@pytest.mark.parametrize("n, arcs", [
    (0, []), (1, []), (5, []),                                   # empty, isolated nodes
    (9, [(0, 1), (1, 0), (1, 1), (0, 1), (2, 3), (5, 6), (6, 7), (7, 8)]),  # loops, duplicates
    (40, [(i, i + 1) for i in range(0, 39, 2)]),                 # 20 components
])
def test_degenerate_graphs(n, arcs):
    g = tiny(n, arcs)
    p = partition_graph(g, levels=(1, 2) if n >= 4 else (1,), mezzanine=())
    check_structure(p, n)
    assert p.matches(g) and p.boundary_arcs(g) == [
        int(np.sum(c[g.tail] != c[g.head])) for c in p.cell_of]


def test_default_levels():
    assert default_levels(264_346) == (8, 11, 14)
    assert default_levels(2_000_000) == (8, 11, 14, 17)
    assert default_levels(1024) == (8,)
    assert default_levels(1000) == (7,) and default_levels(3) == (1,)
    assert default_levels(0) == (1,)
    sizes, flags = merge_levels(264_346)
    assert sizes == (5, 8, 11, 14) and flags.tolist() == [False, True, True, True]
    assert merge_levels(100)[0] == (4,)       # too small for a mezzanine level


@pytest.mark.parametrize("levels, mezzanine, words", [
    ((8, 6), None, "ascending"), ((0, 8), None, "1..30"), ((8, 31), None, "1..30"),
    ((20,), None, "exceed the graph"), ((6, 8), (8,), "both"), ((6,), (4, 8), "below the top"),
    ((), None, "at least one"), ((6.5,), None, "1..30")])
def test_bad_levels_are_refused(graph, levels, mezzanine, words):
    with pytest.raises(ValueError, match=words):
        partition_graph(graph, levels=levels, mezzanine=mezzanine)


def test_progress_and_cancel(graph):
    seen = []
    partition_graph(graph, levels=(8,), progress=lambda f, m: seen.append(f))
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        partition_graph(graph, levels=(8,), cancel=token)
    with pytest.raises(Cancelled):
        partition_graph(graph, levels=(8,), cancel=lambda: True)


# ------------------------------------------------------------------ the .rlp format
def test_save_load_roundtrip(tmp_path, graph, part):
    path = part.save(tmp_path / "g.rlp")
    back = Partition.load(path, graph)
    assert np.array_equal(back.cell_of, part.cell_of)
    assert back.cell_sizes_log2 == part.cell_sizes_log2 and back.seed == 1
    assert back.query_level.tolist() == part.query_level.tolist()
    assert back.summary(graph) == part.summary(graph) and back.matches(graph)


def rewrite(path, mutate) -> None:
    with np.load(path) as z:
        arrays = dict(z)
    meta = json.loads(arrays.pop("meta").tobytes().decode())
    mutate(arrays, meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _cell(level, node, value):
    def mutate(a, meta):
        a["cell_of"] = a["cell_of"].copy()
        a["cell_of"][level, node] = value
    return mutate


def _not_nested(a, meta):       # swap two top cells of a level-0 cell's nodes: no parent
    c = a["cell_of"].copy()
    first = np.flatnonzero(c[0] == 0)[0]
    c[1, first] = c[1].max()
    c[2, first], c[3, first] = c[2].max(), c[3].max()
    a["cell_of"] = c


CASES = {
    "out of range": (_cell(1, 5, 10**6), "out of range"),
    "negative": (_cell(0, 0, -1), "out of range"),
    "not nested": (_not_nested, "not nested"),
    "not dense": (lambda a, m: a.__setitem__("cell_of", a["cell_of"] * 2), "not dense"),
    "unordered": (lambda a, m: a.__setitem__("cell_of", np.vstack(
        [a["cell_of"][:-1], a["cell_of"][-1:].max() - a["cell_of"][-1:]])), "order of their"),
    "dtype": (lambda a, m: a.__setitem__("cell_of", a["cell_of"].astype(np.int64)), "dtype"),
    "shape": (lambda a, m: a.__setitem__("cell_of", a["cell_of"][:, :-1]), "shape"),
    "flags": (lambda a, m: a.__setitem__("query_level", a["query_level"].astype(np.int8)),
              "dtype"),
    "top mezzanine": (lambda a, m: a.__setitem__("query_level", np.zeros(4, bool)), "top level"),
    "unsorted": (lambda a, m: a.__setitem__("cell_sizes_log2", np.int32([4, 8, 6, 10])),
                 "ascending"),
    "too big": (lambda a, m: a.__setitem__("cell_sizes_log2", np.int32([4, 6, 8, 13])),
                "out of range"),
    "missing": (lambda a, m: a.pop("query_level"), "missing"),
    "version": (lambda a, m: m.__setitem__("version", 9), "version"),
    "time": (lambda a, m: m.__setitem__("partition_ms", "fast"), "partition_ms"),
    "other graph": (lambda a, m: m.__setitem__("graph_key", "0" * 16), "another graph"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_partition_is_refused(tmp_path, graph, part, case):
    mutate, words = CASES[case]
    path = part.save(tmp_path / "g.rlp")
    rewrite(path, mutate)
    with pytest.raises(LoadError, match=words) as e:
        Partition.load(path, graph)
    assert str(path) in str(e.value)


def test_refuses_another_graph_and_truncation(tmp_path, graph, part):
    path = part.save(tmp_path / "g.rlp")
    with pytest.raises(LoadError, match="another graph"):
        Partition.load(path, generate_road_network(6000, seed=3))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match="not a readable"):
        Partition.load(path, graph)


def test_pickled_objects_are_never_loaded(tmp_path, graph, part):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return open, (str(marker), "w")
    path = part.save(tmp_path / "g.rlp")
    rewrite(path, lambda a, m: a.__setitem__("cell_of", np.array([Payload()], dtype=object)))
    with pytest.raises(LoadError, match="Python objects"):
        Partition.load(path, graph)
    assert not marker.exists()


def test_atomic_save_keeps_the_old_file(tmp_path, graph, part, monkeypatch):
    path = part.save(tmp_path / "g.rlp")
    before = path.read_bytes()

    def broken(f, **arrays):
        f.write(b"half")
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        part.save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["g.rlp"]


# ------------------------------------------------------------------ the capability
def _Workspace(graph):
    from engine.workspace import Workspace
    return Workspace(graph)


def test_capability(tmp_path, graph):
    ws = _Workspace(graph)
    params = {"levels": "6,9", "mezzanine": "none", "seed": 0, "out": str(tmp_path / "p.rlp")}
    p = cap.PARTITION.run(ws, params, JobContext())
    assert ws.partition is p and p.cell_sizes_log2 == (6, 9) and p.query_level.all()
    first = ws.overlay()
    again = cap.PARTITION.run(ws, dict(params, levels="7,9", out=None), JobContext())
    assert ws.partition is again and ws.overlay() is not first      # a new partition: a new overlay
    r = cap.PARTITION.to_json(ws, params, p)
    assert r["summary"]["boundary_arcs"] == p.boundary_arcs(graph)
    text = cap.PARTITION.to_text(r)
    assert "level 1" in text and "boundary arcs" in text and "written to" in text
    assert Partition.load(tmp_path / "p.rlp", graph).cell_sizes_log2 == (6, 9)
    assert "mezzanine" in cap.text(cap.to_json(ws, {}, partition_graph(graph)))


@pytest.mark.parametrize("text, words", [("8,x", "not an integer"), ("8,6", "ascending"),
                                         ("0,5", "out of range"), ("31", "out of range")])
def test_capability_refuses_bad_sizes(graph, text, words):
    with pytest.raises(ValueError, match=words):
        cap.PARTITION.run(_Workspace(graph), {"levels": text}, JobContext())
    assert cap.parse_sizes(" 5 ", "m", allow_none=True) == (5,)
    assert cap.parse_sizes("NONE", "m", allow_none=True) == () and cap.parse_sizes("", "m") is None


# ------------------------------------------------------------------ New York
@pytest.mark.slow
def test_new_york():
    g = load([need(NY_D)])
    start = time.perf_counter()
    p = partition_graph(g, levels=(8, 11, 14), mezzanine=(5,))
    seconds = time.perf_counter() - start
    check_structure(p, g.num_nodes)
    assert seconds < 20, f"NY took {seconds:.1f} s"
    for level, k in enumerate(p.cell_sizes_log2):
        assert np.bincount(p.cell_of[level]).max() <= 1.5 * 2 ** k
