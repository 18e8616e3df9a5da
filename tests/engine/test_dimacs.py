"""DIMACS loading: real files, and every kind of malformed input named precisely."""
from __future__ import annotations

import gzip
import time

import numpy as np
import pytest

from engine.io import LoadError, load
from engine.io.dimacs import load_dimacs
from tests.conftest import NY_CO, NY_D, NY_T, ROME, need

GOOD_GR = "c tiny\np sp 3 4\na 1 2 5\na 2 3 7\na 3 1 2\na 1 2 9\n"
GOOD_CO = "p aux sp co 3\nv 1 -73000000 41000000\nv 2 -73000100 41000100\nv 3 -73000200 41000000\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_tiny_graph_with_parallel_arcs_and_coordinates(tmp_path):
    g = load([write(tmp_path, "g.gr", GOOD_GR), write(tmp_path, "g.co", GOOD_CO)])
    assert (g.num_nodes, g.num_arcs) == (3, 4)
    assert g.node_id.tolist() == [1, 2, 3]
    assert g.first_out.tolist() == [0, 2, 3, 4]
    assert g.head.tolist() == [1, 1, 2, 0]
    assert g.metric("weight").tolist() == [5, 9, 7, 2]   # parallel arcs kept, in file order
    assert g.lon[0] == pytest.approx(-73.0) and g.lat[1] == pytest.approx(41.0001)


def test_companion_co_is_found_beside_the_gr(tmp_path):
    write(tmp_path, "g.co", GOOD_CO)
    g = load([write(tmp_path, "g.gr", GOOD_GR)])
    assert g.has_coordinates


def test_two_metrics_on_one_topology(tmp_path):
    d = write(tmp_path, "USA-road-d.X.gr", GOOD_GR)
    write(tmp_path, "USA-road-t.X.gr", GOOD_GR.replace(" 5\n", " 50\n"))
    g = load([d])
    assert g.metric_names == ["distance", "travel_time"]
    assert g.metric("travel_time")[0] == 50 and g.metric("distance")[0] == 5


def test_self_loops_are_dropped(tmp_path):
    g = load([write(tmp_path, "g.gr", "p sp 2 3\na 1 1 4\na 1 2 3\na 2 2 0\n")])
    assert g.num_arcs == 1 and g.head.tolist() == [1]


def test_gzip_and_crlf(tmp_path):
    path = tmp_path / "g.gr.gz"
    path.write_bytes(gzip.compress(GOOD_GR.replace("\n", "\r\n").encode()))
    assert load([path]).num_arcs == 4


BAD_GR = {
    "empty file": ("", None, "no problem line"),
    "no problem line": ("a 1 2 3\n", None, "no problem line"),
    "duplicate problem line": ("p sp 2 1\np sp 2 1\na 1 2 3\n", 2, "second problem line"),
    "malformed problem line": ("p sp two 1\na 1 2 3\n", 1, "malformed problem line"),
    "too few arcs": ("p sp 2 2\na 1 2 3\n", 1, "announces 2 arcs"),
    "too many arcs": ("p sp 2 1\na 1 2 3\na 2 1 3\n", 1, "announces 1 arcs"),
    "node id out of range": ("p sp 2 2\na 1 2 3\na 2 3 3\n", 3, "out of range"),
    "node id zero": ("p sp 2 1\na 0 2 3\n", 2, "out of range"),
    "negative weight": ("p sp 2 1\na 1 2 -3\n", 2, "negative weight"),
    "non-numeric weight": ("p sp 2 1\na 1 2 x\n", 2, "non-numeric"),
    "fractional weight": ("p sp 2 1\na 1 2 3.5\n", 2, "non-numeric"),
    "missing field": ("p sp 2 1\na 1 2\n", 2, "expected 3 numbers"),
    "extra field": ("p sp 2 1\na 1 2 3 4\n", 2, "expected 3 numbers"),
    "unknown line": ("p sp 2 1\nx 1 2 3\n", 2, "unexpected line"),
    "arc before problem line": ("a 1 2 3\np sp 2 1\n", 1, "before the problem line"),
    "weight overflows int32": ("p sp 2 1\na 1 2 99999999999\n", 2, "above 2^31-1"),
    "number too long": ("p sp 2 1\na 1 2 9999999999999999999999\n", 2, "too large"),
    "stray minus": ("p sp 2 1\na 1 2 3-\n", 2, "malformed number"),
}


@pytest.mark.parametrize("case", sorted(BAD_GR))
def test_malformed_gr_names_file_line_and_reason(tmp_path, case):
    text, line, reason = BAD_GR[case]
    path = write(tmp_path, "bad.gr", text)
    with pytest.raises(LoadError) as err:
        load([path])
    assert reason in err.value.reason
    assert err.value.line == line
    assert str(path) in str(err.value)


def test_binary_garbage(tmp_path):
    path = write(tmp_path, "junk.gr", bytes(range(256)) * 10)
    with pytest.raises(LoadError, match="binary data"):
        load([path])


def test_truncated_gzip(tmp_path):
    data = gzip.compress((GOOD_GR * 50).encode())
    path = write(tmp_path, "cut.gr.gz", data[: len(data) // 2])
    with pytest.raises(LoadError, match="truncated or corrupt"):
        load([path])


def test_non_existent_path(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        load([tmp_path / "missing.gr"])


def test_unknown_extension(tmp_path):
    with pytest.raises(LoadError, match="unknown file type"):
        load([write(tmp_path, "g.txt", GOOD_GR)])


@pytest.mark.parametrize("co, reason", [
    ("p aux sp co 4\nv 1 0 0\nv 2 0 0\nv 3 0 0\nv 4 0 0\n", "but the graph has 3"),
    ("p aux sp co 3\nv 1 0 0\nv 2 0 0\n", "announces 3 nodes"),
    ("p aux sp co 3\nv 1 0 0\nv 1 0 0\nv 3 0 0\n", "coordinate lines"),
    ("p aux sp co 3\nv 1 0 0\nv 2 0 0\nv 9 0 0\n", "out of range"),
    ("p aux sp co 3\nv 1 0 0\nv 2 0 0\nv 3 0 999999999\n", "outside lon"),
])
def test_co_that_does_not_match_the_gr(tmp_path, co, reason):
    gr = write(tmp_path, "g.gr", GOOD_GR)
    with pytest.raises(LoadError, match=reason):
        load([gr, write(tmp_path, "other.co", co)])


def test_two_gr_files_with_different_arcs(tmp_path):
    a = write(tmp_path, "a.gr", GOOD_GR)
    b = write(tmp_path, "b.gr", GOOD_GR.replace("a 2 3 7", "a 3 2 7"))
    with pytest.raises(LoadError, match="arcs differ"):
        load_dimacs([a, b], siblings=False)


def test_coordinates_alone_are_not_a_graph(tmp_path):
    with pytest.raises(LoadError, match="give a .gr"):
        load([write(tmp_path, "g.co", GOOD_CO)])


def test_rome99():
    g = load([need(ROME)])
    assert (g.num_nodes, g.num_arcs) == (3353, 8870)
    assert not g.has_coordinates


@pytest.mark.slow
def test_new_york_with_both_metrics_and_coordinates():
    need(NY_T), need(NY_CO)
    t0 = time.perf_counter()
    g = load([need(NY_D)])
    seconds = time.perf_counter() - t0
    assert (g.num_nodes, g.num_arcs) == (264346, 733846)
    assert g.metric_names == ["distance", "travel_time"]
    assert g.metric("distance").min() == 1 and g.metric("distance").max() == 36946
    assert g.metric("travel_time").min() == 2 and g.metric("travel_time").max() == 92366
    assert -74.6 < g.lon.min() < g.lon.max() < -73.3 and 40.3 < g.lat.min() < g.lat.max() < 41.4
    # the first arc of the file, a 1 2 803, keeps its weight in both metrics
    first = g.first_out[0]
    assert g.head[first] == 1 and g.metric("distance")[first] == 803
    assert seconds < 30  # the 3 s target is measured in scripts/bench.py, not here
