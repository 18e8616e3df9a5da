"""Headless commands: file ids in and out, JSON, errors on stderr with exit 1."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from app.main import main
from tests.conftest import ROME, need

GR = "p sp 4 4\na 1 2 5\na 2 3 7\na 1 3 20\na 4 1 1\n"


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.gr"
    path.write_text(GR)
    return str(path)


def run_json(capsys, *argv):
    assert main(list(argv) + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_info(capsys, tiny):
    info = run_json(capsys, "info", tiny)
    assert (info["nodes"], info["arcs"], info["coordinates"]) == (4, 4, False)
    assert info["metrics"]["weight"] == {"min": 1, "max": 20, "unit": ""}


def test_route_uses_file_ids(capsys, tiny):
    r = run_json(capsys, "route", tiny, "--from", "1", "--to", "3", "--backend", "cpu")
    assert r["distance"] == 12 and r["path"] == [1, 2, 3] and r["arcs"] == 2
    assert r["compute_ms"] >= 0


def test_human_output(capsys, tiny):
    assert main(["route", tiny, "--from", "4", "--to", "3", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "weight from 4 to 3: 13" in out and "path: 4 1 2 3" in out


@pytest.mark.parametrize("argv, message", [
    (["route", "{f}", "--from", "1", "--to", "9"], "unknown node id 9"),
    (["route", "{f}", "--from", "3", "--to", "4"], "node 4 cannot be reached from node 3"),
    (["route", "{f}", "--from", "1", "--to", "2", "--metric", "time"], "unknown metric 'time'"),
    (["info", "/no/such/file.gr"], "no such file"),
])
def test_errors_go_to_stderr_with_status_1(capsys, tiny, argv, message):
    assert main([a.replace("{f}", tiny) for a in argv]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_entry_point_runs_without_qt(tiny):
    code = ("import sys; from app.main import main; rc = main(['info', sys.argv[1]]); "
            "assert 'PySide6' not in sys.modules; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code, tiny], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "4 nodes, 4 arcs" in done.stdout


def test_rome_route(capsys):
    r = run_json(capsys, "route", str(need(ROME)), "--from", "1", "--to", "3000")
    assert r["distance"] > 0 and r["path"][0] == 1 and r["path"][-1] == 3000


def test_tree_writes_file_ids(capsys, tiny, tmp_path):
    out = tmp_path / "tree.npz"
    r = run_json(capsys, "tree", tiny, "--from", "1", "--backend", "cpu", "--out", str(out))
    assert (r["reached"], r["nodes"], r["max_distance"]) == (3, 4, 12)
    with np.load(out) as z:
        assert z["node_id"].tolist() == [1, 2, 3, 4]
        assert z["distance"].tolist() == [0, 5, 12, -1]
        assert z["parent"].tolist() == [-1, 1, 2, -1]


@pytest.mark.parametrize("method", ["near_far", "kstep", "bellman_ford"])
def test_tree_methods_agree(capsys, tiny, method):
    r = run_json(capsys, "tree", tiny, "--from", "4", "--method", method, "--backend", "cpu")
    assert (r["reached"], r["max_distance"], r["method"]) == (4, 13, method)


def test_tree_unknown_source(capsys, tiny):
    assert main(["tree", tiny, "--from", "77"]) == 1
    assert "unknown node id 77" in capsys.readouterr().err


def test_contract_then_query_the_hierarchy(capsys, tmp_path):
    rome = str(need(ROME))
    out = tmp_path / "rome.rlh"
    r = run_json(capsys, "contract", rome, "--K", "64", "--backend", "cpu", "--out", str(out))
    assert r["summary"]["levels"] == len(r["iterations"]) > 0 and out.exists()
    plain = run_json(capsys, "route", rome, "--from", "1", "--to", "3000", "--backend", "cpu")
    fast = run_json(capsys, "route", rome, "--from", "1", "--to", "3000", "--backend", "cpu",
                    "--hierarchy", str(out))
    assert fast["distance"] == plain["distance"] and fast["method"] == "ch"
    assert plain["method"] == "dijkstra_scipy"     # a one-shot run's plain route: no Numba
    tree = run_json(capsys, "tree", rome, "--from", "1", "--backend", "cpu", "--hierarchy", str(out),
                    "--out", str(tmp_path / "t.npz"))
    assert tree["method"] == "phast" and tree["reached"] > 0


def test_contract_human_output_and_bad_parameters(capsys, tiny):
    assert main(["contract", tiny, "--K", "2", "--backend", "cpu"]) == 0
    assert "contracted in" in capsys.readouterr().out
    assert main(["contract", tiny, "--K", "1", "--backend", "cpu"]) == 1
    assert "K (the core size)" in capsys.readouterr().err


def test_hierarchy_of_another_graph_is_refused(capsys, tiny, tmp_path):
    out = tmp_path / "rome.rlh"
    assert main(["contract", str(need(ROME)), "--K", "64", "--backend", "cpu", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert main(["tree", tiny, "--from", "1", "--backend", "cpu", "--hierarchy", str(out)]) == 1
    assert "belongs to a graph" in capsys.readouterr().err
