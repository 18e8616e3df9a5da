"""The csp command: the answer, the Pareto set, the counts and the Lagrangian bound as
text and JSON, readable errors, the bi-criteria hierarchy, and a hierarchy file written
once and reused (each run in a child process, as from the shell). The queries
themselves are tested by tests/engine/test_csp*.py."""
from __future__ import annotations

import json
import subprocess
import sys

from engine.core.backend import cpu_backend
from engine.generate.network import generate_road_network
from engine.workspace import Workspace
from engine.io.cache import save_cache


def cli_case(tmp_path):
    """A saved 2,000-node graph: its turn-aware query (engine.model: the generated network
    bans left turns), the csp arguments from node 3 to 1500,
    the answer without a budget, and a budget halfway between the least cost and the
    shortest path's."""
    g = generate_road_network(2_000, seed=7)
    path = tmp_path / "g.rlg"
    save_cache(g, path)
    q = Workspace(g, cpu_backend()).csp_query("distance", "travel_time")
    top = q.solve(3, 1500, 10**12)
    args = ["csp", str(path), "--from", str(g.node_id[3]), "--to", str(g.node_id[1500])]
    return q, args, top, (top.least_cost + top.shortest_cost) // 2


def test_cli_csp(tmp_path):
    q, args, top, budget = cli_case(tmp_path)
    r = json.loads(cli(*args, "--budget", str(budget), "--pareto", "--json").stdout)
    expected = q.solve(3, 1500, budget)
    assert r["length"] == expected.length and r["cost"] <= budget and r["pareto"][0][0] == expected.length
    text = cli(*args, "--budget", str(budget)).stdout
    assert f"distance {expected.length:,} m" not in text         # said as km and m
    assert f"({expected.length:,} m) within travel_time budget " in text and f"({budget:,} ds)" in text
    assert "labels: created" in text and "bounds:" in text
    assert expected.answered_by.startswith("labeling")
    lag = cli(*args, "--budget", str(budget), "--lagrangian", "always")
    assert f"({expected.length:,} m) within" in lag.stdout
    assert "Lagrangian bound from the start:" in lag.stdout and "LARAC steps" in lag.stdout
    j = json.loads(cli(*args, "--budget", str(budget), "--lagrangian", "always", "--json").stdout)
    assert j["lagrangian"]["lower"] <= j["length"] <= j["lagrangian"]["upper"]
    assert "Lagrangian" not in text             # auto: this query is not hard enough
    bad = cli(*args, "--budget", str(budget), "--lagrangian", "sometimes")
    assert bad.returncode != 0 and "lagrangian" in bad.stderr
    low = cli(*args, "--budget", str(top.least_cost - 1))
    assert low.returncode == 1 and "the least cost is " in low.stderr and f"({top.least_cost:,} ds)" in low.stderr


def cli(*args):
    return subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *args], capture_output=True, text=True)


# ------------------------------------------------ on the bi-criteria hierarchy
def test_cli_on_the_hierarchy(tmp_path):
    q, args, _, budget = cli_case(tmp_path)
    args += ["--budget", str(budget), "--hierarchy"]
    r = json.loads(cli(*args, "--pareto", "--json").stdout)
    expected = q.solve(3, 1500, budget, pareto=True)
    assert r["length"] == expected.length and r["cost"] <= budget
    assert r["pareto"] == [[p.length, p.cost] for p in expected.pareto]
    assert r["method"].endswith("on the bi-criteria hierarchy")
    assert "on the bi-criteria hierarchy" in cli(*args).stdout


def test_cli_builds_writes_and_reuses_a_file(tmp_path):
    q, args, _, budget = cli_case(tmp_path)
    file = tmp_path / "g.rlb"
    args += ["--budget", str(budget), "--hierarchy-file", str(file)]
    first = json.loads(cli(*args, "--json").stdout)
    assert file.exists() and first["hierarchy"]["written"] is True
    expected = q.solve(3, 1500, budget)
    again = cli(*args)
    assert f"({expected.length:,} m) within" in again.stdout
    assert f"loaded from {file}" in again.stdout and "shortcuts" in again.stdout
    other = cli(*args[:-2], "--hierarchy-file", str(file), "--minimize", "travel_time",
                "--budget-metric", "distance")
    assert other.returncode != 0 and "g.rlb" in other.stderr and "not 'travel_time'" in other.stderr
