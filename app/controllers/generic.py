"""The controller of a registered capability that has a menu and no controller of its
own: its menu action runs it on the engine thread with the session's start and
destination (node parameters), metric and the other parameters' defaults, and shows
the capability's text (``to_text(to_json(...))``) in an output dock."""
from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QPlainTextEdit

from engine import capabilities

from app.controllers.base import Controller


class GenericController(Controller):
    def __init__(self, window, capability) -> None:
        super().__init__(window)
        self.capability = capability
        self.kinds = (capability.name,)
        self.action = window.capability_action(capability.name)
        self.output = QPlainTextEdit(readOnly=True)
        self.output.setFont(QFont("monospace"))
        self.dock = window.add_dock(capability.name, capability.label, self.output)

    def params(self) -> dict | None:
        """The capability's parameters from the session; None (with a message) when a
        node it needs is not set."""
        s, params = self.session, self.capability.defaults()
        ends = iter((s.source, s.target))
        for p in self.capability.params:
            if p.node:
                params[p.name] = next(ends, None)
                if params[p.name] is None and p.required:
                    self.window.statusBar().showMessage(
                        f"{self.capability.label}: set a start (and destination) first", 6000)
                    return None
            elif p.name == "metric" and s.metric:
                params["metric"] = s.metric
        return params

    def trigger(self, capability: str) -> None:
        if self.session.graph is None:
            self.window.statusBar().showMessage(f"{self.capability.label}: open a graph first", 6000)
            return
        params = self.params()
        if params is not None:
            self.output.setPlainText("")
            self.engine.submit(self.capability.name, params, as_text=True)

    def on_record(self, job, record) -> None:
        text_of = getattr(self.capability, "record_text", None)
        self.output.appendPlainText(text_of(record) if text_of else str(record))

    def on_result(self, job, text) -> None:
        self.output.appendPlainText(str(text))
        self.window.show_dock(self.dock)
        self.window.statusBar().showMessage(f"{self.capability.label}: done", 5000)


def generic_capabilities(has_controller) -> list:
    """Registered capabilities with a menu and no controller of their own."""
    return [c for c in capabilities.all_capabilities() if c.menu and not has_controller(c.name)]
