"""The "Bi-criteria hierarchy" part of the cost-budgeted path box: whether one exists for
the two metrics chosen (and what it is), Build / Open… / Save…, and whether queries
label on it. The csp controller runs the jobs; this widget only shows their state."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.widgets import button_row, grey

FILTER = "RouteLab bi-criteria hierarchy (*.rlb);;All files (*)"
NONE = grey("No bi-criteria hierarchy for these metrics: queries label on the graph. "
            "Build one (NY: about half a minute) or open a saved one for much faster answers.")


class CspHierarchyRow(QWidget):
    def __init__(self) -> None:
        super().__init__()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.use_check = QCheckBox("Label on the bi-criteria hierarchy", enabled=False,
                                   toolTip="Exact answers, the same as on the graph, from a "
                                           "search a few dozen arcs deep instead of hundreds")
        column.addWidget(self.use_check)
        self.build_button = QPushButton("Build", toolTip="Contract the graph for the two metrics "
                                        "(in the engine thread; the status bar can cancel it)")
        self.open_button = QPushButton("Open…", toolTip="A saved hierarchy (.rlb) of this graph "
                                       "and these two metrics")
        self.save_button = QPushButton("Save…", enabled=False,
                                       toolTip="Save it (.rlb) to open it next time in a moment")
        column.addLayout(button_row(self.build_button, self.open_button, self.save_button))
        self.label = QLabel(NONE, wordWrap=True)
        self.label.setStyleSheet("font-size: 11px;")
        column.addWidget(self.label)

    def show_state(self, summary: str | None, busy: str = "") -> None:
        """``summary`` of the hierarchy for the chosen metrics (None: none); ``busy``:
        what the engine is doing with one, if anything."""
        have = summary is not None
        self.use_check.setEnabled(have)
        self.save_button.setEnabled(have and not busy)
        self.build_button.setEnabled(not have and not busy)
        self.open_button.setEnabled(not busy)
        if busy:
            self.label.setText(grey(busy))
        elif have:
            self.label.setText(f"Bi-criteria hierarchy: {summary}")
        else:
            self.label.setText(NONE)
