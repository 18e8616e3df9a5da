"""Malformed text and OSM inputs: each is refused with one line naming the file and
the reason, within 10 s and under 1 GB (issue 11: resource bounds, parsing safety).

All cases run in one child process (the peak RSS it reports after a case bounds
that case's peak); a SIGALRM per case turns a hang into a failure, not a stuck run.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import pytest

from tests.conftest import NY_D, ROOT, need

GR = "p sp 3 2\na 1 2 5\na 2 3 7\n"
CO_HEAD = "p aux sp co 3\nv 1 0 0\nv 2 0 0\n"
OSM_NODES = ('<?xml version="1.0"?>\n<osm version="0.6">\n <node id="1" lat="{lat}" '
             'lon="7.0"/>\n <node id="2" lat="45.0" lon="7.001"/>\n <way id="10"><nd ref="1"/>'
             '<nd ref="2"/><tag k="highway" v="residential"/></way>\n</osm>\n')


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9)


def _repeat_gz(unit: bytes, total: int) -> bytes:
    """gzip of ``unit`` repeated to ``total`` bytes, without building it all at once."""
    import io
    out = io.BytesIO()
    block = unit * (2**20 // len(unit))
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as f:
        for _ in range(total // len(block)):
            f.write(block)
    return out.getvalue()


# name: (file name, content or a special marker, expected reason, environment)
CASES = {
    "huge node count": ("a.gr", "p sp 2000000000 1\na 1 2 3\n", "announces 2,000,000,000 nodes", {}),
    "huge arc count": ("a.gr", "p sp 10 2000000000\n", "can hold at most", {}),
    "counts over the memory budget": (
        "a.gr.gz", _gz(b"p sp 8000000 4000000\n"), "GiB, budget 0.062 GiB",
        {"ROUTELAB_MEMORY_BUDGET": "64M"}),
    "overflowing count": ("a.gr", "p sp 1 99999999999999999999999\n", "malformed problem line", {}),
    "comment-only gz (bounded, parsed)": (
        "a.gr.gz", "COMMENTS", "no problem line", {}),
    "gzip ratio bomb": ("a.gr.gz", "BOMB", "compression bomb", {}),
    "truncated gzip": ("a.gr.gz", _gz(GR.encode() * 500)[:60], "truncated or corrupt", {}),
    "not gzip at all": ("a.gr.gz", b"this is not gzip data\n", "truncated or corrupt", {}),
    "fifo": ("a.gr", "FIFO", "not a regular file", {}),
    "link to /dev/zero": ("a.gr", "DEVZERO", "not a regular file", {}),
    "directory": ("a.gr", "DIR", "is a directory", {}),
    "negative weight": ("a.gr", "p sp 2 1\na 1 2 -3\n", "negative weight", {}),
    "weight overflows int32": ("a.gr", "p sp 2 1\na 1 2 2147483648\n", "above 2^31-1", {}),
    "weight overflows int64": ("a.gr", "p sp 2 1\na 1 2 99999999999999999999\n", "too large", {}),
    "head id out of range": ("a.gr", "p sp 2 1\na 1 3 3\n", "out of range 1..2", {}),
    "node id zero": ("a.gr", "p sp 2 1\na 0 2 3\n", "out of range 1..2", {}),
    "non-numeric field": ("a.gr", "p sp 2 1\na 1 two 3\n", "non-numeric", {}),
    "missing problem line": ("a.gr", "c only a comment\na 1 2 3\n", "no problem line", {}),
    "duplicate problem line": ("a.gr", "p sp 2 1\na 1 2 3\np sp 2 1\n", "second problem line", {}),
    "more arcs than announced": ("a.gr", "p sp 2 1\na 1 2 3\na 2 1 3\n", "the file has more", {}),
    "empty file": ("a.gr", "", "no problem line", {}),
    "binary garbage": ("a.gr", bytes(range(256)) * 16, "binary data", {}),
    "endless line": ("a.gr", b"p" * (3 * 2**20), "a line longer than", {}),
    "co with nan": ("a.co", CO_HEAD + "v 3 nan 0\n", "non-numeric", {}),
    "co with inf": ("a.co", CO_HEAD + "v 3 0 inf\n", "non-numeric", {}),
    "co with latitude 91": ("a.co", CO_HEAD + "v 3 0 91000000\n", "outside lon", {}),
    "co with longitude -181": ("a.co", CO_HEAD + "v 3 -181000000 0\n", "outside lon", {}),
    "co with a duplicate node": ("a.co", "p aux sp co 3\nv 1 0 0\nv 1 0 0\nv 3 0 0\n",
                                 "node 1 has 2 coordinate lines", {}),
    "co for another graph": ("a.co", "p aux sp co 4\nv 1 0 0\n", "but the graph has 3", {}),
    "osm with a nan coordinate": ("a.osm", OSM_NODES.format(lat="nan"), "coordinate", {}),
    "osm garbage": ("a.osm", "<osm><node id=", "not a readable OpenStreetMap file", {}),
    "osm fifo": ("a.osm", "FIFO", "not a regular file", {}),
    "osm empty": ("a.osm.pbf", b"", "not a readable OpenStreetMap file", {}),
}


def _make(tmp, key: str, name: str, content):
    folder = tmp / key.replace(" ", "_").replace("/", "_")
    folder.mkdir()
    path = folder / name
    if content == "FIFO":
        os.mkfifo(path)
    elif content == "DEVZERO":
        path.symlink_to("/dev/zero")
    elif content == "DIR":
        path.mkdir()
    elif content == "COMMENTS":    # 48 MB of 2-byte comment lines, ~50 kB compressed
        path.write_bytes(_repeat_gz(b"c\n", 48 * 2**20))
    elif content == "BOMB":        # 256 MB of comment text, ~250 kB compressed
        path.write_bytes(_repeat_gz(b"c" + b" " * 1022 + b"\n", 256 * 2**20))
    else:
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    if name.endswith(".co"):   # a .co is loaded with the .gr it belongs to
        (folder / "g.gr").write_text(GR)
        return [str(folder / "g.gr"), str(path)]
    return [str(path)]


CHILD = textwrap.dedent("""
    import json, os, signal, sys, time
    from engine.io import LoadError, load
    def peak_rss_mb():
        # VmHWM is this process's own high-water mark; getrusage's ru_maxrss would
        # carry the parent's (pytest's) peak across fork and exec
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    def alarm(*_):
        raise TimeoutError("over 10 s")
    signal.signal(signal.SIGALRM, alarm)
    out = {}
    for key, (paths, env) in json.load(sys.stdin).items():
        os.environ.pop("ROUTELAB_MEMORY_BUDGET", None)
        os.environ.update(env)
        t0 = time.perf_counter()
        signal.alarm(10)
        try:
            load(paths, siblings=False)
            result = {"error": None}
        except LoadError as e:
            result = {"error": str(e), "path": e.path}
        except BaseException as e:
            result = {"error": f"{type(e).__name__}: {e}", "path": None, "crash": True}
        signal.alarm(0)
        result["seconds"] = time.perf_counter() - t0
        result["rss_mb"] = peak_rss_mb()
        out[key] = result
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bounds")
    jobs = {key: (_make(tmp, key, name, content), env)
            for key, (name, content, _, env) in CASES.items()}
    proc = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(jobs), cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    return {key: (jobs[key][0][-1], results[key]) for key in CASES}


@pytest.mark.parametrize("key", list(CASES))
def test_malformed_input_is_refused_quickly_and_in_bounded_memory(outcomes, key):
    path, r = outcomes[key]
    reason = CASES[key][2]
    assert not r.get("crash"), r["error"]
    assert r["error"] is not None, "loaded without complaint"
    assert r["path"] == path and path in r["error"]
    assert reason in r["error"], r["error"]
    assert "\n" not in r["error"]
    assert r["seconds"] < 10
    assert r["rss_mb"] < 1024


def test_corpus_is_large_enough():
    assert len(CASES) >= 25


# ------------------------------------------------------------------- siblings
def _usa(tmp_path, d=GR, t=GR.replace(" 5\n", " 50\n"), co=CO_HEAD + "v 3 0 0\n"):
    for name, text in (("USA-road-d.X.gr", d), ("USA-road-t.X.gr", t), ("USA-road-d.X.co", co)):
        if text is not None:
            (tmp_path / name).write_text(text)
    return tmp_path / "USA-road-d.X.gr"


def test_matching_siblings_are_used_and_announced(tmp_path):
    from engine.io import load, siblings_used
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = load(_usa(tmp_path))
    assert g.metric_names == ["distance", "travel_time"] and g.has_coordinates
    assert siblings_used(g) == ["USA-road-t.X.gr", "USA-road-d.X.co"]
    assert g.source == "USA-road-d.X.gr + USA-road-t.X.gr (sibling) + USA-road-d.X.co (sibling)"


@pytest.mark.parametrize("t, co, skipped", [
    ("p sp 4 2\na 1 2 5\na 2 3 7\n", None, "USA-road-t.X.gr"),          # other node count
    ("p sp 3 2\na 1 2 5\na 3 2 7\n", None, "USA-road-t.X.gr"),          # other arcs
    ("p sp 3 2\na 1 2 5\n", None, "USA-road-t.X.gr"),                   # malformed
    (None, "p aux sp co 7\nv 1 0 0\n", "USA-road-d.X.co"),              # other graph
    (None, b"\x1f\x8b garbage", "USA-road-d.X.co"),                      # binary
])
def test_a_mismatching_sibling_is_skipped_with_a_warning(tmp_path, t, co, skipped):
    from engine.io import load, siblings_used
    from engine.io.dimacs import SiblingWarning
    gr = _usa(tmp_path, t=t, co=None)
    if co is not None:
        (tmp_path / "USA-road-d.X.co").write_bytes(co if isinstance(co, bytes) else co.encode())
    with pytest.warns(SiblingWarning, match=skipped):
        g = load(gr)
    assert g.num_arcs == 2 and g.metric_names == ["distance"]
    assert not g.has_coordinates and siblings_used(g) == []


def test_no_siblings_turns_them_off(tmp_path):
    from engine.io import load, siblings_used
    g = load(_usa(tmp_path), siblings=False)
    assert g.metric_names == ["distance"] and not g.has_coordinates
    assert siblings_used(g) == [] and g.source == "USA-road-d.X.gr"


def test_named_files_win_over_siblings(tmp_path):
    from engine.io import LoadError, load
    gr = _usa(tmp_path, co="not a coordinate file\n")      # a broken sibling .co ...
    named = tmp_path / "mine.co"
    named.write_text(CO_HEAD + "v 3 1000000 2000000\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = load([gr, named])                               # ... is not even read
    assert g.lon[2] == 1.0 and g.source.endswith("mine.co")
    named.write_text("p aux sp co 9\n")                     # a broken named file is an error
    with pytest.raises(LoadError, match="mine.co"):
        load([gr, named])


def test_info_lists_the_siblings(tmp_path):
    from engine.capabilities.info import describe
    from engine.io import load

    class Workspace:
        graph = load(_usa(tmp_path))
    assert describe(Workspace, {}, None)["siblings"] == ["USA-road-t.X.gr", "USA-road-d.X.co"]


# --------------------------------------------------------------------- cancel
@pytest.mark.parametrize("after", [0.02, 0.1])
def test_cancel_acts_inside_a_dimacs_parse_of_new_york(after):
    from engine.io import load
    from engine.core.progress import CancelToken, Cancelled
    token, outcome = CancelToken(), {}
    path = need(NY_D)               # here: a skip raised in the thread would be lost

    def run():
        try:
            load(path, cancel=token)
            outcome["end"] = "loaded"
        except Cancelled:
            outcome["end"] = "cancelled"
        outcome["t"] = time.perf_counter()

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(after)
    cancelled_at = time.perf_counter()
    token.cancel()
    worker.join(10)
    assert outcome["end"] == "cancelled"
    assert outcome["t"] - cancelled_at < 0.5
