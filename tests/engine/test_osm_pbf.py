"""The fast PBF reader (engine.io.osm_pbf: blocks decoded in Numba) against libosmium's
reader (engine.io.osm._read through pyosmium), an independent decoder of the same
files: the same graph and report on every shared extract and on random files with
every tag, restriction and node case; damaged files refused, never a crash."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

osmium = pytest.importorskip("osmium")
from osmium.osm.mutable import Node, Relation, Way  # noqa: E402

from engine.io import LoadError  # noqa: E402
from engine.io import osm  # noqa: E402
from engine.io.limits import OverBudget  # noqa: E402
from engine.io.osm_tags import WAY_KEYS, way_profile  # noqa: E402
from engine.io.pbf_decode import decode_block  # noqa: E402
from engine.io.pbf_file import _blobs, _inflate  # noqa: E402

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "osm"

# The shared extracts as the libosmium reader loaded them before the fast reader was
# written (nodes, arcs, banned turns, ways kept, restrictions used / seen).
KNOWN = {
    "andorra.osm.pbf": (1730, 3457, 0),
    "heidelberg.ors-test.osm.pbf": (12283, 26262, 548),
    "monaco.osm.pbf": (2279, 4343, 35),
    "oslo-east-filtered.osm.pbf": (8142, 16812, 62),
    "portland-central-filtered.osm.pbf": (6153, 15075, 485),
    "porto_portugal.osm.pbf": (63199, 147067, 360),
}


def graph_arrays(g) -> dict:
    out = {"first_out": g.first_out, "head": g.head, "node_id": g.node_id, "lon": g.lon,
           "lat": g.lat, "geometry_first": g.geometry_first,
           "geometry_lonlat": g.geometry_lonlat, "from": g.turn_restrictions.from_arc,
           "to": g.turn_restrictions.to_arc}
    out.update({f"metric {k}": v for k, v in g.metrics.items()})
    out.update({f"attr {k}": v for k, v in g.arc_attrs.items()})
    return out


def assert_same_load(path: Path):
    """The fast reader and libosmium give equal graphs and reports; returns the graph."""
    g, rep = osm._load_report(path, fast=True)
    h, ref = osm._load_report(path, fast=False)
    a, b = graph_arrays(g), graph_arrays(h)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
    assert dataclasses.asdict(rep) == dataclasses.asdict(ref)
    assert (g.metric_units, g.source, g.data_license) == (h.metric_units, h.source, h.data_license)
    return g, rep


# ------------------------------------------------------------------ shared extracts
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n.startswith("porto") else n for n in KNOWN])
def test_shared_extracts_equal_libosmium(name):
    p = DATA / name
    if not p.exists():
        pytest.skip(f"shared OSM data not found at {p} (see DESIGN.md, Data)")
    g, rep = assert_same_load(p)
    assert (g.num_nodes, g.num_arcs, len(g.turn_restrictions)) == KNOWN[name]
    assert rep.banned_turns == KNOWN[name][2]


# ------------------------------------------------------------------ random files
VOCAB = {
    "highway": ["motorway", "motorway_link", "primary", "residential", "service", "road",
                "living_street", "footway", "track", "cycleway"],
    "route": ["ferry", "bus"],
    "oneway": ["yes", "-1", "no", "reversible", "1", "true", "alternating", "maybe"],
    "maxspeed": ["50", "30 mph", "DE:zone30", "none", "walk", "bogus", "50;30", "RU:urban", "0"],
    "maxspeed:forward": ["70", "x"], "maxspeed:backward": ["40"],
    "lanes": ["2", "3", "2;3", "x", "0"], "lanes:forward": ["1"], "lanes:backward": ["2"],
    "access": ["no", "private", "destination", "yes", "permissive"],
    "motorcar": ["yes", "no", "designated"], "motor_vehicle": ["no", "permissive"],
    "vehicle": ["no", "yes"], "area": ["yes", "no"], "junction": ["roundabout", "circular"],
    "toll": ["yes", "no"], "toll:motorcar": ["yes"], "duration": ["00:30", "15", "1:02:03", "z"],
    "name": ["Main Street", "Rua Á"], "surface": ["asphalt"],
}


def random_tags(rng) -> list:
    keys = list(VOCAB)
    tags = [("highway", rng.choice(VOCAB["highway"]))] if rng.random() < 0.85 else []
    for k in rng.choice(keys, rng.integers(0, 5), replace=False):
        tags.append((str(k), str(rng.choice(VOCAB[k]))))
    if tags and rng.random() < 0.1:   # a repeated key: the first value counts
        tags.append((tags[0][0], "residential"))
    return tags


def random_restriction(rng, rid, ways, node_ids):
    """Mostly restrictions that resolve: from and to ways through a shared via node."""
    value = str(rng.choice(["no_left_turn", "only_straight_on", "no_u_turn", "only_right_turn",
                            "give_way"]))
    key = str(rng.choice(["restriction", "restriction", "restriction:motorcar",
                          "restriction:hgv"]))
    tags = [("type", "restriction"), (key, value)]
    if rng.random() < 0.1:
        tags.append(("except", str(rng.choice(["motorcar", "bicycle;psv"]))))
    way_ids = [w.id for w in ways]
    via_node = int(rng.choice(node_ids))
    through = [w.id for w in ways if via_node in w.nodes]
    pick = (lambda: int(rng.choice(through))) if through and rng.random() < 0.8 else \
        (lambda: int(rng.choice(way_ids)))
    via = ("w", int(rng.choice(way_ids)), "via") if rng.random() < 0.05 else ("n", via_node, "via")
    members = [("w", pick(), "from"), via, ("w", pick(), "to")]
    if rng.random() < 0.15:
        members.append(("w", pick(), "to"))
    return Relation(id=rid, members=members, tags=tags)


def write_random_pbf(path: Path, seed: int, sparse_ids: bool, shuffled: bool, fmt: str = ""):
    """A small street grid with random tags, missing and repeated nodes, and random
    restrictions, written by libosmium."""
    rng = np.random.default_rng(seed)
    side = 12
    ids = (np.sort(rng.choice(10**11, side * side, replace=False)) + 1 if sparse_ids
           else np.arange(1, side * side + 1) * (-1 if seed % 5 == 4 else 1))
    grid = ids.reshape(side, side)
    ways, wid = [], 1
    for r in range(side):
        for line in (grid[r], grid[:, r]):
            start = rng.integers(0, side - 2)
            refs = [int(x) for x in line[start:start + rng.integers(1, side - start + 1)]]
            if rng.random() < 0.1:
                refs.append(refs[0])                 # closed way
            if rng.random() < 0.1:
                refs.insert(1, refs[0])              # a repeated node
            if rng.random() < 0.1:
                refs.append(10**12 + wid)            # a node missing from the file
            ways.append(Way(id=wid, nodes=refs, tags=random_tags(rng)))
            wid += 1
    nodes = [Node(id=int(i), location=(8.6 + 0.001 * (k % side), 49.4 + 0.001 * (k // side)))
             for k, i in enumerate(ids) if rng.random() > 0.03]
    if shuffled:
        rng.shuffle(nodes)
    rels = [random_restriction(rng, r + 1, ways, ids) for r in range(40)]
    target = osmium.io.File(str(path), fmt) if fmt else str(path)
    with osmium.SimpleWriter(target, overwrite=True) as w:
        for obj in nodes + ways + rels:
            w.add(obj)
    return path


@pytest.mark.parametrize("seed", range(10))
def test_random_files_equal_libosmium(tmp_path, seed):
    p = write_random_pbf(tmp_path / "r.osm.pbf", seed, sparse_ids=seed % 2 == 1,
                         shuffled=seed % 3 == 2)
    try:
        assert_same_load(p)
    except LoadError as e:   # both readers must refuse it the same way
        assert "no drivable roads" in str(e)
        with pytest.raises(LoadError, match="no drivable roads"):
            osm._load_report(p, fast=False)


def test_uncompressed_blocks(tmp_path):
    p = write_random_pbf(tmp_path / "raw.osm.pbf", 3, False, False, "pbf,pbf_compression=none")
    assert_same_load(p)


def test_locations_on_ways_are_ignored(tmp_path):
    """Ways that carry their nodes' locations (an optional feature): the nodes' own
    locations are read, as libosmium's location index does."""
    assert_same_load(write_random_pbf(tmp_path / "low.osm.pbf", 1, False, False,
                                      "pbf,locations_on_ways=true"))


def test_what_the_fast_reader_leaves_to_libosmium(tmp_path, monkeypatch):
    try:
        p = write_random_pbf(tmp_path / "lz4.osm.pbf", 1, False, False, "pbf,pbf_compression=lz4")
    except Exception as e:   # libosmium built without lz4
        pytest.skip(f"libosmium cannot write lz4 blocks here: {e}")
    calls = []
    real = osm._read
    monkeypatch.setattr(osm, "_read", lambda *a: calls.append(1) or real(*a))
    assert_same_load(p)
    assert len(calls) == 2   # the fast reader handed the file on, then the reference read


def test_way_profile_reads_only_way_keys():
    class Tags(dict):   # only .get: any other access fails
        def get(self, key, default=None):
            seen.add(key)
            return dict.get(self, key, default)

        def __getitem__(self, key):
            raise AssertionError("way_profile must use .get")
    seen = set()
    rng = np.random.default_rng(0)
    for _ in range(3000):
        way_profile(Tags(random_tags(rng)))
    assert seen <= set(WAY_KEYS) and "name" not in seen
    assert seen == set(WAY_KEYS)   # the random tags reach every key


# ------------------------------------------------------------------ damaged files
def small_block(tmp_path) -> np.ndarray:
    p = write_random_pbf(tmp_path / "s.osm.pbf", 7, True, False)
    with open(p, "rb") as f:
        blobs = [(o, b) for o, kind, b in _blobs(f, p.stat().st_size) if kind == "OSMData"]
    return np.concatenate([_inflate(b, o) for o, b in blobs])


def test_damaged_blocks_raise_never_crash(tmp_path):
    """Random byte changes in decoded data: a ValueError or arrays of consistent sizes,
    never a read outside the buffer (Numba does not check bounds itself)."""
    block = small_block(tmp_path)
    rng = np.random.default_rng(1)
    errors = 0
    for trial in range(400):
        buf = block.copy()
        at = rng.integers(0, buf.size, rng.integers(1, 4))
        buf[at] = rng.integers(0, 256, at.size)
        if trial % 4 == 0:
            buf = buf[:rng.integers(1, buf.size)]
        try:
            out = decode_block(buf)
        except ValueError:
            errors += 1
            continue
        meta, counts, s0, s1, node_id, nx, ny, way_id, way_nrefs, refs = out[:10]
        if not meta[3]:
            assert way_nrefs.sum() == refs.size and node_id.size == nx.size == ny.size
            assert ((0 <= s0) & (s0 <= s1) & (s1 <= buf.size)).all()
    assert errors > 50


def test_damaged_file_is_a_load_error(tmp_path):
    p = write_random_pbf(tmp_path / "d.osm.pbf", 2, False, False, "pbf,pbf_compression=none")
    data = bytearray(p.read_bytes())
    data[len(data) // 2: len(data) // 2 + 8] = b"\xff" * 8   # an endless varint
    p.write_bytes(bytes(data))
    with pytest.raises(LoadError, match="not a readable OpenStreetMap file"):
        osm.load_osm(p)


def test_block_that_does_not_inflate(tmp_path):
    p = write_random_pbf(tmp_path / "z.osm.pbf", 2, False, False)
    data = bytearray(p.read_bytes())
    data[-20:] = bytes(20)
    p.write_bytes(bytes(data))
    with pytest.raises(LoadError, match="not a readable.*(decompress|bytes)"):
        osm.load_osm(p)


def test_memory_budget_refuses_early(tmp_path, monkeypatch):
    p = write_random_pbf(tmp_path / "b.osm.pbf", 0, False, False)
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1K")   # below what reading holds
    with pytest.raises(OverBudget, match="reading the file's nodes and ways needs more than"):
        osm.load_osm(p)
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")
    read = osm._read(p, osm.OsmReport(), osm.NEVER_CANCELLED)
    refs = read.ref_u.size
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", str(osm.BUILD_BYTES_PER_REF * refs - 1))
    with pytest.raises(OverBudget, match=f"building the road graph of {refs:,} node references"):
        osm._load_report(p, fast=False)


def test_cancel_while_reading_blocks(tmp_path):
    from engine.core.progress import Cancelled, CancelToken
    p = write_random_pbf(tmp_path / "c.osm.pbf", 0, False, False)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        osm._load_report(p, cancel=token, fast=True)
