"""A file beside the opened one that does not belong to it is skipped and said so in
the window (never an error)."""
from __future__ import annotations

from tests.app.helpers import LOAD_TIMEOUT_MS


def test_a_mismatching_sibling_is_noted_not_fatal(qtbot, window, tmp_path):
    gr = tmp_path / "tiny.gr"
    gr.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    (tmp_path / "tiny.co").write_text("p aux sp co 9\nv 1 1 1\n")   # another graph's
    with qtbot.waitSignal(window.graph_shown, timeout=LOAD_TIMEOUT_MS):
        window.open_files([gr])
    assert window.session.graph.num_nodes == 3 and not window.banner.isVisible()
    info = window.controller("load").info.text()
    assert "sibling file not used" in info and "tiny.co" in info
    assert "not used" in window.statusBar().currentMessage()
