"""The command line obeys the turn rules by default (issue #34), on a small extract made
like the audit's Bayreuth case: the short way from 1 to 3 is a banned left turn at 2,
the legal one goes round by 4. ``--node-based`` is the labelled exception."""
from __future__ import annotations

import json

import pytest

from app.main import main
from tests.app.helpers import write_banned_left_osm

BANNED = [1, 2, 3]          # east along 1-2, then the banned left turn north to 3
LEGAL = [1, 2, 4, 3]        # on east to 4, then north and back west to 3


@pytest.fixture()
def extract(tmp_path):
    return str(write_banned_left_osm(tmp_path))


def run_json(capsys, *argv) -> dict:
    capsys.readouterr()
    assert main(list(argv) + ["--json", "--backend", "cpu"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plain_route_avoids_the_banned_turn(capsys, extract):
    r = run_json(capsys, "route", extract, "--from", "1", "--to", "3")
    assert r["path"] == LEGAL and r["turn_aware"] is True and r["restrictions"] == 1
    assert r["method_label"] == "turn-aware bidirectional Dijkstra"
    node_based = run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--node-based")
    assert node_based["path"] == BANNED and node_based["turn_aware"] is False
    assert "ignores turns" in node_based["method_label"]


def test_human_output_says_what_the_model_did(capsys, extract):
    assert main(["route", extract, "--from", "1", "--to", "3", "--backend", "cpu"]) == 0
    assert "1 turn restrictions obeyed" in capsys.readouterr().out
    assert main(["route", extract, "--from", "1", "--to", "3", "--node-based"]) == 0
    assert "node-based: ignores the 1 turn restrictions" in capsys.readouterr().out


def test_route_on_a_turn_aware_hierarchy(capsys, extract, tmp_path):
    out = str(tmp_path / "h.rlh")
    c = run_json(capsys, "contract", extract, "--out", out)
    assert c["turn_aware"] is True
    r = run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--hierarchy", out)
    assert r["path"] == LEGAL and r["method"] == "ch" and r["method_label"] == "turn-aware CH query"


def test_hierarchy_of_the_other_model_is_refused(capsys, extract, tmp_path):
    node_based, turn_aware = str(tmp_path / "n.rlh"), str(tmp_path / "t.rlh")
    run_json(capsys, "contract", extract, "--node-based", "--out", node_based)
    run_json(capsys, "contract", extract, "--out", turn_aware)
    assert main(["route", extract, "--from", "1", "--to", "3", "--hierarchy", node_based]) == 1
    assert "node-based: it ignores the graph's 1 turn restrictions" in capsys.readouterr().err
    assert main(["route", extract, "--from", "1", "--to", "3", "--hierarchy", turn_aware,
                 "--node-based"]) == 1
    assert "turn-aware; --node-based needs" in capsys.readouterr().err
    r = run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--hierarchy", node_based,
                 "--node-based")
    assert r["path"] == BANNED


def test_cost_budgeted_path_avoids_the_banned_turn(capsys, extract):
    r = run_json(capsys, "csp", extract, "--from", "1", "--to", "3", "--budget", "100000")
    assert r["path"] == LEGAL and r["turn_aware"] is True


def test_tree_then_the_path_to_that_node(capsys, extract, tmp_path):
    r = run_json(capsys, "tree", extract, "--from", "1", "--path-to", "3")
    assert r["path"] == LEGAL and r["turn_aware"] is True
    plain = run_json(capsys, "route", extract, "--from", "1", "--to", "3")
    assert r["path_distance"] == plain["distance"]


def test_crp_route_under_the_default_decoder_agrees(capsys, extract):
    plain = run_json(capsys, "route", extract, "--from", "1", "--to", "3")
    crp = run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--decoder", "default")
    assert crp["path"] == LEGAL and crp["distance"] == plain["distance"]


def test_exports_and_service_areas_say_they_obey_the_turns(capsys, extract, tmp_path):
    gj = tmp_path / "r.geojson"
    run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--geojson", str(gj))
    props = json.loads(gj.read_text(encoding="utf-8"))["features"][0]["properties"]
    assert props["turn_aware"] is True and props["restrictions"] == 1
    run_json(capsys, "route", extract, "--from", "1", "--to", "3", "--geojson", str(gj),
             "--node-based")
    assert json.loads(gj.read_text(encoding="utf-8"))["features"][0]["properties"][
        "turn_aware"] is False
    iso = run_json(capsys, "isochrone", extract, "--from", "1", "--cutoffs", "100,300")
    assert iso["turn_aware"] is True and iso["restrictions"] == 1
