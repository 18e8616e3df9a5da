"""The bi-criteria hierarchy in the cost-budgeted path box (app/features/csp/hierarchy_row.py):
Build (a long job in the engine thread, progress and Cancel in the status bar), Open…
and Save… (.rlb, engine.csp.hierarchy.file), and whether the csp controller's queries
label on it. The engine keeps the hierarchies (one per metric pair); the window keeps
their summaries. Like the service area in the tree's box, it extends another
controller's box and is made after it.
"""
from __future__ import annotations

import os

from PySide6.QtWidgets import QFileDialog

from app.feature import Controller, register_controller
from app.features.csp.hierarchy_row import FILTER, CspHierarchyRow

KINDS = ("csp_hierarchy", "open_csp_hierarchy", "save_csp_hierarchy")


@register_controller
class CspHierarchyController(Controller):
    order = 90
    kinds = KINDS

    def __init__(self, window) -> None:
        super().__init__(window)
        self.csp = window.controller("csp")
        self.csp.hierarchy = self
        self.summaries: dict[tuple[str, str], str] = {}     # metrics -> summary, in the engine
        self.row = row = CspHierarchyRow()
        row.build_button.clicked.connect(self.build_hierarchy)
        row.open_button.clicked.connect(self._choose_file)
        row.save_button.clicked.connect(self._choose_save_path)
        row.use_check.toggled.connect(lambda _on: self.csp.requery())
        for combo in (self.csp.minimize_combo, self.csp.budget_combo):
            combo.currentTextChanged.connect(lambda _text: self._show_state())
        self.csp.options.addWidget(row)

    def in_use(self, metrics: tuple[str, str]) -> bool:
        """Do queries for ``metrics`` label on a bi-criteria hierarchy?"""
        return self.row.use_check.isChecked() and metrics in self.summaries

    def graph_changed(self) -> None:
        self.summaries = {}
        self.row.use_check.setChecked(False)
        self._show_state()

    # ------------------------------------------------------------------ jobs
    def build_hierarchy(self) -> int | None:
        """Contract the graph for the two chosen metrics."""
        if not self._two_metrics():
            return None
        minimize, budget_metric = self.csp.metrics()
        return self._submit("csp_hierarchy", {}, f"Building the bi-criteria hierarchy "
                            f"({minimize} within {budget_metric})")

    def open_hierarchy(self, path) -> int | None:
        if not self._two_metrics():
            return None
        return self._submit("open_csp_hierarchy", {"path": str(path)},
                            f"Opening the bi-criteria hierarchy {os.path.basename(str(path))}")

    def save_hierarchy(self, path) -> int | None:
        if self.csp.metrics() not in self.summaries:
            return None
        return self._submit("save_csp_hierarchy", {"path": str(path)},
                            "Saving the bi-criteria hierarchy")

    def _two_metrics(self) -> bool:
        g = self.session.graph
        return g is not None and len(g.metric_names) >= 2

    def _submit(self, kind: str, params: dict, label: str) -> int:
        minimize, budget_metric = self.csp.metrics()
        job = self.engine.submit(kind, {**params, "minimize": minimize,
                                        "budget_metric": budget_metric}, label=label)
        self._show_state()
        return job

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open bi-criteria hierarchy", "", FILTER)
        if path:
            self.open_hierarchy(path)

    def _choose_save_path(self) -> None:
        minimize, budget_metric = self.csp.metrics()
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save bi-criteria hierarchy",
            f"{self.session.file_stem()}.{minimize}.{budget_metric}.rlb", FILTER)
        if path:
            self.save_hierarchy(path if path.endswith(".rlb") else path + ".rlb")

    # -------------------------------------------------------------- answers
    def on_result(self, job, answer) -> None:
        {"csp_hierarchy": self._adopt, "open_csp_hierarchy": self._adopt,
         "save_csp_hierarchy": self._saved}[job.kind](answer)
        self._show_state()

    def _adopt(self, answer: dict) -> None:
        """A hierarchy built or opened: its metrics and summary."""
        metrics = tuple(answer["metrics"])
        self.summaries[metrics] = answer["summary"]
        if metrics == self.csp.metrics():
            self.row.use_check.setChecked(True)          # asked for: used at once
        self.window.statusBar().showMessage(f"Bi-criteria hierarchy ready: {answer['summary']}", 8000)

    def _saved(self, path: str) -> None:
        self.window.statusBar().showMessage(f"Saved {path}", 5000)

    def on_error(self, job, message: str) -> None:
        self._show_state()
        super().on_error(job, message)

    def on_cancelled(self, job, message: str) -> None:
        self._show_state()
        super().on_cancelled(job, message)

    def _show_state(self) -> None:
        busy = next((job.label + "…" for job in map(self.engine.job_of, KINDS)
                     if job is not None), "")
        self.row.show_state(self.summaries.get(self.csp.metrics()), busy)
