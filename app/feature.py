"""What a feature's controller is, the registry that maps a job kind to its controller,
and the generic controller of a capability that has no feature folder of its own.

A feature folder (``app/features/<name>/``) holds everything one capability shows; its
controller (a ``Controller`` subclass marked ``@register_controller``) owns that
capability's side-panel box, docks, map overlay, menu actions and engine jobs. The
window makes one of each registered class in the order of their ``order``, hands it
the answers of the job kinds it lists, and calls its hooks when the session changes;
the hooks do nothing by default, so a controller says only what concerns it.

A feature talks to the others only through the session, the window's hooks and the
engine's answers, never through another feature's widgets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QPlainTextEdit

CONTROLLERS: dict[str, type] = {}     # job kind (a capability name) -> controller class


def register_controller(cls):
    """Class decorator: ``cls`` handles the job kinds it lists in ``kinds``."""
    for kind in cls.kinds:
        CONTROLLERS[kind] = cls
    return cls


def unregister_controller(cls) -> None:
    for kind in [k for k, c in CONTROLLERS.items() if c is cls]:
        del CONTROLLERS[kind]


def controller_classes() -> list[type]:
    """Each registered class once, in the order of their ``order`` (then registration)."""
    classes = list(dict.fromkeys(CONTROLLERS.values()))
    return sorted(classes, key=lambda cls: cls.order)


@dataclass(frozen=True)
class Exportable:
    """Something a feature shows that File ▸ Export can write."""
    name: str                           # "route", "tree", ...: the file's default name part
    formats: tuple[tuple[str, str], ...]    # (dialog filter, extension), the first the default
    writer: Callable                    # writer(path, ext) -> write(): reads the session now,
                                        # the returned write() runs on the engine thread (and
                                        # may return a line naming a file written beside it)
    offered_with: str = ""              # offered in the file dialog of that one, not by default
    rank: int = 0                       # the most specific first (a path read from a tree is a route)


PATH_FORMATS = (("GeoJSON line (*.geojson)", ".geojson"), ("GPX track (*.gpx)", ".gpx"))


def path_writer(graph, path, out, ext: str, described):
    """write() of a path as GeoJSON or GPX (``described``: properties, title, description)."""
    from engine.export import write_path
    return lambda: write_path(graph, path, {"geojson" if ext == ".geojson" else "gpx": out},
                              *described)


class Controller(QObject):
    order: int = 100                 # place among the features (side panel, menus, clicks)
    kinds: tuple[str, ...] = ()      # job kinds whose answers it gets
    modes: dict[str, str] = {}       # mode it owns -> the hint shown in that mode
    owns_endpoints: bool = False     # in its modes the endpoints are its own: no route is drawn

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.engine = window.engine
        self.map_view = window.map_view

    # ------------------------------------------------------- registry actions
    def trigger(self, capability: str) -> None:
        """Its capability's menu action was triggered."""

    def exportables(self) -> list[Exportable]:
        """What it shows now that can be exported, the most specific first."""
        return []

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

    def tree_changed(self, answer) -> None:
        """The shortest-path tree on the map (engine.capabilities.tree.TreeAnswer), or None."""

    def route_changed(self, route) -> None:
        """The route on the map (session.ShownRoute), or None."""

    def route_answered(self, params: dict, answer, before) -> None:
        """A route (engine.capabilities.route.RouteAnswer for ``params``' source and
        target) that another feature's job answered; ``before``: the route it replaces."""

    # ------------------------------------ requests (the feature that draws routes answers)
    def show_route(self, route, text: str, error: bool = False) -> None:
        """Draw ``route`` (a session.ShownRoute, None: none) with ``text`` as the route."""

    def put_endpoints(self, source: int | None, target: int | None) -> None:
        """Set the start and destination (no route is asked for)."""

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


class GenericController(Controller):
    """The controller of a registered capability with no feature folder of its own: its
    menu action runs it on the engine thread with the session's start and destination
    (node parameters), metric and the other parameters' defaults, and shows the
    capability's text (``to_text(to_json(...))``) in an output dock."""

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
        text_of = self.capability.record_text
        self.output.appendPlainText(text_of(record) if text_of else str(record))

    def on_result(self, job, text) -> None:
        self.output.appendPlainText(str(text))
        self.window.show_dock(self.dock)
        self.window.statusBar().showMessage(f"{self.capability.label}: done", 5000)
