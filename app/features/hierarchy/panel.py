"""The side panel's "Contraction hierarchy" group: K, C and the metric, Contract and
Cancel, the summary, colour by level with its legend, inspect mode with the list of the
inspected node's hierarchy arcs. Widgets only; the main window wires them.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QPushButton, QSpinBox,
                               QVBoxLayout)

from engine.ch.parameters import DEFAULT_C, DEFAULT_K

from app.widgets import FoldingLabel


class HierarchyPanel(QGroupBox):
    arc_picked = Signal(int)      # a hierarchy arc chosen in the list

    def __init__(self, parent=None) -> None:
        super().__init__("Contraction hierarchy", parent)
        column = QVBoxLayout(self)     # wrapped labels below the form: see _build_box in
        form = QFormLayout()           # app/features/tree/controller.py (QFormLayout clips them)
        column.addLayout(form)
        self.k_spin = QSpinBox(minimum=2, maximum=1_000_000_000, value=DEFAULT_K,
                               toolTip="K: contraction stops when fewer live nodes remain; "
                                       "they form the core (all-pairs distances)")
        self.k_spin.setGroupSeparatorShown(True)
        self.c_spin = QDoubleSpinBox(minimum=0.01, maximum=1.0, singleStep=0.05, decimals=2,
                                     value=DEFAULT_C,
                                     toolTip="C: share of the live nodes that are candidates "
                                             "for each level's independent set, in (0, 1]")
        self.metric_combo = QComboBox(toolTip="The metric the hierarchy is built for")
        for w in (self.k_spin, self.c_spin, self.metric_combo):
            w.setFocusPolicy(Qt.ClickFocus)      # keys stay with the map until clicked
        row = QHBoxLayout()
        row.addWidget(self.k_spin, 1)
        row.addWidget(QLabel("C"))
        row.addWidget(self.c_spin, 1)
        form.addRow("K", row)
        form.addRow("Metric", self.metric_combo)
        buttons = QHBoxLayout()
        self.contract_button = QPushButton("Contract (Ctrl+K)")
        self.cancel_button = QPushButton("Cancel", enabled=False)
        buttons.addWidget(self.contract_button)
        buttons.addWidget(self.cancel_button)
        column.addLayout(buttons)
        self.summary = QLabel("No hierarchy.", wordWrap=True,
                              textInteractionFlags=Qt.TextSelectableByMouse)
        column.addWidget(self.summary)
        views = QHBoxLayout()
        self.levels_button = QPushButton("Colour by level (L)", checkable=True, enabled=False,
                                         toolTip="Colour roads by the higher contraction level "
                                                 "of their two ends")
        self.inspect_button = QPushButton("Inspect (I)", checkable=True, enabled=False,
                                          toolTip="Click a node: its upward and downward "
                                                  "hierarchy arcs; click a shortcut: its road path")
        views.addWidget(self.levels_button)
        views.addWidget(self.inspect_button)
        column.addLayout(views)
        self.legend = QLabel(wordWrap=True)
        self.inspect_info = FoldingLabel()      # no room taken while empty: the panel fits 1280x800
        self.arc_list = QListWidget(toolTip="Pick an arc: unpack it onto the road")
        self.arc_list.setMaximumHeight(170)
        self.arc_list.setFocusPolicy(Qt.ClickFocus)
        self.arc_list.currentItemChanged.connect(self._on_current_changed)
        self.arc_list.hide()
        column.addWidget(self.legend)
        column.addWidget(self.inspect_info)
        column.addWidget(self.arc_list)
        self.arc_info = FoldingLabel()
        column.addWidget(self.arc_info)
        for w in (self.contract_button, self.cancel_button, self.levels_button, self.inspect_button):
            w.setFocusPolicy(Qt.NoFocus)

    def set_arcs(self, rows: list[tuple[int, str]]) -> None:
        """The inspected node's arcs: (arc id, text) rows; [] hides the list."""
        self.arc_list.blockSignals(True)
        self.arc_list.clear()
        for arc, text in rows:
            item = QListWidgetItem(text)
            item.setData(Qt.UserRole, int(arc))
            self.arc_list.addItem(item)
        self.arc_list.blockSignals(False)
        self.arc_list.setVisible(bool(rows))

    def select_arc(self, arc: int) -> None:
        """Highlight the row of ``arc`` without emitting ``arc_picked``."""
        self.arc_list.blockSignals(True)
        for i in range(self.arc_list.count()):
            if self.arc_list.item(i).data(Qt.UserRole) == arc:
                self.arc_list.setCurrentRow(i)
        self.arc_list.blockSignals(False)

    def arc_ids(self) -> list[int]:
        return [self.arc_list.item(i).data(Qt.UserRole) for i in range(self.arc_list.count())]

    def _on_current_changed(self, item, _previous) -> None:
        if item is not None:
            self.arc_picked.emit(int(item.data(Qt.UserRole)))
