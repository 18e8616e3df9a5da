"""hypothesis fuzzing of the graph cache (.rlg) and hierarchy (.rlh) formats: arrays of a
valid file get mutated dtypes, values, ranges, lengths, offsets, levels and core
matrices, and metadata gets odd values. Every mutant is refused with a LoadError, or
it loads and its distances equal the reference (SciPy's Dijkstra): never a crash,
never a wrong distance."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from engine.core.backend import cpu_backend
from engine.ch import Hierarchy, contract
from engine.generate.network import generate_road_network
from engine.io import LoadError, load
from engine.io.cache import save_cache
from engine.io.hierarchy_file import NARROW, check_hierarchy
from engine.ch.phast import PhastQuery
from engine.routing.reference import sssp
from engine.sssp import TreeQuery
from tests.strategies import random_graphs

CPU = cpu_backend()
GRAPH = generate_road_network(300, seed=1)
N = GRAPH.num_nodes
SOURCES = [0, 17, 150, 299]
SPECIAL = [-1, 0, 1, 2, N - 1, N, N + 3, 2**31 - 1, 2**31, 2**32, 10**9, -2**31, 2**62,
           2**63 - 1]
# ROUTELAB_FUZZ_EXAMPLES raises the count for a longer hunt (3,000 and 2,000 ran clean here)
SETTINGS = settings(max_examples=int(os.environ.get("ROUTELAB_FUZZ_EXAMPLES", 1000)),
                    deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def files():
    folder = Path(tempfile.mkdtemp(prefix="routelab-fuzz-"))
    h = contract(GRAPH, K=40, backend=CPU)
    cache, hierarchy = save_cache(GRAPH, folder / "g.rlg"), h.save(folder / "g.rlh")
    reference = np.stack([sssp(GRAPH, s).distance for s in SOURCES])
    return folder, cache, hierarchy, reference


def read(path) -> tuple[dict, dict]:
    with np.load(path) as z:
        arrays = dict(z)
    return arrays, json.loads(arrays.pop("meta").tobytes().decode())


def write(path, arrays: dict, meta: dict) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))


@st.composite
def array_mutation(draw, names):
    """A function that changes one array: a value, its dtype, its length, its order."""
    name = draw(st.sampled_from(names))
    kind = draw(st.sampled_from(["value", "nudge", "dtype", "length", "swap", "reverse", "fill"]))
    value = draw(st.sampled_from(SPECIAL))
    nudge = draw(st.integers(-3, 3))
    dtype = draw(st.sampled_from([np.int8, np.int32, np.int64, np.uint32, np.float64]))
    u, v = draw(st.floats(0, 1, exclude_max=True)), draw(st.floats(0, 1, exclude_max=True))

    def mutate(arrays: dict) -> None:
        a = arrays[name].copy()
        i, j = int(u * a.size), int(v * a.size)
        if a.size == 0 or kind == "length":
            a = a[:-1] if nudge < 0 and a.shape[0] else np.concatenate(
                [a, np.zeros((1,) + a.shape[1:], a.dtype)])
        elif kind in ("value", "nudge"):
            new = value if kind == "value" else a.flat[i].item() + nudge
            if not np.can_cast(np.min_scalar_type(new), a.dtype):
                a = a.astype(np.float64 if abs(new) >= 2**63 else np.int64)
            a.flat[i] = new
        elif kind == "dtype":
            with np.errstate(invalid="ignore", over="ignore"):    # a lossy cast is the point
                a = a.astype(dtype)
        elif kind == "swap":
            a.flat[i], a.flat[j] = a.flat[j], a.flat[i]
        elif kind == "reverse":
            a = a[::-1].copy()
        else:
            a.flat[min(i, j):max(i, j) + 1] = a.flat[i]
        arrays[name] = a
    return mutate


def meta_mutation(keys):
    return st.tuples(st.sampled_from(keys), st.sampled_from(SPECIAL + [-2, 3, N // 2, "1", None]))


def mutate_file(source, target, data, names, keys) -> None:
    arrays, meta = read(source)
    for change in data.draw(st.lists(array_mutation(names), min_size=1, max_size=3)):
        change(arrays)
    for key, value in data.draw(st.lists(meta_mutation(keys), max_size=1)):
        meta[key] = value if value is None or isinstance(value, str) else int(value)
    write(target, arrays, meta)


CACHE_ARRAYS = ["first_out", "head", "node_id", "metric/distance", "metric/travel_time", "lon",
                "geometry_first", "geometry_lonlat", "turn_from_arc", "turn_to_arc"]


@SETTINGS
@given(data=st.data())
def test_fuzzed_cache_is_refused_or_exact(files, data):
    folder, cache, _, _ = files
    target = folder / "fuzzed.rlg"
    mutate_file(cache, target, data, CACHE_ARRAYS, ["version", "metrics"])
    try:
        g = load([target])
    except LoadError as e:
        event(f"refused: {e.reason.split(' holds ')[0][:40]}")
        return
    event("loaded")
    query = TreeQuery(g, backend=CPU)
    for s in (s for s in SOURCES if s < g.num_nodes):
        assert np.array_equal(query.tree(s).tree.distance, sssp(g, s).distance)


HIERARCHY_ARRAYS = ["node_level", "arc_tail", "arc_head", "arc_weight", "arc_child1",
                    "arc_child2", "up_first", "up_harc", "down_first", "down_harc",
                    "core_nodes", "core_dist", "core_pred"]


@pytest.fixture(scope="module")
def version_1(files):
    """The hierarchy as version 1 wrote it: every id array int64 (still read)."""
    folder, _, hierarchy, _ = files
    arrays, meta = read(hierarchy)
    path = folder / "v1.rlh"
    write(path, {k: a.astype(np.int64) if k in NARROW else a for k, a in arrays.items()},
          {**meta, "version": 1})
    return path


@pytest.mark.parametrize("version", [2, 1])
@SETTINGS
@given(data=st.data())
def test_fuzzed_hierarchy_is_refused_or_exact(files, version_1, version, data):
    folder, _, hierarchy, reference = files
    target = folder / f"fuzzed-v{version}.rlh"
    mutate_file(hierarchy if version == 2 else version_1, target, data, HIERARCHY_ARRAYS,
                ["num_nodes", "num_levels", "num_original_arcs"])
    try:
        h = Hierarchy.load(target, GRAPH)
    except LoadError as e:
        event(f"refused: {e.reason.split(' holds ')[0][:40]}")
        return
    event("loaded")
    assert np.array_equal(PhastQuery(h, CPU).distances(SOURCES), reference)


@settings(max_examples=60, deadline=None, database=None)
@given(random_graphs(nodes=(2, 30), max_arcs=90, weights=st.integers(0, 20)), st.integers(2, 8),
       st.sampled_from([0.1, 0.3, 1.0]))
def test_every_contracted_hierarchy_passes_the_validator(g, K, C):
    """No false refusals: what contraction builds is always accepted."""
    check_hierarchy(contract(g, K=K, C=C, backend=CPU), "built")
