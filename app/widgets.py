"""Small widgets and HTML helpers the window and the controllers share."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QFrame, QGroupBox, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QScrollArea, QSizePolicy, QToolButton, QVBoxLayout, QWidget)


def rgb(color) -> str:
    return "#%02x%02x%02x" % tuple(color[:3])


def swatch(color, text: str, size: int = 15) -> str:
    """A short line in ``color`` before ``text`` (legends)."""
    return f"<span style='color:{rgb(color)}; font-size:{size}px'><b>━━</b></span>&nbsp;{text}"


def legend_table(rows: list[tuple[tuple, str]], columns: int = 2) -> str:
    """(colour, text) rows as a compact HTML table, filled column by column."""
    per_column = -(-len(rows) // columns)
    cells = [f"<td>{swatch(c, text)}&nbsp;&nbsp;</td>" for c, text in rows]
    lines = ["".join(cells[r::per_column]) for r in range(per_column)]
    return "<table cellspacing='0' cellpadding='0'>" + "".join(f"<tr>{x}</tr>" for x in lines) + "</table>"


def button_row(*buttons: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    for b in buttons:
        row.addWidget(b)
    return row


def dot_label(color, text: str) -> QLabel:
    return QLabel(f"<span style='color:{rgb(color)}; font-size:16px'>●</span> {text}")


def grey(text: str) -> str:
    return f"<span style='color:#777'>{text}</span>"


def red(text: str) -> str:
    return f"<span style='color:#b3261e'>{text}</span>"


class FoldingLabel(QLabel):
    """A wrapped, selectable label that takes no room while it has no text."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text, wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)
        self.setVisible(bool(text))

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))


def selectable_label(text: str = "") -> QLabel:
    return QLabel(text, wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)


class ErrorBanner(QFrame):
    """A non-modal, dismissable error line above the map."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setStyleSheet("ErrorBanner { background: #fdecea; border-bottom: 1px solid #e0a49c; }"
                           "QLabel { color: #8a1c12; }")
        self.label = selectable_label()
        close = QToolButton(text="✕", autoRaise=True, toolTip="Dismiss")
        close.clicked.connect(self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 6, 6)
        row.addWidget(self.label, 1)
        row.addWidget(close, 0, Qt.AlignTop)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()


class JobProgress:
    """The status bar's progress of long engine jobs: a label, a bar and Cancel."""

    def __init__(self, status_bar, cancel) -> None:
        self.label = QLabel()
        self.bar = QProgressBar(maximumWidth=180, maximumHeight=16, textVisible=False)
        self.bar.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda: cancel())   # not with the "checked" argument
        for w in (self.label, self.bar, self.cancel_button):
            status_bar.addPermanentWidget(w)
        self.set_visible(False)

    def start(self, text: str) -> None:
        self.bar.setValue(0)
        self.label.setText(text)
        self.set_visible(True)

    def update(self, fraction: float, message: str) -> None:
        self.bar.setValue(int(1000 * min(max(fraction, 0.0), 1.0)))
        if message:
            self.label.setText(message)

    def set_visible(self, on: bool) -> None:
        for w in (self.label, self.bar, self.cancel_button):
            w.setVisible(on)


class Section(QWidget):
    """A side-panel box under a header that folds it away (the box's title moves into
    the header, so it is not written twice)."""

    def __init__(self, box: QWidget, expanded: bool) -> None:
        super().__init__()
        title = box.title() if isinstance(box, QGroupBox) else box.windowTitle()
        if isinstance(box, QGroupBox):      # the header is its title and its frame
            box.setTitle("")
            box.setStyleSheet("QGroupBox { border: 0; margin: 0; padding: 0; }")
        if box.layout() is not None:
            box.layout().setContentsMargins(10, 4, 4, 6)
        self.box = box
        self.header = QToolButton(text=title, checkable=True, autoRaise=True,
                                  toolButtonStyle=Qt.ToolButtonTextBesideIcon,
                                  sizePolicy=QSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed),
                                  toolTip="Show or hide this box", focusPolicy=Qt.NoFocus)
        self.header.setStyleSheet("QToolButton { font-weight: bold; text-align: left; padding: 1px; }")
        self.header.toggled.connect(self._show)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.header)
        col.addWidget(box)
        self.header.setChecked(expanded)
        self._show(expanded)

    @property
    def expanded(self) -> bool:
        return self.header.isChecked()

    def expand(self) -> None:
        self.header.setChecked(True)

    def fold(self) -> None:
        self.header.setChecked(False)

    def _show(self, on: bool) -> None:
        self.header.setArrowType(Qt.DownArrow if on else Qt.RightArrow)
        self.box.setVisible(on)


class SidePanel(QScrollArea):
    """The side panel: the controllers' boxes in a column, then the current mode's hint.

    Each box is a ``Section`` with a header that folds it. The first box (routes) and
    the ``last`` ones (Network) start open, the others folded, so the panel fits a
    1280x800 window without scrolling; a box opens when its capability is used
    (``open``: the window calls it for the controller's actions, mode and jobs).
    """

    def __init__(self) -> None:
        super().__init__(widgetResizable=True, frameShape=QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setMinimumWidth(320)
        self.setMaximumWidth(440)
        inner = QWidget()
        inner.setMinimumWidth(300)
        inner.setMaximumWidth(420)
        self.column = QVBoxLayout(inner)
        self.column.setContentsMargins(6, 4, 6, 4)
        self.column.setSpacing(4)
        self.help_label = QLabel(wordWrap=True)
        self.help_label.setStyleSheet("color: #666; font-size: 11px;")
        self.column.addWidget(self.help_label)
        self.column.addStretch(1)
        self.setWidget(inner)
        self.sections: list[Section] = []
        self._tail = 0                 # boxes kept at the end (Network)
        self._first: Section | None = None

    def add(self, box: QWidget, last: bool = False) -> Section:
        """A box above the hint; ``last`` ones stay at the end."""
        first = not last and len(self.sections) == self._tail      # the first box above the tail
        section = Section(box, expanded=last or first)
        if first:
            self._first = section
        self.column.insertWidget(self.column.count() - 2 - (0 if last else self._tail), section)
        self._tail += last
        self.sections.append(section)
        return section

    def open(self, widget: QWidget, alone: bool = True) -> None:
        """Unfold the section that holds ``widget``. When it was folded and ``alone``,
        fold the other capabilities' sections and Network (the first, routes, stays as
        it is): the panel then fits 1280x800 without scrolling."""
        target = next((s for s in self.sections if s.isAncestorOf(widget)), None)
        if target is not None:
            self.open_section(target, alone)

    def open_section(self, target: Section, alone: bool = True) -> None:
        """``open`` for a section itself."""
        if target.expanded or not alone:
            target.expand()
            return
        for section in self.sections:
            if section is not target and section is not self._first:
                section.fold()
        target.expand()

    def reveal(self, widget: QWidget) -> None:
        """Unfold its section, and scroll to ``widget`` once the layout has taken its new text."""
        self.open(widget)
        QTimer.singleShot(0, lambda: self.ensureWidgetVisible(widget, 0, 0))
