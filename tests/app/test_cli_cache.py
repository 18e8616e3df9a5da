"""`routelab cache FILE... --out G.rlg` writes the RouteLab cache headless: loading the
written cache gives the same graph as the files it was made from (every array, the
DIMACS siblings, an OSM extract's attributes, geometry and turn restrictions); --out is
an output, refused before any work when it is an input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.main import main
from engine.io import load
from tests.app.helpers import grid_graph, write_dimacs
from tests.conftest import DATA, need

MONACO = DATA / "osm" / "monaco.osm.pbf"


def same_graph(a, b) -> None:
    """Every array and the metadata of two graphs are equal."""
    for name in ("first_out", "head", "node_id", "lon", "lat", "geometry_first",
                 "geometry_lonlat"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert list(a.metrics) == list(b.metrics) and list(a.arc_attrs) == list(b.arc_attrs)
    for name in a.metrics:
        assert a.metrics[name].dtype == b.metrics[name].dtype
        assert np.array_equal(a.metrics[name], b.metrics[name]), name
    for name in a.arc_attrs:
        assert a.arc_attrs[name].dtype == b.arc_attrs[name].dtype
        assert np.array_equal(a.arc_attrs[name], b.arc_attrs[name]), name
    ra, rb = a.turn_restrictions, b.turn_restrictions
    assert (ra is None) == (rb is None)
    if ra is not None:
        assert np.array_equal(ra.from_arc, rb.from_arc) and np.array_equal(ra.to_arc, rb.to_arc)
    assert (a.metric_units, a.source, a.data_license) == (b.metric_units, b.source, b.data_license)


def cache(capsys, *argv) -> dict:
    assert main(["cache", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_dimacs_cache_round_trips_with_its_coordinates(capsys, tmp_path):
    gr, co = write_dimacs(tmp_path, grid_graph())
    out = tmp_path / "grid.rlg"
    r = cache(capsys, gr, "--out", out)       # the .co beside it is found as a sibling
    assert r["out"] == str(out) and r["bytes"] == out.stat().st_size > 0
    assert (r["nodes"], r["arcs"]) == (grid_graph().num_nodes, grid_graph().num_arcs)
    same_graph(load([out]), load([gr]))
    assert load([out]).has_coordinates


def test_an_osm_cache_round_trips_with_restrictions_and_geometry(capsys, tmp_path):
    source = need(MONACO)
    out = tmp_path / "monaco.rlg"
    cache(capsys, source, "--out", out)
    g = load([out])
    same_graph(g, load([source]))
    assert g.turn_restrictions is not None and g.geometry_first is not None


def test_the_text_says_what_was_written(capsys, tmp_path):
    gr, _ = write_dimacs(tmp_path, grid_graph())
    out = tmp_path / "g.rlg"
    assert main(["cache", str(gr), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"cache written to {out}" in text and "37 nodes" in text


def test_a_route_from_the_cache_is_the_route_from_the_files(capsys, tmp_path):
    gr, _ = write_dimacs(tmp_path, grid_graph())
    out = tmp_path / "g.rlg"
    cache(capsys, gr, "--out", out)
    answers = []
    for source in (gr, out):
        assert main(["route", str(source), "--from", "1", "--to", "30", "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    for key in ("distance", "path", "arcs", "metric"):
        assert answers[0][key] == answers[1][key]


@pytest.mark.parametrize("target", ["graph", "sibling"])
def test_the_cache_never_replaces_an_input(capsys, tmp_path, target):
    gr, co = write_dimacs(tmp_path, grid_graph())
    before = {p: p.read_bytes() for p in (gr, co)}
    out = gr if target == "graph" else co
    assert main(["cache", str(gr), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "an input (inputs are never written)" in err
    assert {p: p.read_bytes() for p in (gr, co)} == before


def test_a_cache_is_not_written_over_itself(capsys, tmp_path):
    gr, _ = write_dimacs(tmp_path, grid_graph())
    out = tmp_path / "g.rlg"
    cache(capsys, gr, "--out", out)
    before = out.read_bytes()
    assert main(["cache", str(out), "--out", str(out)]) == 1
    assert "it is the graph file" in capsys.readouterr().err and out.read_bytes() == before


def test_out_is_required(capsys, tmp_path):
    gr, _ = write_dimacs(tmp_path, grid_graph())
    assert main(["cache", str(gr)]) == 2
    assert "--out" in capsys.readouterr().err
