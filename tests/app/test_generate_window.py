"""File ▸ Generate network file… in the window (issue #37, item 1): the menu entry, the
dialogs (node count, then the file), the job on the engine thread, the status line, and
a bad name or size refused with a message before any job."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QFileDialog, QInputDialog

from engine.generate.network import generate_road_network
from engine.io import load
from tests.app.helpers import LOAD_TIMEOUT_MS, load_graph


@pytest.fixture
def window(qtbot):
    from app.main_window import MainWindow
    w = MainWindow(backend="cpu")
    qtbot.addWidget(w)
    load_graph(qtbot, w, generate_road_network(300, seed=1))
    yield w
    w.close()


def test_the_menu_asks_and_writes_the_file(qtbot, window, tmp_path, monkeypatch):
    out = tmp_path / "road-d.w.gr"
    monkeypatch.setattr(QInputDialog, "getInt", lambda *a, **k: (2000, True))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    action = next(a for a in menu.actions() if a.text() == "&Generate network file…")
    controller = window.controller("generate")
    with qtbot.waitSignal(controller.written, timeout=LOAD_TIMEOUT_MS) as said:
        action.trigger()
    assert said.args[0].startswith("Generated 2,000 nodes") and "road-t.w.gr" in said.args[0]
    g = load([out])
    assert g.num_nodes == 2000 and set(g.metrics) == {"distance", "travel_time"}
    assert np.array_equal(g.head, generate_road_network(2000, seed=1).head)


@pytest.mark.parametrize("name, nodes, says", [("net.txt", 1000, "unknown format"),
                                               ("net.rlg", 10, "--nodes")])
def test_bad_arguments_are_said_before_any_job(qtbot, window, tmp_path, monkeypatch, name, nodes, says):
    errors, jobs = [], []
    monkeypatch.setattr(window, "show_error", errors.append)
    window.engine.submitted.connect(jobs.append)
    assert window.controller("generate").generate_to(str(tmp_path / name), nodes) is None
    assert len(errors) == 1 and says in errors[0] and not jobs
    assert not list(tmp_path.iterdir())
