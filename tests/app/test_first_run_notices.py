"""No silent waits (issue #36, item 2): work that compiles for the first time says so.

The command line, with Numba's cache emptied (NUMBA_CACHE_DIR a new folder), prints
"preparing the route search (first time only)" on stderr and how long compiling took,
and its reported compute time still excludes the compilation; the second run loads
the cache and says nothing. In the window, a job that compiles emits the words as its
progress: the long jobs' progress bar and, for an interactive job, the status bar.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numba
import pytest

from engine import capabilities
from engine.capabilities import CANCEL, QUEUE, Capability
from tests.app.helpers import LOAD_TIMEOUT_MS, grid_graph, load_graph, write_banned_left_osm
from tests.conftest import ROOT

FIRST = "preparing the route search (first time only)"


def routelab(args, cache_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-m", "app.main", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_first_run_says_it_compiles_and_a_second_run_is_quiet(tmp_path):
    extract = write_banned_left_osm(tmp_path)       # turns matter: the turn-aware router
    args = ["route", extract, "--from", "1", "--to", "3", "--json"]
    first = routelab(args, tmp_path / "numba-cache")
    assert first.returncode == 0, first.stderr
    assert f"routelab: {FIRST}…" in first.stderr
    assert "later runs load them from the cache" in first.stderr
    answer = json.loads(first.stdout)
    assert answer["path"] == [1, 2, 4, 3]             # not the banned left turn at 2
    assert answer["compute_ms"] < 100            # compiling took seconds, untimed
    second = routelab(args, tmp_path / "numba-cache")
    assert second.returncode == 0 and second.stderr == ""
    assert json.loads(second.stdout)["path"] == answer["path"]


def fresh_kernel():
    def triple(x):
        return x * 3
    triple.__module__ = "engine.crp.example"        # as if it were a CRP kernel
    return numba.njit(triple)


@pytest.fixture
def compiling_capability():
    """A capability whose run compiles a new Numba function (as a first run would)."""
    made = []

    def make(policy: str) -> str:
        kernel = fresh_kernel()
        name = f"compiles_{policy}"
        capabilities.register(Capability(
            name=name, label="Compiling", help="compiles", params=(), hidden=True,
            run=lambda workspace, params, ctx: kernel(2), policy=policy, order=1000))
        made.append(name)
        return name
    yield make
    for name in made:
        capabilities.unregister(name)


def owned(window, kind: str) -> str:
    """``kind``'s answers go to a controller that does nothing with them."""
    from app.feature import Controller
    window._owners[kind] = Controller(window)
    return kind


def test_a_long_job_that_compiles_shows_it_in_its_progress(qtbot, window, compiling_capability):
    load_graph(qtbot, window, grid_graph())
    kind = owned(window, compiling_capability(CANCEL))
    messages = []
    window.engine.progress.connect(lambda job, fraction, message: messages.append(message))
    with qtbot.waitSignal(window.engine.result, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda job, result: job.kind == kind) as blocker:
        window.engine.submit(kind)
    assert blocker.args[1] == 6
    assert "preparing the CRP kernels (first time only): 1 compiled" in messages
    assert window.progress.label.text().startswith("preparing the CRP kernels (first time only)")


def test_an_interactive_job_that_compiles_says_it_in_the_status_bar(qtbot, window,
                                                                   compiling_capability):
    load_graph(qtbot, window, grid_graph())
    kind = owned(window, compiling_capability(QUEUE))
    with qtbot.waitSignal(window.engine.result, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda job, result: job.kind == kind):
        window.engine.submit(kind)
    assert window.statusBar().currentMessage() == \
        "preparing the CRP kernels (first time only): 1 compiled"
