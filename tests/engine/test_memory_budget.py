"""Peak memory of the scaled pipelines against their per-node budgets (issue #37,
docs/memory.md): a memory regression fails CI, which has no GPU.

Each pipeline runs on the CPU in a fresh Python process on the generated network of
NODES nodes: CH contraction + a PHAST tree; partition + overlay + customization + a
CRP query. The child first runs the same pipeline on a tiny network, so that Numba's
compilation (or its cache loading) is over, and reports its resident memory then:
the base (interpreter, NumPy, SciPy, Numba, compiled code). Its peak is the kernel's
own figure: the child's VmHWM, read by the child at the end (not ``ru_maxrss`` from
``os.wait4``: that counts the pages the child shared with its parent between fork and
exec, the whole test run's RSS when the suite has grown). The parent also watches the
child's RSS and stops it at the limit, so this test never holds more than its budget.

Budgets, from the issue's targets at 24 M nodes (decimal GB):
  CH + PHAST  <= 24 GB -> 1,000 bytes per node;
  CRP         <= 40 GB -> 1,666 bytes per node (the graph included).
Peak must stay within BASE + budget x nodes; BASE is the base measured here plus room.
Measured at 1 M on a 2-core machine (2026-11-27): CH + PHAST peak 1,028 MiB (905 B/node
above a 164 MiB base), 76 s; CRP peak 1,633 MiB (1,521 B/node above 183 MiB), 80 s.
ROUTELAB_MEMORY_NODES sets another size.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODES = int(os.environ.get("ROUTELAB_MEMORY_NODES", 1_000_000))
CH_BYTES_PER_NODE = 24 * 10**9 // (24 * 10**6)
CRP_BYTES_PER_NODE = 40 * 10**9 // (24 * 10**6)
# The child's RSS once everything is imported and compiled: 164 MiB (CH) and 183 MiB
# (CRP) measured here (Python 3.11, NumPy, SciPy, Numba, pymetis), with room. A figure
# past this is a regression of its own (a new import at start-up, a cache not loading).
BASE = 256 * 2**20
TIMEOUT_S = 600

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads the child's RSS from /proc (Linux)")

PRELUDE = """
import json, resource, sys, time
from engine.generate.network import generate_road_network

def rss(field="VmRSS:"):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))

def report(**fields):
    print(json.dumps(fields), flush=True)
"""

CH = """
from engine.ch import contract, phast
from engine.core.backend import cpu_backend

def pipeline(n):
    g = generate_road_network(n, seed=1)
    h = contract(g, "travel_time", backend=cpu_backend())
    tree = phast.PhastQuery(h, cpu_backend()).tree(0).tree
    assert tree.distance[0] == 0 and (tree.distance >= 0).sum() > n // 2
    return g
"""

CRP = """
from engine.crp import CrpQuery, Overlay, load_decoder, partition_graph
from engine.crp.customization.customize import customize

def pipeline(n):
    g = generate_road_network(n, seed=1)
    overlay = Overlay(g, partition_graph(g, seed=0))
    metric = customize(overlay, load_decoder("car-fastest"))
    assert CrpQuery(overlay, metric).route(0, g.num_nodes - 1).distance > 0
    return g
"""

MAIN = """
pipeline(2_000)                        # compiled (or loaded from Numba's cache) here
report(base=rss())
t0 = time.perf_counter()
g = pipeline(int(sys.argv[1]))
report(nodes=g.num_nodes, arcs=g.num_arcs, seconds=time.perf_counter() - t0,
       peak=rss("VmHWM:"))               # this process's own high-water mark since exec
"""


def vm_rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def run_child(body: str, nodes: int, limit: int) -> dict:
    """Run PRELUDE + body + MAIN in a fresh interpreter; its reports (peak: its VmHWM in
    bytes) and whether it was stopped at ``limit``."""
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body) + textwrap.dedent(MAIN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", code, str(nodes)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped, start = None, time.perf_counter()
    while True:
        pid, status, _ = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        rss = vm_rss(child.pid)
        if rss > limit or time.perf_counter() - start > TIMEOUT_S:
            stopped = f"RSS {rss / 2**20:,.0f} MiB" if rss > limit else f"{TIMEOUT_S} s"
            child.send_signal(signal.SIGKILL)
            pid, status, _ = os.wait4(child.pid, 0)
            break
        time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    out, err = child.communicate()
    reports = {}
    for line in out.splitlines():
        if line.startswith("{"):
            reports.update(json.loads(line))
    return {"peak": 0, **reports, "stopped": stopped,
            "returncode": child.returncode, "stderr": err[-2000:],
            "wall": time.perf_counter() - start}


def check_budget(body: str, per_node: int, what: str) -> None:
    limit = BASE + per_node * NODES
    r = run_child(body, NODES, limit)
    assert r["stopped"] is None, (
        f"{what} at {NODES:,} nodes stopped at {r['stopped']}: over its budget of "
        f"{limit / 2**20:,.0f} MiB (base {BASE / 2**20:,.0f} MiB + {per_node:,} B/node)"
        f" or its time; base measured {r.get('base', 0) / 2**20:,.0f} MiB")
    assert r["returncode"] == 0, f"{what} failed:\n{r['stderr']}"
    assert r["base"] <= BASE, (f"the base (imports + compiled code) is {r['base'] / 2**20:,.0f} "
                               f"MiB, past {BASE / 2**20:,.0f} MiB")
    per = (r["peak"] - r["base"]) / r["nodes"]
    print(f"{what}: {r['nodes']:,} nodes, peak {r['peak'] / 2**20:,.0f} MiB, base "
          f"{r['base'] / 2**20:,.0f} MiB, {per:,.0f} B/node above it, {r['seconds']:.1f} s "
          f"(child {r['wall']:.1f} s)")
    assert r["peak"] <= limit, (
        f"{what} at {r['nodes']:,} nodes peaked at {r['peak'] / 2**20:,.0f} MiB: past its budget "
        f"of {limit / 2**20:,.0f} MiB ({per:,.0f} B/node above the base, budget {per_node:,})")


def test_ch_and_phast_fit_their_budget_per_node():
    check_budget(CH, CH_BYTES_PER_NODE, "CH contraction + PHAST tree (CPU)")


def test_crp_pipeline_fits_its_budget_per_node():
    check_budget(CRP, CRP_BYTES_PER_NODE, "CRP partition + overlay + customization + query (CPU)")


def test_a_child_over_its_limit_is_stopped_and_named():
    """The watch that keeps this test within its budget: a child that allocates past the
    limit is stopped, and the message says so."""
    body = ("import numpy as np\ndef pipeline(n):\n    x = np.ones(n * 100, dtype=np.uint8)\n"
            "    time.sleep(0.5 if n > 10_000 else 0)\n"
            "    return type('G', (), {'num_nodes': n, 'num_arcs': x.size})()\n")
    r = run_child(body, 4_000_000, limit=BASE + 100 * 2**20)        # 400 MB wanted
    assert r["stopped"] is not None and r["stopped"].startswith("RSS")
