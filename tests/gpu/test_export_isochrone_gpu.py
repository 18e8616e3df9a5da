"""Service areas and tree exports with the GPU backend: the same files as the CPU
(the trees are exact on both, so the areas and the CSV rows are equal), by direct SSSP
and by PHAST (run on the device; needs shapely there)."""
from __future__ import annotations

import json

import pytest

from app import cli
from tests.conftest import NY_CO, NY_D, NY_T, need

shapely = pytest.importorskip("shapely")
MIDTOWN = "187538"


def run(*args) -> None:
    assert cli.main(list(args)) == 0


def areas(path) -> list:
    return [shapely.geometry.shape(f["geometry"]) for f in json.loads(path.read_text())["features"]]


def test_new_york_areas_and_tree_csv_equal_the_cpu(tmp_path):
    files = [str(need(NY_D)), str(need(NY_T)), str(need(NY_CO))]
    common = ["--from", MIDTOWN, "--metric", "travel_time", "--cutoffs", "5,10,15min"]
    for backend in ("cpu", "gpu"):
        run("isochrone", *files, *common, "--backend", backend,
            "--geojson", str(tmp_path / f"{backend}.geojson"))
        run("tree", *files, "--from", MIDTOWN, "--metric", "travel_time", "--backend", backend,
            "--csv", str(tmp_path / f"{backend}.csv"))
    cpu, gpu = areas(tmp_path / "cpu.geojson"), areas(tmp_path / "gpu.geojson")
    assert len(cpu) == len(gpu) == 3
    for a, b in zip(cpu, gpu):
        assert shapely.symmetric_difference(a, b).area <= 1e-9 * a.area
    assert (tmp_path / "cpu.csv").read_text() == (tmp_path / "gpu.csv").read_text()


def test_new_york_areas_by_phast_equal_the_direct_tree(tmp_path):
    files = [str(need(NY_D)), str(need(NY_T)), str(need(NY_CO))]
    hierarchy = tmp_path / "ny-time.rlh"
    run("contract", *files, "--metric", "travel_time", "--backend", "gpu", "--out", str(hierarchy))
    common = ["--from", MIDTOWN, "--cutoffs", "10min", "--backend", "gpu"]
    run("isochrone", *files, *common, "--metric", "travel_time", "--geojson", str(tmp_path / "direct.geojson"))
    run("isochrone", *files, *common, "--hierarchy", str(hierarchy), "--geojson", str(tmp_path / "phast.geojson"))
    (direct,), (phast,) = areas(tmp_path / "direct.geojson"), areas(tmp_path / "phast.geojson")
    assert shapely.symmetric_difference(direct, phast).area <= 1e-9 * direct.area
