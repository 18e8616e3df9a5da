"""`routelab info` starts fast because it imports only what it needs: not Numba, SciPy,
Qt or the GPU libraries (the wall time itself is a benchmark: scripts/bench.py --only info)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import sys, json
from app.main import main
main(["info", sys.argv[1], "--json"])
heavy = ["numba", "scipy", "PySide6", "pyqtgraph", "cupy", "osmium", "shapely"]
print(json.dumps([m for m in heavy if m in sys.modules]))
"""


def test_info_imports_no_heavy_library(tmp_path):
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 3\na 1 2 5\na 2 3 7\na 3 1 2\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(gr)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert json.loads(out[0])["nodes"] == 3
    assert json.loads(out[-1]) == []


ROUTE_PROBE = """
import sys, json
from app.main import main
main(["route", sys.argv[1], "--from", "1", "--to", "3", "--json"])
heavy = ["numba", "PySide6", "pyqtgraph", "cupy", "osmium", "shapely", "engine.crp"]
print(json.dumps([m for m in heavy if m in sys.modules]))
"""


def test_a_plain_route_from_a_cache_loads_no_numba(tmp_path):
    """`routelab route G.rlg` where turns change nothing (DIMACS): SciPy's compiled
    Dijkstra, no Numba, no CRP decoder (issue #36: a one-shot route in about 0.4 s)."""
    from app.main import main
    gr, rlg = tmp_path / "tiny.gr", tmp_path / "tiny.rlg"
    gr.write_text("p sp 3 3\na 1 2 5\na 2 3 7\na 1 3 20\n")
    assert main(["cache", str(gr), "--out", str(rlg)]) == 0
    out = subprocess.run([sys.executable, "-c", ROUTE_PROBE, str(rlg)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    answer = json.loads(out[0])
    assert (answer["distance"], answer["path"], answer["method"]) == (12, [1, 2, 3], "dijkstra_scipy")
    assert json.loads(out[-1]) == []
