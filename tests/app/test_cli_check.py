"""routelab check FILE... [graph files]: every check of RouteLab files in full, what was
checked and the time; a damaged file ends it with the file's name (exit status 1)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.main import main
from engine.ch import contract
from engine.core.backend import cpu_backend
from engine.crp.partition.nested import partition_graph
from engine.csp.hierarchy.file import save_pareto_hierarchy
from engine.generate.network import generate_road_network
from engine.io.cache import save_cache
from engine.workspace import Workspace
from tests.hierarchy_damage import droppable, edited, pareto_droppable, pareto_edited


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("check")
    g = generate_road_network(2_000, seed=12)
    h = contract(g, "distance", K=64, backend=cpu_backend())
    p = Workspace(g, cpu_backend()).csp_hierarchy("distance", "travel_time")   # on its csp graph
    rng = np.random.default_rng(0)
    return {"graph": str(save_cache(g, folder / "g.rlg")),
            "rlh": str(h.save(folder / "g.rlh")),
            "rlb": str(save_pareto_hierarchy(p, folder / "g.rlb")),
            "rlp": str(partition_graph(g, (4, 7)).save(folder / "g.rlp")),
            "bad_rlh": str(edited(h, rng.choice(droppable(h), 200, replace=False))
                           .save(folder / "bad.rlh")),
            "bad_rlb": str(save_pareto_hierarchy(
                pareto_edited(p, rng.choice(pareto_droppable(p), 200, replace=False)),
                folder / "bad.rlb"))}


def test_every_file_is_checked_in_full_and_timed(capsys, files):
    argv = ["check", files["rlh"], files["rlb"], files["rlp"], files["graph"], "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    kinds = [e["kind"] for e in r["checked"]]
    assert r["ok"] and kinds == ["graph", "contraction hierarchy", "bi-criteria hierarchy",
                                 "CRP partition"]
    for e in r["checked"]:
        assert e["seconds"] >= 0 and e["checks"]
    for e in r["checked"][1:3]:
        assert e["against_graph"] and "witness check" in e["checks"]
        assert "pairs around contracted nodes proved" in e["summary"]


def test_text_says_what_was_checked(capsys, files):
    assert main(["check", files["rlh"]]) == 0
    out = capsys.readouterr().out
    assert f"{files['rlh']}: contraction hierarchy, ok in" in out
    assert "witness check: no shortcut missing" in out and " ms" in out


@pytest.mark.parametrize("name", ["bad_rlh", "bad_rlb"])
def test_missing_shortcuts_fail_naming_the_file(capsys, files, name):
    assert main(["check", files[name]]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"routelab check: {files[name]}: a shortcut is missing")


def test_a_partition_needs_its_graph(capsys, files):
    assert main(["check", files["rlp"]]) == 1
    assert "checked against its graph" in capsys.readouterr().err


def test_in_the_window_it_checks_what_is_loaded(files):
    """Tools ▸ Check loaded files: no files, the workspace's graph and hierarchies."""
    from engine.capabilities import get
    from engine.core.jobs import JobContext
    from engine.io import load
    cap = get("check")
    ws = Workspace(load([files["graph"]]), cpu_backend())
    ws.load_hierarchy(files["rlh"])
    ws.load_csp_hierarchy(files["rlb"])
    text = cap.to_text(cap.to_json(ws, {}, cap.run(ws, cap.defaults(), JobContext())))
    assert text.count("ok in") == 3 and text.count("pairs around contracted nodes proved") == 2
