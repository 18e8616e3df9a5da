"""The command line on the bounded inputs of issue 35: each is one line naming the file
at fault and status 1, never "internal error" (the engine's side:
tests/engine/test_bounded_inputs.py and tests/engine/test_isochrone_geometry.py)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from app.cli import main
from engine.io import load
from engine.io.cache import save_cache
from tests.conftest import NY_D, need
from tests.engine.test_bounded_inputs import _random_partition, rlg, small  # noqa: F401 (fixtures)
from tests.engine.test_isochrone_geometry import MONACO, monaco  # noqa: F401 (a fixture)


def test_monaco_mixed_dimension_case(monaco):
    """The audit's case: Monaco, cut-offs 30,60 (metres and deciseconds), sources whose
    second band left a ring of too few points after the change back to lon/lat."""
    for node, metric, flags in ((1834283340, "distance", ()), (1834283340, "distance",
                                ("--node-based",)), (25197970, "travel_time", ()),
                                (21911863, "travel_time", ("--node-based",))):
        assert main(["isochrone", str(MONACO), "--from", str(node), "--cutoffs", "30,60",
                     "--metric", metric, *flags]) == 0


def test_too_many_cutoffs_on_the_command_line(monaco, capsys):
    cutoffs = ",".join(str(10 * i) for i in range(1, 201))
    assert main(["isochrone", str(MONACO), "--from", "21912089", "--cutoffs", cutoffs]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("routelab isochrone: at most 32 cut-offs are allowed (got 200): each one is "
                   "a band of the map and a union of its roads"), err


def test_huge_buffer_on_the_command_line(monaco, capsys):
    assert main(["isochrone", str(MONACO), "--from", "21912089", "--cutoffs", "30,60",
                 "--buffer", "1e12"]) == 1
    err = capsys.readouterr().err
    assert "the buffer width must be a positive number of metres, at most 10,000 (got 1e+12)" in err


@pytest.mark.parametrize("text,shown", [("1e30", "1e+30"), ("1099511627776", "1099511627776"),
                                        ("-5", "-5"), ("4294967296", "4294967296")])
def test_seed_on_the_command_line(small, tmp_path, capsys, text, shown):
    graph_file = save_cache(small, tmp_path / "g.rlg")
    assert main(["partition", str(graph_file), "--seed", text]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("routelab partition: the seed must be a whole number in 0..2,147,483,647 "
                   f"(METIS's range), got {shown}"), err


@pytest.mark.parametrize("array,value", [("attr/road_class", 40), ("attr/length_m", np.nan),
                                         ("geometry_lonlat", np.nan)])
def test_the_cli_names_the_cache_not_its_source_or_the_decoder(rlg, tmp_path, capsys, array, value):
    """The audit's vague messages: a bad road class was blamed on the .pbf a cache came
    from, a NaN length on car-fastest.toml, NaN geometry ended in a JSON error."""
    bad = rlg[array].copy()
    bad.flat[7] = value
    path = tmp_path / "bad.rlg"
    with open(path, "wb") as f:
        np.savez(f, **{**rlg, array: bad})
    geojson = tmp_path / "r.geojson"
    assert main(["route", str(path), "--from", "0", "--to", "400", "--decoder", "car-fastest",
                 "--geojson", str(geojson)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"routelab route: {path}: "), err
    assert "internal error" not in err and "toml" not in err and "JSON" not in err
    assert not geojson.exists()


def test_ny_with_random_cells_is_refused_up_front(tmp_path, monkeypatch, capsys):
    """The audit's case: a valid NY partition with random cells asked for 361 GiB and
    failed as "out of memory"; now refused before anything is built, within seconds."""
    ny = load([need(NY_D)], siblings=False)
    rlp = _random_partition(ny, (5, 8, 11, 14)).save(tmp_path / "ny-random.rlp")
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "64G")
    started = time.perf_counter()
    assert main(["customize", str(NY_D), "--no-siblings", "--partition", str(rlp),
                 "--decoder", "dimacs-distance"]) == 1
    assert time.perf_counter() - started < 10
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"routelab customize: {rlp}: the CRP overlay of this partition ("), err
    assert " GiB, budget 64.0 GiB (the memory budget" in err and "out of memory" not in err
