"""RouteLab's main window: the map, the side panel, the docks, the menus and the status
bar, with the features' controllers (app/features) filling them.

The window builds what every capability shares and knows none of them: it discovers
the features (app/features), makes one controller per registered class in their
``order`` (and a generic one per registered capability with no controller), makes a
menu action for every capability of the registry (engine.capabilities: menu, text,
shortcut; a mode action when its controller owns a mode of that name), hands each
engine answer to the controller of its job kind, and passes session changes (graph,
endpoints, mode, hierarchy, tree, route, Esc) to all of them as hooks; requests
between features (draw this route, set these endpoints, add a row to that box) go
through it too. Modes are one exclusive action group; clicks on the map go to the
controller of the current mode first.

Layout: the map in the middle; the side panel is a fixed dock on the right that spans
the window's full height, so the charts' docks at the bottom sit under the map only
and never squeeze the panel. A controller's side-panel box unfolds when the person
uses that capability: one of its actions, its mode or one of its jobs.
"""
from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMenu, QVBoxLayout, QWidget

from engine import capabilities

from app import errors
from app import features
from app.feature import CONTROLLERS, GenericController, controller_classes
from app.engine_thread import EngineClient
from engine.capabilities import CANCEL
from app.map_view import MapView
from app.session import Session
from app.widgets import ErrorBanner, JobProgress, SidePanel


PANEL_WIDTH = 350          # the side panel's width at start (it may be dragged 320-440)
DOCK_MIN_HEIGHT = 220      # a bottom dock's charts stay legible down to this
DOCK_HEIGHT = 290          # a chart dock's height when shown: a plot area of 150 px and more
DOCK_MAX_SHARE = 0.37      # of the window's height, at most: the map keeps the rest
BASE_MODE = "route"        # the mode the window opens in, and goes back to when one is switched off


class MainWindow(QMainWindow):
    error_shown = Signal(str)       # any error the person is shown
    graph_shown = Signal(object)    # RoadGraph now on screen
    _slot_failed = Signal(str)      # from sys.excepthook, whatever thread raised

    def __init__(self, backend: str = "auto") -> None:
        super().__init__()
        self.session = Session()
        self.last_error = ""
        self.node_menu: QMenu | None = None          # the last right-click menu
        self.engine = EngineClient(backend, parent=self)
        self.map_view = MapView()
        self.banner = ErrorBanner()
        self._menus: dict[str, QMenu] = {}
        self._needs: dict[str, list] = {"graph": [], "hierarchy": []}   # actions enabled by state
        self._docks: list[QDockWidget] = []
        self._painters: dict[str, callable] = {}      # colouring name -> the controller's painter
        self._colouring_key = None
        self._modes = QActionGroup(self)
        self._modes.setExclusionPolicy(QActionGroup.ExclusionPolicy.ExclusiveOptional)   # T again: routes
        self._mode_actions: dict[str, QAction] = {}
        self._capability_actions: dict[str, QAction] = {}
        self._box_columns: dict = {}                  # name -> a box's column others extend
        self._actions: list[QAction] = []             # every action made, in order
        self._sections: dict = {}                     # controller -> its side-panel sections
        self.panel = SidePanel()
        self._build_panel_dock()
        self._build_status_bar()
        self._build_controllers()
        self._build_layout()
        self.set_mode(BASE_MODE)
        self._connect()
        self._slot_errors = errors.SlotErrors(self._slot_failed.emit).install()   # undone on close

    # ------------------------------------------------------------- building
    def _build_panel_dock(self) -> None:
        """The side panel: a dock with no title bar that cannot be closed or floated,
        owning the right-hand corners (full height)."""
        self.panel_dock = QDockWidget("Side panel", self, objectName="panel",
                                      features=QDockWidget.NoDockWidgetFeatures)
        self.panel_dock.setTitleBarWidget(QWidget())
        self.panel_dock.setWidget(self.panel)
        self.addDockWidget(Qt.RightDockWidgetArea, self.panel_dock)
        self.setCorner(Qt.TopRightCorner, Qt.RightDockWidgetArea)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.hint_label = QLabel()
        self.hint_label.setStyleSheet("color: #555;")
        bar.addWidget(self.hint_label, 1)
        self.progress = JobProgress(bar, self.engine.cancel)
        self.cancel_button = self.progress.cancel_button
        self.size_label = QLabel()
        self.backend_label = QLabel("starting engine…")
        bar.addPermanentWidget(self.size_label)
        bar.addPermanentWidget(self.backend_label)

    def _build_controllers(self) -> None:
        """One controller per registered class, then one per capability that has a menu
        and no controller; the job kinds each one handles."""
        self.controllers, self._owners = [], {}
        features.discover()
        makers = [*controller_classes(), *(partial(GenericController, capability=c)
                                           for c in capabilities.all_capabilities()
                                           if c.name not in CONTROLLERS)]
        for make in makers:
            first_section, first_action = len(self.panel.sections), len(self._actions)
            controller = make(self)
            self.controllers.append(controller)
            self._owners.update(dict.fromkeys(controller.kinds, controller))
            sections = self._sections[controller] = self.panel.sections[first_section:]
            for action in self._actions[first_action:]:     # using a capability opens its box
                action.triggered.connect(partial(self._open_sections, sections))
                action.toggled.connect(lambda on, s=sections: on and self._open_sections(s))
        for c in capabilities.all_capabilities():   # every one on the menus, asked for or not
            self.capability_action(c.name)
        file_menu = self.menu("&File")
        file_menu.addSeparator()
        self.add_action(file_menu, "&Quit", QKeySequence.Quit, self.close)
        view_menu = self.menu("&View")
        self.add_action(view_menu, "&Fit network", "F", self.map_view.fit)
        for dock in self._docks:
            view_menu.addAction(dock.toggleViewAction())

    def _build_layout(self) -> None:
        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.banner)
        col.addWidget(self.map_view, 1)
        self.setCentralWidget(left)
        self.resize(1280, 800)
        self.resizeDocks([self.panel_dock], [PANEL_WIDTH], Qt.Horizontal)
        self.setWindowTitle("RouteLab")
        self.map_view.plot.setFocus()

    def _connect(self) -> None:
        e = self.engine
        e.backend_ready.connect(lambda name, description: self.backend_label.setText(description))
        e.submitted.connect(self._on_submitted)
        e.started.connect(self._on_started)
        e.progress.connect(self._on_progress)
        e.record.connect(self._on_record)
        for event in ("result", "error", "cancelled"):
            getattr(e, event).connect(partial(self._on_final, event))
        self.map_view.node_clicked.connect(self._on_node_clicked)
        self.map_view.context_requested.connect(self._on_context_menu)
        self._slot_failed.connect(self._on_slot_failed)

    # ------------------------------------------- what controllers build with
    def menu(self, title: str) -> QMenu:
        if title not in self._menus:
            self._menus[title] = self.menuBar().addMenu(title)
        return self._menus[title]

    def add_action(self, menu, text, shortcut, slot, toggled: bool = False,
                   needs_graph: bool = False, needs_hierarchy: bool = False) -> QAction:
        action = QAction(text, self, checkable=toggled)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.WindowShortcut)
        (action.toggled if toggled else action.triggered).connect(slot)
        menu.addAction(action)
        self.addAction(action)
        self._actions.append(action)
        for need, wanted in (("graph", needs_graph), ("hierarchy", needs_hierarchy)):
            if wanted:
                action.setEnabled(False)
                self._needs[need].append(action)
        return action

    def capability_action(self, name: str) -> QAction:
        """The menu action of registered capability ``name`` (made on the first call: a
        controller asks for it where its menu should list it): its menu, text and
        shortcut from the registry. A capability whose controller owns a mode of its
        name gets that mode's action; any other triggers its controller."""
        if name in self._capability_actions:
            return self._capability_actions[name]
        c = capabilities.get(name)
        menu = self.menu(c.menu)
        if name in getattr(CONTROLLERS.get(name), "modes", {}):
            action = self.add_mode_action(name, menu, c.action_text, c.shortcut)
        else:
            action = self.add_action(menu, c.action_text, c.shortcut,
                                     lambda: self._owners[name].trigger(name), needs_graph=True)
        self._capability_actions[name] = action
        return action

    def add_mode_action(self, mode: str, menu, text: str, shortcut: str,
                        needs_hierarchy: bool = False) -> QAction:
        action = self.add_action(menu, text, shortcut, partial(self._on_mode_toggled, mode),
                                 toggled=True, needs_hierarchy=needs_hierarchy)
        self._modes.addAction(action)
        self._mode_actions[mode] = action
        return action

    def add_panel(self, widget: QWidget, last: bool = False) -> None:
        self.panel.add(widget, last)

    def add_dock(self, name: str, title: str, widget: QWidget, right: bool = False) -> QDockWidget:
        """A hidden dock at the bottom, under the map, tabbed with the others (``right``:
        on the right, beside the side panel)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        if right:
            self.addDockWidget(Qt.RightDockWidgetArea, dock)
            self.splitDockWidget(self.panel_dock, dock, Qt.Horizontal)
        else:
            widget.setMinimumHeight(DOCK_MIN_HEIGHT)
            self.addDockWidget(Qt.BottomDockWidgetArea, dock)
            bottom = [d for d in self._docks if self.dockWidgetArea(d) == Qt.BottomDockWidgetArea]
            if bottom:
                self.tabifyDockWidget(bottom[-1], dock)
        self._docks.append(dock)
        dock.hide()
        return dock

    def show_dock(self, dock: QDockWidget, height: int = DOCK_HEIGHT) -> None:
        """Show a dock, ``height`` tall but at most DOCK_MAX_SHARE of the window (the
        map keeps the rest), and at least a quarter of a tall window."""
        if not dock.isVisible():
            dock.show()
            tall = min(max(height, self.height() // 4), int(self.height() * DOCK_MAX_SHARE))
            self.resizeDocks([dock], [max(tall, DOCK_MIN_HEIGHT)], Qt.Vertical)
        dock.raise_()

    def _open_sections(self, sections, *_) -> None:
        for section in sections:
            self.panel.open_section(section)

    def add_painter(self, name: str, paint) -> None:
        """``paint()`` puts colouring ``name`` of the session on the map."""
        self._painters[name] = paint

    def controller(self, kind: str):
        return self._owners.get(kind)

    # ---------------------------------------------------- session changes
    def broadcast(self, hook: str, *args) -> None:
        for c in self.controllers:
            getattr(c, hook)(*args)

    def graph_adopted(self) -> None:
        """The session holds a new graph (the map was reset)."""
        self._colouring_key = None
        for action in self._needs["graph"]:
            action.setEnabled(True)
        self.broadcast("graph_changed")
        self.apply_colouring()

    def hierarchy_adopted(self) -> None:
        for action in self._needs["hierarchy"]:
            action.setEnabled(self.session.hierarchy is not None)
        self.broadcast("hierarchy_changed")
        self.apply_colouring()

    def endpoints_changed(self, which: str, live: bool = False) -> None:
        self.broadcast("endpoints_changed", which, live)

    def owns_endpoints(self, mode: str) -> bool:
        """Is ``mode`` one whose feature answers the endpoints its own way (no route drawn)?"""
        return any(c.owns_endpoints and mode in c.modes for c in self.controllers)

    def show_route(self, route, text: str, error: bool = False) -> None:
        self.broadcast("show_route", route, text, error)

    def put_endpoints(self, source: int | None, target: int | None) -> None:
        self.broadcast("put_endpoints", source, target)

    def extend_box(self, name: str, widget: QWidget) -> None:
        """Put ``widget`` at the end of the side-panel box that was offered as ``name``."""
        self._box_columns[name].addWidget(widget)

    def offer_box(self, name: str, column) -> None:
        """Let other features add their rows to a box's ``column`` (a QVBoxLayout)."""
        self._box_columns[name] = column

    def clear(self) -> None:
        """Esc: no start, no destination, no route, no tree, no inspected node."""
        self.broadcast("cleared")

    def set_mode(self, mode: str) -> None:
        old = self.session.mode
        self.session.mode = mode
        self._mode_actions[mode].setChecked(True)     # toggles back here: a no-op now
        hint = next(c.modes[mode] for c in self.controllers if mode in c.modes)
        self.hint_label.setText(hint)
        self.panel.help_label.setText(hint)
        if old != mode:
            self.broadcast("mode_changed", old, mode)

    def _on_mode_toggled(self, mode: str, on: bool) -> None:
        if on and mode != self.session.mode:
            self.set_mode(mode)
        elif not on and not any(a.isChecked() for a in self._mode_actions.values()):
            self.set_mode(BASE_MODE)                  # a mode switched off goes back to routes

    def apply_colouring(self) -> None:
        """The map's colours: what the session says, painted by its controller."""
        key = self.session.colouring_key()
        if key != self._colouring_key:        # unchanged: keep the curves
            self._colouring_key = key
            if key is None:
                self.map_view.set_colouring(None)
            else:
                self._painters[key[0]]()
        self.broadcast("colouring_shown", self.map_view.colouring)

    def show_error(self, message: str) -> None:
        self.last_error = message
        self.banner.show_text(message)
        self.error_shown.emit(message)

    def _on_slot_failed(self, message: str) -> None:   # a GUI slot raised; drop "working…" states
        self.show_error(message)
        self.broadcast("slot_failed")

    # ----------------------------------------------------- engine answers
    def _on_submitted(self, job) -> None:
        if job.kind in self._owners:
            self._open_sections(self._sections.get(self._owners[job.kind], []))
        if job.policy == CANCEL:        # a long job: progress and Cancel from the start
            self.progress.start(job.label + "…")

    def _on_started(self, job, label: str) -> None:
        self._owners[job.kind].on_started(job)

    def _on_progress(self, job, fraction: float, message: str) -> None:
        if job.policy == CANCEL:
            self.progress.update(fraction, message)
        elif message:       # an interactive job's word (a first run compiling its code)
            self.statusBar().showMessage(message, 5000)

    def _on_record(self, job, record) -> None:
        self._owners[job.kind].on_record(job, record)

    def _on_final(self, event: str, job, payload) -> None:
        if not self.engine.busy:
            self.progress.set_visible(False)
        owner = self._owners.get(job.kind)
        if owner is not None:
            getattr(owner, f"on_{event}")(job, payload)
        elif event == "error":
            self.show_error(f"{job.label} failed: {payload}")

    # ---------------------------------------------------------------- map
    def _on_node_clicked(self, node: int, shift: bool) -> None:
        """The current mode's controller first, then the others in order."""
        first = [c for c in self.controllers if self.session.mode in c.modes]
        for c in first + self.controllers:
            if c.node_clicked(node, shift):
                return

    def _on_context_menu(self, node: int, global_pos) -> None:
        self.node_menu = self.node_menu or QMenu(self)
        self.node_menu.clear()
        self.node_menu.addSection(f"node {self.session.node_id(node)}")
        self.broadcast("context_menu", self.node_menu, node)
        self.node_menu.popup(global_pos)

    # ------------------------------------------------------- entry points
    def open_files(self, paths) -> int:
        return self.engine.open_files(paths)

    def open_default(self) -> int:
        return self.engine.generate_default()

    def adopt_graph(self, graph) -> int:
        return self.engine.adopt_graph(graph, f"Preparing {graph.source or 'graph'}")

    def closeEvent(self, event) -> None:
        self._slot_errors.uninstall()
        self.engine.shutdown()        # cancels the running step and waits for the thread
        super().closeEvent(event)
