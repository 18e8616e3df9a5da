"""Pieces of the decoder editor (app/features/crp/decoder_editor.py): the speed table, the avoid
toggles, the turn-cost table, the undo history and the inline error text. Each control
group only shows a Decoder and reports changes; building and validating the new
decoder is the editor's job."""
from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QDoubleSpinBox, QGridLayout, QLabel, QSlider, QSpinBox,
                               QWidget)

from engine.crp.metric.decoder import FORBIDDEN_TURN, Decoder
from engine.core.turns import TURN_TYPES
from engine.core.graph import ROAD_CLASSES

SPEED_RANGE = (1, 200)            # km/h shown by the sliders and spins
TURN_MAX = 3600.0
AVOID = {"motorway": "Motorways", "ferry": "Ferries", "toll": "Toll roads",
         "unpaved": "Unpaved roads"}
AVOID_TAGS = ("toll", "unpaved")  # the others are road classes
TURN_UNITS = {"time": ("s", "seconds"), "distance": ("m", "metres"),
              "metric": ("u", "the metric column's units (scaled like the column)")}
ERROR_WIDTH = 44                  # characters of the inline error; fits a ~350 px dock


def _label(name: str) -> str:
    return name.replace("_", " ")


def _compact_grid(widget: QWidget) -> QGridLayout:
    """The tables' layout: tight rows, the middle column taking the spare width."""
    grid = QGridLayout(widget)
    grid.setContentsMargins(4, 4, 4, 4)
    grid.setVerticalSpacing(2)
    grid.setColumnStretch(1, 1)
    return grid


class SpeedTable(QWidget):
    """One row per road class: name, slider and spin box in km/h, kept in sync."""
    changed = Signal(str, int)    # class, km/h

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        grid = _compact_grid(self)
        self.sliders: dict[str, QSlider] = {}
        self.spins: dict[str, QSpinBox] = {}
        self.rows: dict[str, tuple[QWidget, ...]] = {}
        for r, cls in enumerate(ROAD_CLASSES):
            tip = f"Speed on {_label(cls)} roads in km/h ({SPEED_RANGE[0]}..{SPEED_RANGE[1]})"
            name = QLabel(_label(cls), toolTip=tip)
            slider = QSlider(Qt.Horizontal, toolTip=tip)
            spin = QSpinBox(toolTip=tip, suffix=" km/h")
            for w in (slider, spin):
                w.setRange(*SPEED_RANGE)
                w.valueChanged.connect(lambda v, c=cls: self._moved(c, v))
            self.sliders[cls], self.spins[cls], self.rows[cls] = slider, spin, (name, slider, spin)
            for col, w in enumerate(self.rows[cls]):
                grid.addWidget(w, r, col)
        grid.setRowStretch(len(ROAD_CLASSES), 1)

    def _moved(self, cls: str, kmh: int) -> None:
        for w in (self.sliders[cls], self.spins[cls]):   # the twin follows without echo
            if w.value() != kmh:
                w.blockSignals(True)
                w.setValue(kmh)
                w.blockSignals(False)
        self.changed.emit(cls, kmh)

    def show_decoder(self, d: Decoder) -> None:
        speeds = dict(d.speeds)
        for cls in ROAD_CLASSES:
            kmh = round(speeds.get(cls, SPEED_RANGE[0]))
            for w in (self.sliders[cls], self.spins[cls]):
                w.blockSignals(True)
                w.setValue(kmh)
                w.blockSignals(False)

    def show_classes(self, classes: set[str] | None) -> None:
        """Hide the rows of classes the graph lacks (None: show all)."""
        for cls, widgets in self.rows.items():
            for w in widgets:
                w.setVisible(classes is None or cls in classes)


class AvoidGroup(QWidget):
    """Check boxes that put a road class or tag into Decoder.forbid."""
    changed = Signal(str, bool)   # class or tag, avoided

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        self.boxes: dict[str, QCheckBox] = {}
        for i, (key, text) in enumerate(AVOID.items()):
            box = QCheckBox(text)
            box.toggled.connect(lambda on, k=key: self.changed.emit(k, on))
            self.boxes[key] = box
            grid.addWidget(box, i // 2, i % 2)
        self.show_features(None, None)

    def show_decoder(self, d: Decoder) -> None:
        for key, box in self.boxes.items():
            box.blockSignals(True)
            box.setChecked(key in d.forbid)
            box.blockSignals(False)

    def show_features(self, classes: set[str] | None, tags: set[str] | None) -> None:
        """Enable a toggle only where the graph has the class or tag (None: unknown)."""
        for key, box in self.boxes.items():
            have = tags if key in AVOID_TAGS else classes
            ok = have is None or key in have
            box.setEnabled(ok)
            box.setToolTip(f"Never use {AVOID[key].lower()} (Decoder.forbid)" if ok
                           else f"This graph has no {AVOID[key].lower()}")


class TurnTable(QWidget):
    """Cost per turn type (0..3600 in the decoder's units) and a 'forbidden' box."""
    changed = Signal(str, object)  # turn type, cost or "forbidden"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        grid = _compact_grid(self)
        self.spins: dict[str, QDoubleSpinBox] = {}
        self.forbidden: dict[str, QCheckBox] = {}
        for r, t in enumerate(TURN_TYPES):
            spin = QDoubleSpinBox(decimals=1, maximum=TURN_MAX, singleStep=1.0)
            box = QCheckBox("forbidden", toolTip=f"Never make a {_label(t)} turn")
            spin.valueChanged.connect(lambda v, t=t: self._edited(t))
            box.toggled.connect(lambda on, t=t: self._edited(t))
            self.spins[t], self.forbidden[t] = spin, box
            grid.addWidget(QLabel(_label(t).replace("u turn", "U-turn")), r, 0)
            grid.addWidget(spin, r, 1)
            grid.addWidget(box, r, 2)
        self.set_kind("time")

    def _edited(self, t: str) -> None:
        banned = self.forbidden[t].isChecked()
        self.spins[t].setEnabled(not banned)
        self.changed.emit(t, FORBIDDEN_TURN if banned else self.spins[t].value())

    def set_kind(self, kind: str) -> None:
        short, long = TURN_UNITS[kind]
        for t, spin in self.spins.items():
            spin.setSuffix(f" {short}")
            spin.setToolTip(f"Cost of a {_label(t)} turn in {long} (0..{TURN_MAX:g})")

    def show_decoder(self, d: Decoder) -> None:
        self.set_kind(d.kind)
        for t, cost in d.turn_costs().items():
            banned = cost == FORBIDDEN_TURN
            for w, value in ((self.spins[t], None if banned else cost),
                             (self.forbidden[t], banned)):
                w.blockSignals(True)
                if isinstance(w, QCheckBox):
                    w.setChecked(value)
                elif value is not None:
                    w.setValue(float(value))
                w.blockSignals(False)
            self.spins[t].setEnabled(not banned)


@dataclass(frozen=True)
class State:
    """One step of the history: the decoder and what it was loaded from."""
    decoder: Decoder
    origin: str              # preset name or file name
    origin_decoder: Decoder  # as loaded, to say "(edited)"

    @property
    def title(self) -> str:
        return self.origin + (" (edited)" if self.decoder != self.origin_decoder else "")


class History:
    """Undo and redo of States. A change by the same control within merge_seconds of
    the previous one replaces it instead of adding a step (a slider drag is one step)."""

    def __init__(self, state: State, merge_seconds: float = 0.5, clock=time.monotonic) -> None:
        self.merge_seconds, self.clock = merge_seconds, clock
        self.reset(state)

    def reset(self, state: State) -> None:
        self.present, self.undo_stack, self.redo_stack = state, [], []
        self._last: tuple[str, float] | None = None

    def push(self, state: State, key: str | None) -> None:
        now = self.clock()
        merge = (key is not None and self._last is not None and self._last[0] == key
                 and now - self._last[1] <= self.merge_seconds and self.undo_stack)
        if not merge:
            self.undo_stack.append(self.present)
        self.present, self.redo_stack = state, []
        self._last = (key, now) if key is not None else None

    def undo(self) -> State | None:
        return self._move(self.undo_stack, self.redo_stack)

    def redo(self) -> State | None:
        return self._move(self.redo_stack, self.undo_stack)

    def _move(self, source: list, target: list) -> State | None:
        if not source:
            return None
        target.append(self.present)
        self.present, self._last = source.pop(), None
        return self.present


def caret_text(expression: str, column: int, reason: str, width: int = ERROR_WIDTH) -> str:
    """The expression (a window around ``column`` if long), a caret under the column
    and the reason wrapped to ``width``: plain text for a monospace label."""
    start = max(0, min(column - width // 2, len(expression) - width + 2))
    shown = expression[start:start + width - 2]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + len(shown) < len(expression) else ""
    caret = " " * (len(prefix) + column - start) + "^"
    return "\n".join([prefix + shown + suffix, caret] + textwrap.wrap(reason, width))


def wrapped(message: str, width: int = ERROR_WIDTH) -> str:
    return "\n".join(textwrap.wrap(message, width, break_on_hyphens=False)) or message
