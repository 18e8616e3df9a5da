"""The window's error boundary (issue 11): closing during a long engine step exits
cleanly and fast, an exception in a GUI slot becomes a message in the banner, and a
superseded job's error is never shown."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.app.helpers import LOAD_TIMEOUT_MS, click_node, grid_graph, load_graph, routes, write_dimacs

ROOT = Path(__file__).resolve().parents[2]
CLOSE_WITHIN_S = 2.0

# Opens the window as `routelab FILE` does (app.window.run_window), starts a step that
# runs "forever" (a contraction or a load, cancellable or stuck), closes the window
# 200 ms into it.
CLOSE_SCRIPT = r'''
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from engine.capabilities import contract as contract_capability

step, cancellable, graph_file = sys.argv[1], sys.argv[2] == "cancellable", sys.argv[3]

def forever(*args, cancel=None, **kwargs):
    while True:
        if cancellable and cancel is not None:
            cancel.check()
        time.sleep(0.01)

contract_capability.contract = forever
contract_capability._warm_up = lambda backend: None
app = QApplication([])
from app.main_window import MainWindow
from app.window import run_window

def close(window):
    print("closing", flush=True)
    window.close()

def start(window):
    if step == "contract":
        window.engine.submit("contract", {"metric": None, "K": 64, "C": 0.3})
    else:
        window.engine.load_with("Slow load", lambda progress, cancel: forever(cancel=cancel))

def hook():
    window = next(w for w in app.topLevelWidgets() if isinstance(w, MainWindow))
    window.engine.started.connect(
        lambda job, label: QTimer.singleShot(200, lambda: close(window))
        if job.kind in ("contract", "load") and job.label in ("Contract (CU-CH)", "Slow load") else None)
    if window.session.graph is not None:
        start(window)
    else:
        window.graph_shown.connect(lambda graph: start(window))

QTimer.singleShot(0, hook)
sys.exit(run_window([graph_file], backend="cpu"))
'''


@pytest.mark.parametrize("step, cancellable", [("contract", "cancellable"), ("load", "cancellable"),
                                               ("contract", "stuck")])
def test_closing_during_a_long_engine_step_exits_cleanly(tmp_path, step, cancellable):
    script = tmp_path / "close_during_step.py"
    script.write_text(CLOSE_SCRIPT)
    gr, _ = write_dimacs(tmp_path, grid_graph())
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), step, cancellable, str(gr)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()          # the step is running when the window closes
        closed_at = time.perf_counter()
        status = proc.wait(timeout=30)
        took = time.perf_counter() - closed_at
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read()
    assert line.strip() == "closing", stderr
    assert status == 0, stderr
    assert "QThread: Destroyed" not in stderr
    assert took < CLOSE_WITHIN_S, f"exited {took:.2f} s after close()"


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_gui_slot_shows_in_the_banner(qtbot, window, graph, monkeypatch):
    load_graph(qtbot, window, graph)

    def broken(*args, **kwargs):
        raise TypeError("'numpy.ndarray' object is not callable")
    monkeypatch.setattr(window.engine, "submit", broken)   # the route request fails in the slot
    click_node(qtbot, window, 7)
    with qtbot.waitSignal(window.error_shown, timeout=5000) as shown:
        click_node(qtbot, window, 28)
    message = shown.args[0]
    assert message.startswith("Internal error in ") and "see the terminal" in message
    assert "TypeError: 'numpy.ndarray' object is not callable" in message
    assert window.banner.isVisible()
    assert "routing…" not in routes(window).summary.text()


@pytest.mark.qt_no_exception_capture
def test_a_failing_map_click_handler_shows_in_the_banner(qtbot, window, graph, monkeypatch):
    load_graph(qtbot, window, graph)
    controller = window.controller("route")

    def broken(node, shift):
        return {}["metric"]
    monkeypatch.setattr(controller, "node_clicked", broken)
    with qtbot.waitSignal(window.error_shown, timeout=5000) as shown:
        click_node(qtbot, window, 7)
    assert "missing key 'metric'" in shown.args[0] and "Internal error in broken" in shown.args[0]


def test_the_window_restores_the_excepthook_on_close(qtbot, graph):
    from app.main_window import MainWindow
    before = sys.excepthook
    w = MainWindow(backend="cpu")
    qtbot.addWidget(w)
    assert sys.excepthook != before
    w.close()
    assert sys.excepthook == before


def test_a_superseded_loads_error_is_not_shown(qtbot, window, graph):
    started = threading.Event()

    def failing(progress, cancel):             # ignores its cancel flag, then fails
        started.set()
        time.sleep(0.3)
        raise ValueError("the first file is broken")
    shown = []
    window.error_shown.connect(shown.append)
    window.engine.load_with("Failing load", failing)
    qtbot.waitUntil(started.is_set, timeout=LOAD_TIMEOUT_MS)
    with qtbot.waitSignal(window.graph_shown, timeout=LOAD_TIMEOUT_MS):
        window.adopt_graph(graph)
    qtbot.wait(100)
    assert shown == [] and not window.banner.isVisible()
    assert window.session.graph is graph


def test_a_superseded_routes_error_is_not_shown(qtbot, window, graph):
    """Route jobs queue: the error of the one in flight is dropped when a newer one waits."""
    load_graph(qtbot, window, graph)
    errors = []
    window.engine.error.connect(lambda job, message: errors.append(message))
    window.engine.submit("route", {"source": 0, "target": 10**6})       # fails: no such node
    with qtbot.waitSignal(window.engine.result, timeout=LOAD_TIMEOUT_MS,
                          check_params_cb=lambda job, r: job.kind == "route"):
        window.engine.submit("route", {"source": 0, "target": 5})       # waits: the newest
    assert errors == [] and not window.banner.isVisible()
