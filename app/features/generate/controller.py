"""File ▸ Generate network file…: the generated road network of a chosen size written to
a file on the engine thread (engine/capabilities/generate.py, as ``routelab generate``):
the node count from a dialog, the file from a save dialog whose extension picks the
format (.rlg, DIMACS .gr with its .co, .osm.pbf). Arguments are checked before the job
starts, the job reports progress and can be cancelled like any long job, and the status
bar says what was written. ``generate_to(path, nodes, seed)`` does it without dialogs."""
from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog

from app.errors import describe
from app.feature import Controller, register_controller
from engine import capabilities

FILTERS = ("RouteLab cache (*.rlg)", "DIMACS text (*.gr)", "OpenStreetMap (*.osm.pbf)")
DEFAULT_NODES = 1_000_000


@register_controller
class GenerateController(Controller):
    order = 93
    kinds = ("generate",)
    written = Signal(str)     # the status line, once the files are written

    def __init__(self, window) -> None:
        super().__init__(window)
        window.capability_action("generate")      # File ▸ Generate network file… -> trigger

    def trigger(self, capability: str) -> None:
        from engine.capabilities.generate import MAX_NODES
        from engine.generate.network import MIN_NODES
        nodes, ok = QInputDialog.getInt(self.window, "Generate network file", "Nodes:",
                                        DEFAULT_NODES, MIN_NODES, min(MAX_NODES, 2**31 - 1),
                                        100_000)
        if not ok:
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Generate network file",
                                              f"generated-{nodes}.rlg", ";;".join(FILTERS))
        if path:
            self.generate_to(path, nodes)

    def generate_to(self, path: str, nodes: int, seed: int = 1) -> int | None:
        """Check the arguments here (a clear message, no job), then write on the engine
        thread, which also refuses a file the open graph came from; returns the job id."""
        from engine.capabilities.generate import preflight
        params = {"nodes": nodes, "seed": seed, "out": os.fspath(path)}
        try:
            preflight(params)
        except (ValueError, OSError) as e:
            self.window.show_error(f"Generate failed: {describe(e)}")
            return None
        return self.engine.submit("generate", params)

    def on_result(self, job, result) -> None:
        files = ", ".join(f"{os.path.basename(p)} ({size / 1e6:,.1f} MB)" for p, size in result.files)
        line = f"Generated {result.nodes:,} nodes, {result.arcs:,} arcs: wrote {files}"
        self.window.statusBar().showMessage(line, 10_000)
        self.written.emit(line)

    def on_error(self, job, message: str) -> None:
        self.window.show_error(f"Generate failed: {message}")
