"""An installable package (issue #36): the wheel built from the project holds
everything the program reads at run time (the decoders, the CUDA kernels), and,
installed outside the checkout, `routelab customize` finds a shipped decoder and
`routelab route` runs on a generated graph.

The wheel goes into a folder of its own; its dependencies come from this test's
environment as a plain path (no .pth files: the checkout's editable install stays
out), and the commands run in a temporary folder with ``-S``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(out.glob("routelab-*.whl"))
    target = out / "site"
    with zipfile.ZipFile(wheel) as z:       # a wheel is a zip: unpacking it installs it
        z.extractall(target)
    return wheel, target


def test_the_wheel_holds_the_decoders_and_kernels(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.name for p in (ROOT / "resources" / "decoders").glob("*.toml"))
    assert sorted(Path(n).name for n in names if n.startswith("resources/decoders/")) == shipped
    kernels = sorted(p.name for p in (ROOT / "engine" / "kernels").glob("*.cu"))
    assert set(kernels) <= {Path(n).name for n in names if n.startswith("engine/kernels/")}
    assert not any(n.startswith(("tests/", "scripts/")) for n in names)


def run_installed(target: Path, cwd: Path, *argv) -> subprocess.CompletedProcess:
    deps = sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), *deps])}
    code = "import sys; from app.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-S", "-c", code, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_installed_outside_the_checkout_it_customizes_and_routes(installed, tmp_path):
    _, target = installed
    where = run_installed(target, tmp_path, "info", "--help")
    assert where.returncode == 0, where.stderr
    probe = subprocess.run(
        [sys.executable, "-S", "-c", "import engine, resources; print(engine.__file__); "
         "print(resources.__file__)"], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(target)})
    assert all(line.startswith(str(target)) for line in probe.stdout.split()), probe.stdout
    graph = tmp_path / "g.rlg"
    made = subprocess.run(
        [sys.executable, "-S", "-c",
         "import sys; from engine.generate.network import generate_road_network; "
         "from engine.io.cache import save_cache; "
         "save_cache(generate_road_network(400, seed=3), sys.argv[1])", str(graph)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(target), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])})
    assert made.returncode == 0, made.stderr
    customized = run_installed(target, tmp_path, "customize", str(graph), "--decoder",
                               "car-fastest", "--backend", "cpu", "--json")
    assert customized.returncode == 0, customized.stderr
    assert json.loads(customized.stdout)["decoder"] == "car-fastest"
    routed = run_installed(target, tmp_path, "route", str(graph), "--from", "1", "--to", "300",
                           "--json")
    assert routed.returncode == 0, routed.stderr
    assert json.loads(routed.stdout)["arcs"] > 0
