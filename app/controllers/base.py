"""What every controller is, and the registry that maps a job kind to its controller.

A controller owns one capability's side-panel box, docks, map overlay, menu actions
and engine jobs. The window makes one of each registered class, hands it the answers
of the job kinds it lists, and calls its hooks when the session changes; the hooks
do nothing by default, so a controller says only what concerns it.
"""
from __future__ import annotations

from PySide6.QtCore import QObject

CONTROLLERS: dict[str, type] = {}     # job kind (a capability name, or internal) -> controller class


def register_controller(cls):
    """Class decorator: ``cls`` handles the job kinds it lists in ``kinds``."""
    for kind in cls.kinds:
        CONTROLLERS[kind] = cls
    return cls


def controller_classes() -> list[type]:
    """Each registered class once, in registration order."""
    return list(dict.fromkeys(CONTROLLERS.values()))


class Controller(QObject):
    kinds: tuple[str, ...] = ()      # job kinds whose answers it gets
    hints: dict[str, str] = {}       # mode it owns -> the hint shown in that mode

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.engine = window.engine
        self.map_view = window.map_view

    # ------------------------------------------------------- registry actions
    def trigger(self, capability: str) -> None:
        """Its capability's menu action was triggered."""

    # ------------------------------------------------------------- job answers
    def on_started(self, job) -> None:
        pass

    def on_record(self, job, record) -> None:
        pass

    def on_result(self, job, result) -> None:
        pass

    def on_error(self, job, message: str) -> None:
        self.window.show_error(f"{job.label} failed: {message}")

    def on_cancelled(self, job, message: str) -> None:
        self.window.statusBar().showMessage(message, 5000)

    # ------------------------------------------------------------ session hooks
    def graph_changed(self) -> None:
        """A new graph was adopted (the session holds nothing of the old one)."""

    def endpoints_changed(self, which: str, live: bool = False) -> None:
        """``which``: "source", "target", "both" or "metric"; ``live`` while dragging."""

    def mode_changed(self, old: str, new: str) -> None:
        pass

    def hierarchy_changed(self) -> None:
        pass

    def cleared(self) -> None:
        """Esc: no endpoints, no route, no tree."""

    def node_clicked(self, node: int, shift: bool) -> bool:
        """A click in a mode this controller owns; True when it handled it."""
        return False

    def slot_failed(self) -> None:
        """A GUI slot raised (the banner says what): drop any "working…" text left."""

    def context_menu(self, menu, node: int) -> None:
        """Add its entries to the right-click menu of ``node``."""

    def colouring_shown(self, name: str | None) -> None:
        """The map now shows colouring ``name`` ("tree", "levels", None: road classes)."""
