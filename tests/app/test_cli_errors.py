"""The command line's error boundary (issue 11): every bad invocation ends with one
readable line on stderr and exit status 1 (a JSON object under --json), a traceback
only with --debug, and a closed pipe ends the command quietly."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = "p sp 4 4\na 1 2 5\na 2 3 7\na 1 3 20\na 4 1 1\n"
GRID_SIDE = 40          # 1,600 nodes: K = 1e9 makes the whole grid the core


def write_grid(path: Path, side: int = GRID_SIDE) -> Path:
    arcs = []
    for r in range(side):
        for c in range(side):
            v = r * side + c + 1
            if c + 1 < side:
                arcs += [(v, v + 1), (v + 1, v)]
            if r + 1 < side:
                arcs += [(v, v + side), (v + side, v)]
    path.write_text(f"p sp {side * side} {len(arcs)}\n" + "".join(f"a {u} {v} 10\n" for u, v in arcs))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cli_errors")
    tiny = tmp_path / "tiny.gr"
    tiny.write_text(TINY)
    garbage = tmp_path / "garbage.gr"
    garbage.write_bytes(b"\x00\xff\xfe binary, not DIMACS \x00" * 20)
    grid = write_grid(tmp_path / "grid.gr")
    (tmp_path / "folder.gr").mkdir()
    other = tmp_path / "grid.rlh"            # a hierarchy of the grid, not of tiny
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["contract", str(grid), "--K", "64", "--backend", "cpu", "--out", str(other),
                     "--json"]) == 0
    return {"tiny": str(tiny), "garbage": str(garbage), "grid": str(grid), "other": str(other),
            "dir": str(tmp_path / "folder.gr"), "missing": str(tmp_path / "missing.gr"),
            "missing_rlh": str(tmp_path / "missing.rlh"), "nofolder": str(tmp_path / "no" / "t.npz")}


# (arguments with {name} for a file of the fixture, what the one line must say)
CORPUS = [
    ("route {tiny} --from 9 --to 1", "unknown node id 9"),
    ("route {tiny} --from 1180591620717411303424 --to 1", "unknown node id 1180591620717411303424"),
    ("route {tiny} --from -1 --to 1", "unknown node id -1"),
    ("route {tiny} --from 1.5 --to 1", "--from: '1.5' is not a whole number"),
    ("route {tiny} --from 1 --to abc", "--to: 'abc' is not a number"),
    ("route {tiny} --from 1 --to 2 --metric time", "unknown metric 'time'"),
    ("route {tiny} --from 3 --to 4", "cannot be reached"),
    ("tree {tiny} --from 77", "unknown node id 77"),
    ("contract {tiny} --K 1", "K (the core size) must be at least 2"),
    ("contract {tiny} --K -5", "K (the core size) must be at least 2"),
    ("contract {tiny} --K 2.5", "--K: '2.5' is not a whole number"),
    ("contract {grid} --K 1e9", "K (the core size) = 1,000,000,000"),
    ("contract {tiny} --C 1e-9", "C (the selection fraction) must be in [0.01, 1]"),
    ("contract {tiny} --C 0", "C (the selection fraction) must be in [0.01, 1]"),
    ("contract {tiny} --C 1.5", "C (the selection fraction) must be in [0.01, 1]"),
    ("contract {tiny} --C nan", "--C: 'nan' is not a finite number"),
    ("contract {grid} --K 2 --C 0.02", "levels"),
    ("info {missing}", "no such file"),
    ("info {dir}", "directory"),
    ("info {garbage}", "garbage.gr"),
    ("tree {tiny} --from 1 --hierarchy {missing_rlh}", "missing.rlh"),
    ("tree {tiny} --from 1 --hierarchy {other}", "belongs to a graph"),
    ("tree {tiny} --from 1 --backend cpu --out {nofolder}", "t.npz"),
]


def run(capsys, line: str, files: dict, *extra: str) -> tuple[int, str, str]:
    argv = [a.format(**files) for a in line.split()] + list(extra)
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(autouse=True)
def small_budget(monkeypatch):
    """A core of the whole 1,600-node grid (82 MB) is over this budget; files are not."""
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "16M")


@pytest.mark.parametrize("line, says", CORPUS, ids=[c[0] for c in CORPUS])
def test_a_bad_invocation_is_one_readable_line_and_status_1(capsys, files, line, says):
    status, out, err = run(capsys, line, files)
    assert status == 1, err
    assert out == "" and err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"routelab {line.split()[0]}: ") and says in err, err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("line, says", CORPUS, ids=[c[0] for c in CORPUS])
def test_under_json_the_error_is_a_json_object(capsys, files, line, says):
    status, out, err = run(capsys, line, files, "--json")
    assert status == 1 and err == ""
    assert says in json.loads(out)["error"]


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 15


def test_bad_usage_is_one_line_with_status_2(capsys, files):
    status, out, err = run(capsys, "info {tiny} --bogus", files)
    assert status == 2 and err == "routelab info: unrecognized arguments: --bogus\n"
    status, out, err = run(capsys, "route {tiny} --from 1", files, "--json")
    assert status == 2 and "--to" in json.loads(out)["error"]


def _broken_run(workspace, params, ctx):
    return workspace.graph.head(3)          # a bug: an array is not callable


def test_a_bug_is_an_internal_error_and_debug_shows_its_traceback(capsys, files, monkeypatch):
    from engine import capabilities
    cap = capabilities.get("info")
    monkeypatch.setitem(capabilities._registry, "info",
                        capabilities.Capability(**{**cap.__dict__, "run": _broken_run}))
    status, out, err = run(capsys, "info {tiny}", files)
    assert status == 1 and err.count("\n") == 1
    assert err.startswith("routelab info: internal error: TypeError: 'numpy.ndarray' object is not callable")
    assert "(run with --debug for the traceback)" in err and "Traceback" not in err
    status, out, err = run(capsys, "info {tiny} --debug", files)
    assert status == 1 and "Traceback (most recent call last)" in err and "_broken_run" in err
    assert err.splitlines()[-1].startswith("routelab info: internal error: TypeError")


def test_a_missing_key_says_which_and_where(capsys, files, monkeypatch):
    from engine import capabilities
    cap = capabilities.get("info")

    def lookup(workspace, params, ctx):
        return {}["metric"]
    monkeypatch.setitem(capabilities._registry, "info",
                        capabilities.Capability(**{**cap.__dict__, "run": lookup}))
    status, out, err = run(capsys, "info {tiny}", files)
    assert status == 1 and "missing key 'metric' in lookup (test_cli_errors.py:" in err


def test_no_siblings_is_a_flag_of_every_command(capsys, files):
    for line in ("info {tiny}", "route {tiny} --from 1 --to 3 --backend cpu",
                 "contract {tiny} --K 2 --backend cpu"):
        status, out, err = run(capsys, line, files, "--no-siblings")
        assert status == 0, err


def test_a_closed_pipe_ends_the_command_quietly(files):
    """`routelab info FILE | head`: the reader went away; no BrokenPipeError, no noise."""
    read, write = os.pipe()
    os.close(read)                          # every write to the pipe fails
    try:
        proc = subprocess.run([sys.executable, "-m", "app.main", "contract", files["grid"], "--K", "64",
                               "--backend", "cpu"], stdout=write, stderr=subprocess.PIPE, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    finally:
        os.close(write)
    assert proc.returncode == 0 and proc.stderr == b""


def test_head_in_a_shell_pipeline(files):
    proc = subprocess.run(f"{sys.executable} -m app.main contract {files['grid']} --K 64 --backend cpu | head -1",
                          shell=True, capture_output=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 1
    assert b"Error" not in proc.stderr and b"Traceback" not in proc.stderr


def test_a_mismatching_sibling_is_announced_and_skipped(capsys, tmp_path):
    """A .co beside the graph that belongs to another graph: one line on stderr, the
    command still answers; with --no-siblings it is not even looked at."""
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    (tmp_path / "tiny.co").write_text("p aux sp co 9\nv 1 1 1\n")
    status, out, err = run(capsys, "route {tiny} --from 1 --to 3", {"tiny": str(gr)})
    assert status == 0 and "sibling file not used" in err and "tiny.co" in err
    status, out, err = run(capsys, "route {tiny} --from 1 --to 3", {"tiny": str(gr)}, "--no-siblings")
    assert status == 0 and err == ""
