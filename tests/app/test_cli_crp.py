"""The CRP commands: partition, customize with a decoder, and route with
turn costs from the command line; the routes themselves are tested by
tests/engine/test_crp.py."""
from __future__ import annotations

import contextlib
import io
import json

from app.cli import main
from engine.generate.network import generate_road_network
from engine.io.cache import save_cache


def run_cli(*args) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code in (0, None), out.getvalue()
    return json.loads(out.getvalue()) if "--json" in args else {"text": out.getvalue()}


def test_cli_partition_customize_route(tmp_path):
    g = generate_road_network(4_000, seed=3)
    graph_file = tmp_path / "g.rlg"
    save_cache(g, graph_file)
    rlp = tmp_path / "p.rlp"
    run_cli("partition", str(graph_file), "--levels", "6,9", "--out", str(rlp))
    info = run_cli("info", str(graph_file), "--partition", str(rlp), "--json")
    assert info["partition"]["cell_sizes_log2"][-2:] == [6, 9]
    custom = run_cli("customize", str(graph_file), "--partition", str(rlp), "--decoder",
                     "delivery", "--json")
    assert custom["decoder"] == "delivery" and len(custom["levels"]) == len(info["partition"]["cells"])
    assert not (tmp_path / "report.json").exists()
    r = run_cli("route", str(graph_file), "--partition", str(rlp), "--decoder", "delivery",
                "--from", "3", "--to", "3900", "--json")
    assert r["method"] == "crp" and r["unit"] == "ds"
    assert sum(r["turns"].values()) == r["arcs"] - 1
    text = run_cli("route", str(graph_file), "--decoder", "car-fastest", "--from", "3", "--to", "3900")
    assert "CRP query" in text["text"] and "turn costs paid" in text["text"]
