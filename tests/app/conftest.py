"""Fixtures for the window tests: headless Qt (set before any Qt import), a graph, a window."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from engine.graph import RoadGraph  # noqa: E402
from tests.app.helpers import grid_graph  # noqa: E402


@pytest.fixture
def graph() -> RoadGraph:
    return grid_graph()


@pytest.fixture
def window(qtbot):
    from app.main_window import MainWindow
    w = MainWindow(backend="cpu")
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()
    w.engine.shutdown()
