"""Shared fixtures: where the shared data lives, and skipping GPU tests without a GPU."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# the witness checks' "proved before" markers (engine.io.proven) of this run stay in it
os.environ.setdefault("ROUTELAB_CACHE_DIR", tempfile.mkdtemp(prefix="routelab-tests-"))

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ROUTELAB_DATA", ROOT.parent / "shared" / "data"))
NY_D = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
NY_T = DATA / "dimacs" / "USA-road-t.NY.gr.gz"
NY_CO = DATA / "dimacs" / "USA-road-d.NY.co.gz"
ROME = DATA / "dimacs" / "rome99.gr"
PORTO = DATA / "osm" / "porto_portugal.osm.pbf"
NY_CSP_QUERIES = ROOT / "tests" / "data" / "csp_ny_queries.json"   # Vine's Q1-Q3 with answers


def need(path: Path) -> Path:
    """Skip the calling test, with the reason, when a shared data file is absent."""
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (see shared/data/README.md)")
    return path


def _gpu_available() -> bool:
    try:
        from engine.core.backend import gpu_backend
        gpu_backend()
        return True
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and not _gpu_available():
        skip = pytest.mark.skip(reason="needs CuPy and a CUDA device (run scripts/gpu_check there)")
        for item in gpu_items:
            item.add_marker(skip)
    # the 10,000-pair sweeps keep the suite past ~15 min on 2 cores (a smaller sweep
    # of the same code runs in it): they run on request, e.g. on the device machine
    if os.environ.get("ROUTELAB_HEAVY") != "1":
        skip = pytest.mark.skip(reason="a heavy sweep: ROUTELAB_HEAVY=1 runs it")
        for item in items:
            if "heavy" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def ny():
    from engine.io import load
    need(NY_D)
    return load([NY_D])


@pytest.fixture(scope="session")
def rome():
    from engine.io import load
    return load([need(ROME)])


@pytest.fixture(scope="session")
def ny_queries() -> dict:
    """NY's Q1-Q3 (20 each) with the answers of the reference's compiled twin, stored
    when tests/data/csp_ny_queries.json was written (scripts/csp_queries.py --reference
    --compiled --reference-sets Q1,Q2,Q3)."""
    import json
    return json.loads(NY_CSP_QUERIES.read_text())


@pytest.fixture(scope="session")
def rome_csp(rome):
    """Rome99 for cost-budgeted paths: the graph with a synthetic travel time as metric
    "synthetic" (engine.csp.query_sets.synthetic_cost), its one length metric's name, and
    Vine's query sets Q1-Q3 (seed 0)."""
    from engine.csp.query_sets import build_query_sets, with_cost_metric
    length = rome.metric_names[0]
    sets = build_query_sets(rome, length, "synthetic", seed=0)
    return with_cost_metric(rome, "synthetic", length), length, sets


@pytest.fixture(scope="session")
def save_graph(tmp_path_factory):
    """save_graph(graph, folder) -> the path, as text, of ``graph`` saved as a graph cache
    (g.rlg) in a fresh folder named after ``folder``: the file the commands take."""
    def save(graph, folder: str) -> str:
        from engine.io.cache import save_cache
        path = tmp_path_factory.mktemp(folder) / "g.rlg"
        save_cache(graph, path)
        return str(path)
    return save
