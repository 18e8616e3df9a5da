"""The metric decoder editor: a pure widget (no engine work) that edits an
engine.crp.metric.decoder.Decoder and emits every valid result.

Every change builds a candidate with dataclasses.replace and validates it as the
engine would read it (parse_decoder of its TOML). A valid one becomes the working
decoder and is emitted as ``edited``; an invalid one is shown inline, emitted as
``invalid`` and never replaces the working decoder. The controller
(app/features/crp/controller.py) owns debouncing and customization jobs."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (QComboBox, QFileDialog, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QTabWidget, QToolButton, QVBoxLayout,
                               QWidget)

from app.features.crp.decoder_form import (AvoidGroup, History, SpeedTable, State, TurnTable, caret_text,
                              wrapped)
from engine.crp.metric.decoder import DECODER_DIR, Decoder, DecoderError, load_decoder, parse_decoder
from engine.io.atomic import atomic_write
from engine.crp.metric.expression import FUNCTIONS, PROPERTIES, ExpressionError, parse

_ERROR_STYLE = "color: #8a1c12; background: #fdecea; border: 1px solid #e0a49c; padding: 3px;"
_BAD_EDIT_STYLE = "QLineEdit { border: 2px solid #d0342c; border-radius: 3px; padding: 1px; }"
_DEFAULT_PRESET = "car-fastest"


def _scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea(widgetResizable=True, frameShape=QScrollArea.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setWidget(widget)
    return area


class DecoderEditor(QWidget):
    """Presets, class speeds, avoid toggles, turn costs and the cost expression of a
    metric decoder, with undo/redo and TOML load/save."""
    edited = Signal(object)     # a valid Decoder, after every user edit
    invalid = Signal(str)       # why the last edit cannot be used

    def __init__(self, parent=None, merge_seconds: float = 0.5) -> None:
        super().__init__(parent)
        first = load_decoder(_DEFAULT_PRESET)
        self._history = History(State(first, first.name, first), merge_seconds)
        self._presets: list[str] = []
        self._expression_error = False
        self._build()
        self._show()

    # --- construction ---------------------------------------------------------------
    def _build(self) -> None:
        self.preset_combo = QComboBox(toolTip="Shipped decoders that suit this graph")
        self.preset_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.preset_combo.currentIndexChanged.connect(self._preset_chosen)
        self.status_label = QLabel(textInteractionFlags=Qt.TextSelectableByMouse)
        self.load_button = QPushButton("Load…", toolTip="Load a decoder TOML file")
        self.save_button = QPushButton("Save…", toolTip="Save this decoder as TOML")
        self.load_button.clicked.connect(self._load_dialog)
        self.save_button.clicked.connect(self._save_dialog)
        self.undo_action = self._action("Undo", "↶", ["Ctrl+Z"], self.undo)
        self.redo_action = self._action("Redo", "↷", ["Ctrl+Shift+Z", "Ctrl+Y"], self.redo)
        self.undo_button, self.redo_button = (self._tool(a) for a in (self.undo_action,
                                                                      self.redo_action))
        self.tabs = QTabWidget(documentMode=True)
        self.tabs.addTab(self._speeds_tab(), "Speeds")
        self.tabs.addTab(self._avoid_turns_tab(), "Avoid && turns")
        self.tabs.addTab(self._expression_tab(), "Expression")
        self.error_label = QLabel(textInteractionFlags=Qt.TextSelectableByMouse,
                                  styleSheet=_ERROR_STYLE, visible=False)
        self.error_label.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self._lay_out()

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Preset"))
        top.addWidget(self.preset_combo, 1)
        files = QHBoxLayout()
        files.addWidget(self.status_label, 1)
        for w in (self.load_button, self.save_button, self.undo_button, self.redo_button):
            files.addWidget(w)
        root = QVBoxLayout(self)
        root.setContentsMargins(4, 4, 4, 4)
        root.setSpacing(4)
        root.addLayout(top)
        root.addLayout(files)
        root.addWidget(self.error_label)
        root.addWidget(self.tabs, 1)
        self._root = root

    def _action(self, text: str, glyph: str, keys: list[str], slot) -> QAction:
        action = QAction(glyph, self, toolTip=f"{text} ({keys[0]})",
                         shortcutContext=Qt.WidgetWithChildrenShortcut)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.triggered.connect(slot)
        self.addAction(action)      # the shortcut works wherever the focus is inside us
        return action

    def _tool(self, action: QAction) -> QToolButton:
        button = QToolButton()
        button.setDefaultAction(action)
        return button

    def _speeds_tab(self) -> QWidget:
        self.speed_table = SpeedTable()
        self.speed_table.changed.connect(self._speed_changed)
        self.speed_sliders, self.speed_spins = self.speed_table.sliders, self.speed_table.spins
        return _scrolled(self.speed_table)

    def _avoid_turns_tab(self) -> QWidget:
        self.avoid_group = AvoidGroup()
        self.avoid_group.changed.connect(self._avoid_changed)
        self.avoid_boxes = self.avoid_group.boxes
        self.turn_table = TurnTable()
        self.turn_table.changed.connect(self._turn_changed)
        self.turn_spins, self.turn_forbidden = self.turn_table.spins, self.turn_table.forbidden
        page = QWidget()
        box = QVBoxLayout(page)
        box.setContentsMargins(0, 0, 0, 0)
        self.avoid_box = QGroupBox("Avoid")
        QVBoxLayout(self.avoid_box).addWidget(self.avoid_group)
        self.turns_box = QGroupBox("Turn costs")
        QVBoxLayout(self.turns_box).addWidget(self.turn_table)
        box.addWidget(self.avoid_box)
        box.addWidget(self.turns_box)
        box.addStretch(1)
        return _scrolled(page)

    def _expression_tab(self) -> QWidget:
        names = ", ".join(PROPERTIES)
        self.expression_edit = QLineEdit(
            placeholderText="e.g. cost * where(lanes >= 3, 0.9, 1)", clearButtonEnabled=True,
            toolTip="Replaces each arc's cost; `cost` is the decoder's cost (deciseconds for "
                    "time, metres for distance). Applied on Enter; empty = none.")
        self.expression_edit.editingFinished.connect(self._expression_finished)
        help_text = QLabel(f"Names: {names}, road classes, metric columns.<br>"
                           f"Functions: {', '.join(FUNCTIONS)}; operators + - * / "
                           f"&lt; &lt;= &gt; &gt;= == != and or not. Press Enter to apply.",
                           wordWrap=True, styleSheet="color: #666;")
        page = QWidget()
        box = QVBoxLayout(page)
        box.addWidget(self.expression_edit)
        box.addWidget(help_text)
        self._expression_layout = box
        box.addStretch(1)
        return page

    # --- public API -----------------------------------------------------------------
    def decoder(self) -> Decoder:
        """The working decoder: the last valid one."""
        return self._history.present.decoder

    def set_decoder(self, d: Decoder) -> None:
        """Show ``d`` as the working decoder, without emitting; clears the history."""
        self._history.reset(State(d, d.name, d))
        self._show()

    def set_presets(self, names: list[str], current: str) -> None:
        """Fill the preset combo and load ``current`` without emitting ``edited``;
        clears the history. A preset that cannot be read raises DecoderError."""
        self._presets = list(names)
        self.preset_combo.blockSignals(True)
        self.preset_combo.clear()
        self.preset_combo.addItems(self._presets)
        self.preset_combo.blockSignals(False)
        try:
            d = load_decoder(current)
        except DecoderError as e:
            self._show_error(wrapped(str(e)))
            raise
        self._history.reset(State(d, current, d))
        self._show()

    def set_features(self, classes: set[str], tags: set[str]) -> None:
        """The road classes and tags of the graph: avoid toggles and speed rows only
        where the data has them."""
        self.avoid_group.show_features(set(classes), set(tags))
        self.speed_table.show_classes(set(classes))

    def load_file(self, path) -> None:
        """Load a decoder TOML file as an undoable edit; errors are shown and raised."""
        try:
            d = load_decoder(Path(path))
        except DecoderError as e:
            self._show_error(wrapped(str(e)))
            self.invalid.emit(str(e))
            raise
        self._history.push(State(d, Path(path).name, d), None)
        self._show()
        self.edited.emit(d)

    def save_file(self, path) -> None:
        """Write the working decoder as TOML, atomically (engine.io.atomic: never over a
        device, FIFO or folder); errors are shown and raised."""
        path = Path(path)
        try:
            with atomic_write(path, "w", encoding="utf-8") as f:
                f.write(self.decoder().to_toml())
        except OSError as e:
            self._show_error(wrapped(f"cannot save {path.name}: {e.strerror or e}"))
            raise
        self._history.present = State(self.decoder(), path.name, self.decoder())
        self._show_status()

    def can_undo(self) -> bool:
        return bool(self._history.undo_stack)

    def can_redo(self) -> bool:
        return bool(self._history.redo_stack)

    def undo(self) -> None:
        self._step(self._history.undo())

    def redo(self) -> None:
        self._step(self._history.redo())

    # --- edits ----------------------------------------------------------------------
    def _step(self, state: State | None) -> None:
        if state is not None:
            self._show()
            self.edited.emit(state.decoder)

    def _speed_changed(self, cls: str, kmh: int) -> None:
        speeds = dict(self.decoder().speeds)
        speeds[cls] = float(kmh)
        self._commit({"speeds": tuple(speeds.items())}, key=f"speed:{cls}")

    def _avoid_changed(self, key: str, avoided: bool) -> None:
        forbid = tuple(f for f in self.decoder().forbid if f != key)
        self._commit({"forbid": forbid + (key,) if avoided else forbid}, key=f"avoid:{key}")

    def _turn_changed(self, turn: str, cost) -> None:
        costs = self.decoder().turn_costs()    # explicit per-type keys: no shorthands
        costs[turn] = cost
        self._commit({"turns": tuple(costs.items())}, key=f"turn:{turn}")

    def _expression_finished(self) -> None:
        text = self.expression_edit.text()
        expression = text.strip() or None
        if expression == self.decoder().expression:
            self._clear_error()
            return
        if expression is not None:
            try:
                parse(expression)
            except ExpressionError as e:
                lead = len(text) - len(text.lstrip())
                self._show_expression_error(expression, e, lead)
                return
        self._commit({"expression": expression}, key=None)

    def _preset_chosen(self, index: int) -> None:
        if index < 0:
            return
        name = self.preset_combo.itemText(index)
        try:
            d = load_decoder(name)
        except DecoderError as e:
            self._show_error(wrapped(str(e)))
            self.invalid.emit(str(e))
            self._show(expression=False)
            return
        self._history.push(State(d, name, d), None)
        self._show()
        self.edited.emit(d)

    def _commit(self, change: dict, key: str | None) -> None:
        """Validate the working decoder with ``change`` applied; keep and emit it if it
        is valid, else show why and leave the working decoder as it was."""
        present = self._history.present
        try:
            good = parse_decoder(replace(present.decoder, **change).to_toml(), source="editor")
        except DecoderError as e:
            self._show_error(wrapped(str(e)))
            self.invalid.emit(str(e))
            self._show(expression=False)        # controls back to the working decoder
            return
        self._history.push(State(good, present.origin, present.origin_decoder), key)
        if "expression" in change or not self._expression_error:
            self._clear_error()
        self._show_status()
        self.edited.emit(good)

    # --- display --------------------------------------------------------------------
    def _show(self, expression: bool = True) -> None:
        """Every control shows the working decoder (no signals)."""
        d = self.decoder()
        self.speed_table.show_decoder(d)
        self.avoid_group.show_decoder(d)
        self.turn_table.show_decoder(d)
        if expression:
            self.expression_edit.setText(d.expression or "")
            self._clear_error()
        self.tabs.setTabVisible(0, d.kind == "time")
        self.avoid_box.setVisible(d.kind != "metric")
        self.preset_combo.blockSignals(True)
        origin = self._history.present.origin
        self.preset_combo.setCurrentIndex(self._presets.index(origin)
                                          if origin in self._presets else -1)
        self.preset_combo.blockSignals(False)
        self._show_status()

    def _show_status(self) -> None:
        state = self._history.present
        self.status_label.setText(state.title)
        self.status_label.setToolTip(state.decoder.description)
        self.undo_action.setEnabled(self.can_undo())
        self.redo_action.setEnabled(self.can_redo())

    def _show_error(self, text: str, under_expression: bool = False) -> None:
        """Show ``text`` (already laid out in lines) above the tabs, or right under
        the expression it points into."""
        label = self.error_label
        label.parentWidget().layout().removeWidget(label)
        if under_expression:
            self._expression_layout.insertWidget(1, label)
        else:
            self._root.insertWidget(2, label)
        label.setText(text)
        label.setVisible(True)

    def _show_expression_error(self, expression: str, error: ExpressionError, lead: int) -> None:
        """Red border, the offending column selected, a caret under it in the label."""
        self._expression_error = True
        self.expression_edit.setStyleSheet(_BAD_EDIT_STYLE)
        column = lead + error.column
        if column < len(self.expression_edit.text()):
            self.expression_edit.setSelection(column, 1)
        else:
            self.expression_edit.setCursorPosition(column)
        self._show_error(caret_text(expression, error.column, error.reason), True)
        self.invalid.emit(f"expression: column {error.column}: {error.reason}")

    def _clear_error(self) -> None:
        self._expression_error = False
        self.expression_edit.setStyleSheet("")
        self.error_label.clear()
        self.error_label.setVisible(False)

    # --- dialogs --------------------------------------------------------------------
    def _load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load decoder", str(DECODER_DIR),
                                              "Decoders (*.toml)")
        if path:
            try:
                self.load_file(path)
            except DecoderError:
                pass                # shown inline already

    def _save_dialog(self) -> None:
        name = f"{self.decoder().name}.toml"
        path, _ = QFileDialog.getSaveFileName(self, "Save decoder", name, "Decoders (*.toml)")
        if path:
            path = path if path.endswith(".toml") else path + ".toml"
            try:
                self.save_file(path)
            except OSError:
                pass                # shown inline already
