"""Fixtures for the window tests: headless Qt (set before any Qt import), a graph, a window."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from engine.core.graph import RoadGraph  # noqa: E402
from tests.app.helpers import grid_graph, shown_window  # noqa: E402


@pytest.fixture
def graph() -> RoadGraph:
    return grid_graph()


@pytest.fixture
def window(qtbot):
    with shown_window(qtbot, 1000, 700) as w:
        yield w
