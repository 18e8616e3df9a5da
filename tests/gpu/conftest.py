"""What every GPU test shares: the ``gpu`` marker on the whole folder, the CuPy
backend (or a skip), and the data the GPU tests load the way the device machine has it.

Every test under tests/gpu needs CuPy and a CUDA device: the marker is set here, not
in each file, so ``pytest -m gpu tests/gpu`` (scripts/gpu_check) selects them all and
tests/conftest.py skips them all where there is no GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import PORTO, need

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)      # before tests/conftest.py skips the gpu-marked ones
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(scope="module")
def gpu():
    """The CuPy backend on device 0 (one per test module); skips with the reason when
    there is none."""
    from engine.core.backend import BackendError, gpu_backend
    try:
        return gpu_backend()
    except BackendError as e:
        pytest.skip(f"needs CuPy and a CUDA device: {e}")


@pytest.fixture(scope="module")
def porto():
    """Porto from its graph cache beside the extract when there (the device machine has
    no osmium: scripts/gpu_check carries it as a cache), else the extract itself."""
    from engine.io import load
    cached = PORTO.parent / "porto_portugal.rlg"
    return load([cached if cached.exists() else need(PORTO)])


@pytest.fixture(scope="module")
def gen20k_overlay():
    """The generated 20,000-node network (seed 5) as a CRP overlay on the partition saved
    as gen20k-s5, banned turns included (one per test module)."""
    from engine.crp.partition.overlay import Overlay
    from engine.generate.network import generate_road_network
    from tests.gpu.crp_partitions import partition_for
    g = generate_road_network(20_000, seed=5)
    o = Overlay(g, partition_for(g, "gen20k-s5"))
    assert o.turns.banned > 0
    return o
