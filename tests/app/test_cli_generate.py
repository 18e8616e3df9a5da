"""`routelab generate --nodes N [--seed S] --out FILE` (issue #37, item 1): the file's
name picks the format, the written files load to the generated network, and bad
arguments get one clear line and status 1 (2 for bad usage) before any work."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.main import main
from engine.generate.network import generate_road_network
from engine.io import load


def generate(capsys, *argv) -> dict:
    assert main(["generate", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def refused(capsys, *argv, status: int = 1) -> str:
    assert main(["generate", *map(str, argv)]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err, err
    return err


def test_an_rlg_is_the_generated_network(capsys, tmp_path):
    out = tmp_path / "net.rlg"
    r = generate(capsys, "--nodes", 3000, "--seed", 4, "--out", out)
    g, want = load([out]), generate_road_network(3000, seed=4)
    assert (r["nodes"], r["arcs"], r["seed"]) == (3000, want.num_arcs, 4)
    assert r["files"] == [{"path": str(out), "bytes": out.stat().st_size}]
    assert r["banned_turns"] == len(want.turn_restrictions) > 0
    assert np.array_equal(g.head, want.head) and np.array_equal(g.metrics["distance"],
                                                                 want.metrics["distance"])


def test_a_dimacs_name_writes_both_metrics_and_the_coordinates(capsys, tmp_path):
    r = generate(capsys, "--nodes", 2000, "--out", tmp_path / "road-d.g.gr")
    names = [f["path"].rsplit("/", 1)[1] for f in r["files"]]
    assert names == ["road-d.g.gr", "road-t.g.gr", "road-d.g.co"]
    g = load([tmp_path / "road-t.g.gr"])            # either metric finds the others
    assert set(g.metrics) == {"distance", "travel_time"} and g.has_coordinates
    assert g.num_nodes == 2000


def test_the_text_says_what_was_written(capsys, tmp_path):
    assert main(["generate", "--nodes", "1e3", "--out", str(tmp_path / "n.gr")]) == 0
    out = capsys.readouterr().out
    assert "generated 1,000 nodes" in out and "DIMACS text written" in out
    assert str(tmp_path / "n.gr") in out and str(tmp_path / "n.co") in out


def test_an_osm_pbf_is_written(capsys, tmp_path):
    pytest.importorskip("osmium")
    out = tmp_path / "g.osm.pbf"
    r = generate(capsys, "--nodes", 500, "--out", out)
    assert r["format"] == "OpenStreetMap PBF" and out.stat().st_size > 0


@pytest.mark.parametrize("nodes, says", [("10", "--nodes: a generated network has 50 to"),
                                         ("-5", "not -5"), ("1.5", "not a whole number")])
def test_too_few_nodes_are_refused(capsys, tmp_path, nodes, says):
    err = refused(capsys, "--nodes", nodes, "--out", tmp_path / "x.rlg")
    assert says in err and not (tmp_path / "x.rlg").exists()


def test_an_unknown_extension_is_refused_with_the_choices(capsys, tmp_path):
    err = refused(capsys, "--nodes", 1000, "--out", tmp_path / "net.txt")
    assert "net.txt: unknown format" in err and ".rlg" in err and ".osm.pbf" in err
    assert not list(tmp_path.iterdir())


def test_an_output_that_is_an_input_is_refused(capsys, tmp_path):
    source = tmp_path / "in.rlg"
    source.write_bytes(b"an input")
    err = refused(capsys, source, "--nodes", 1000, "--out", source)
    assert "an input (inputs are never written)" in err
    assert source.read_bytes() == b"an input"


def test_files_are_not_read(capsys, tmp_path):
    source = tmp_path / "in.rlg"
    source.write_bytes(b"an input")
    err = refused(capsys, source, "--nodes", 1000, "--out", tmp_path / "out.rlg")
    assert "generate reads no files" in err and not (tmp_path / "out.rlg").exists()


def test_a_dimacs_sibling_that_cannot_be_written_is_refused_first(capsys, tmp_path):
    (tmp_path / "net.co").mkdir()                     # the .co would go where a folder is
    err = refused(capsys, "--nodes", 1000, "--out", tmp_path / "net.gr")
    assert "net.co" in err and "only a regular file" in err
    assert not (tmp_path / "net.gr").exists()


def test_over_the_memory_budget_is_refused_before_generating(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "100M")
    err = refused(capsys, "--nodes", 24_000_000, "--out", tmp_path / "big.rlg")
    assert "generating a network of 24,000,000 nodes needs" in err and "budget" in err


def test_missing_arguments_are_bad_usage(capsys, tmp_path):
    assert "--nodes" in refused(capsys, "--out", tmp_path / "x.rlg", status=2)
    assert "--out" in refused(capsys, "--nodes", 100, status=2)


def test_check_without_files_says_so(capsys):
    assert main(["check"]) == 1
    assert "no file given" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["n.rlg", "n.gr", "n.osm.pbf"])
def test_the_same_arguments_give_the_same_bytes(capsys, tmp_path, name):
    if name.endswith(".pbf"):
        pytest.importorskip("osmium")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        generate(capsys, "--nodes", 1500, "--seed", 3, "--out", tmp_path / folder / name)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
    for p in (tmp_path / "a").iterdir():
        assert p.read_bytes() == (tmp_path / "b" / p.name).read_bytes(), p.name


def test_progress_is_told_and_cancel_stops_it(tmp_path):
    from engine.capabilities import get
    from engine.core.jobs import JobContext
    from engine.core.progress import Cancelled, CancelToken
    said, token = [], CancelToken()
    params = {"nodes": 3000, "seed": 1, "out": str(tmp_path / "p.gr")}
    get("generate").run(None, params, JobContext(progress=lambda f, m: said.append((f, m))))
    fractions = [f for f, _ in said]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] < 1.0
    assert any("generating 3,000 nodes: shape nodes" in m for _, m in said)
    assert any(m == "writing p.co" for _, m in said)

    def cancel_at_shape_nodes(f, m):
        if "shape nodes" in m:
            token.cancel()

    out = tmp_path / "c.rlg"
    with pytest.raises(Cancelled):
        get("generate").run(None, {**params, "out": str(out)},
                            JobContext(progress=cancel_at_shape_nodes, cancel=token))
    assert not out.exists()
