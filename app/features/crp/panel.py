"""The "Metric (CRP)" dock: partition, the live decoder editor, whether routes use it,
and which partition level the map colours (the CRP controller fills and reads it)."""
from __future__ import annotations

from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QPushButton,
                               QVBoxLayout, QWidget)

from app.features.crp.decoder_editor import DecoderEditor
from app.widgets import button_row, selectable_label


class CrpPanel(QWidget):
    def __init__(self) -> None:
        super().__init__()
        col = QVBoxLayout(self)
        col.setContentsMargins(4, 4, 4, 4)
        top = QGroupBox("Customizable route planning")
        form = QFormLayout(top)
        self.partition_button = QPushButton("Partition")
        self.partition_button.setToolTip("Nested METIS cells (metric-independent, once per graph)")
        self.routes_box = QCheckBox("Routes use this metric (turn-aware)")
        self.routes_box.setChecked(True)
        form.addRow(button_row(self.partition_button))
        self.status = selectable_label()
        self.status.setWordWrap(True)
        form.addRow(self.status)
        form.addRow(self.routes_box)
        self.level_combo = QComboBox()
        self.level_combo.setToolTip("Colour the cells of this partition level on the map")
        self.matrix_box = QCheckBox("Shortcut matrix of a clicked cell")
        self.matrix_box.setChecked(True)
        self.route_levels_box = QCheckBox("Route through the levels")
        self.route_levels_box.setToolTip("The overlay arcs the query used, before unpacking")
        form.addRow("Cells", self.level_combo)
        form.addRow(self.matrix_box)
        form.addRow(self.route_levels_box)
        self.legend = selectable_label()       # the clicked cell's matrix colours
        form.addRow(self.legend)
        col.addWidget(top)
        self.editor = DecoderEditor()
        col.addWidget(self.editor, 1)
        self.set_levels(0)

    def set_levels(self, levels: int, mezzanine=()) -> None:
        """The level choices: Off, then every level (mezzanines marked)."""
        self.level_combo.blockSignals(True)
        self.level_combo.clear()
        self.level_combo.addItem("off")
        for level in range(levels):
            mark = " (mezzanine)" if level < len(mezzanine) and mezzanine[level] else ""
            self.level_combo.addItem(f"level {level}{mark}")
        self.level_combo.setEnabled(levels > 0)
        self.level_combo.blockSignals(False)

    def chosen_level(self) -> int | None:
        i = self.level_combo.currentIndex()
        return None if i <= 0 else i - 1

    def say(self, html: str) -> None:
        self.status.setText(html)
