"""Routes: the side panel's "Route" box (From, To, metric, Swap, Clear, the summary),
the endpoints and their markers, clicks in route mode, the route on the map and the
``route`` jobs (the CH query or bidirectional Dijkstra, whichever the engine has for
the metric; the summary names it).

Endpoints belong to every mode: a change goes to all controllers through
``window.endpoints_changed``, and this one routes unless tree mode is on.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLineEdit, QPushButton

from engine.capabilities.common import CURRENT_METRIC
from engine.core.polylines import route_polyline
from engine.core.units import Unit, unit_of

from app import map_style as style
from app.feature import PATH_FORMATS, Controller, Exportable, path_writer, register_controller
from app.features.route.text import change_text, turns_text
from app.session import ShownRoute
from app.widgets import button_row, dot_label, grey, red, selectable_label

HINT = ("Click: start, then destination · Shift+click: move start · right-click: menu · "
        "drag markers · X: swap · Esc: clear · T: tree mode · wheel: zoom · drag: pan · F: fit")
METRIC_TIP = "The metric routes minimize (trees use it too)"
DECODER_TIP = ("Routes use the CRP decoder of the Metric (CRP) dock; untick its \"Routes use "
               "this metric\" to route on a metric of the graph again")


@register_controller
class RouteController(Controller):
    order = 20
    kinds = ("route",)
    modes = {"route": HINT}
    shown = Signal(object)       # ShownRoute drawn (also a path read from a tree), or None

    def __init__(self, window) -> None:
        super().__init__(window)
        window.add_panel(self._build_box())
        menu = window.menu("&Route")
        window.capability_action("route")
        window.add_action(menu, "&Swap start and destination", "X", self.swap)
        window.add_action(menu, "&Clear", "Esc", window.clear)
        self.map_view.marker_dragged.connect(self._on_marker_dragged)
        self._before: ShownRoute | None = None   # compared with the answer of the last request

    def _build_box(self) -> QGroupBox:
        box = QGroupBox("Route")
        form = QFormLayout(box)
        self.source_edit = QLineEdit(placeholderText="click the map or type a node id")
        self.target_edit = QLineEdit(placeholderText="click again or type a node id")
        for which, edit in (("source", self.source_edit), ("target", self.target_edit)):
            edit.setFocusPolicy(Qt.ClickFocus)   # keys (X, F, Esc) go to the map until clicked
            edit.returnPressed.connect(lambda which=which: self._on_id_typed(which))
        self.metric_combo = QComboBox(toolTip=METRIC_TIP)
        self.metric_combo.currentTextChanged.connect(self._on_metric_changed)
        form.addRow(dot_label(style.SOURCE_COLOR, "From"), self.source_edit)
        form.addRow(dot_label(style.TARGET_COLOR, "To"), self.target_edit)
        form.addRow("Metric", self.metric_combo)
        self.swap_button = QPushButton("⇅ Swap (X)")
        self.swap_button.clicked.connect(self.swap)
        self.clear_button = QPushButton("Clear (Esc)")
        self.clear_button.clicked.connect(self.window.clear)
        form.addRow(button_row(self.swap_button, self.clear_button))
        self.summary = selectable_label()
        self.summary.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        form.addRow(self.summary)
        return box

    # ------------------------------------------------------------- endpoints
    def set_source(self, node: int | None) -> None:
        self._set_end("source", node)

    def set_target(self, node: int | None) -> None:
        self._set_end("target", node)

    def _set_end(self, which: str, node: int | None) -> None:
        setattr(self.session, which, node)
        self.map_view.set_marker(which, node)
        self._update_fields()
        self.window.endpoints_changed(which)

    def set_endpoints(self, source: int | None, target: int | None) -> None:
        s = self.session
        s.source, s.target = source, target
        self.map_view.set_marker("source", source)
        self.map_view.set_marker("target", target)
        self._update_fields()

    def swap(self) -> None:
        if self.session.swap():
            self.set_endpoints(self.session.source, self.session.target)
            self.window.endpoints_changed("both")

    def node_clicked(self, node: int, shift: bool) -> bool:
        """Route and tree mode alike: the first click (or Shift) sets the start."""
        (self.set_source if shift or self.session.source is None else self.set_target)(node)
        return True

    def _on_marker_dragged(self, which: str, node: int, finished: bool) -> None:
        setattr(self.session, which, node)
        self._update_fields()
        self.window.endpoints_changed(which, live=not finished)

    def _on_id_typed(self, which: str) -> None:
        g = self.session.graph
        if g is None:
            return
        text = (self.source_edit if which == "source" else self.target_edit).text().strip()
        if not text:
            self._set_end(which, None)
            return
        try:
            node = int(g.index_of(int(text))[0])
        except (KeyError, ValueError) as e:
            self.show(None, str(e).strip("'\"") if isinstance(e, KeyError) else f"{text!r} is not a node id",
                      error=True)
            return
        self._set_end(which, node)
        self.map_view.plot.setFocus()

    def _update_fields(self) -> None:
        s = self.session
        for node, edit in ((s.source, self.source_edit), (s.target, self.target_edit)):
            edit.setText("" if node is None or s.graph is None else str(s.node_id(node)))

    def _on_metric_changed(self, metric: str) -> None:
        if metric and self.metric_combo.isEnabled():
            self.session.metric = metric
            self.window.endpoints_changed("metric")

    def _show_metric(self) -> None:
        """The Metric box names what routes minimize: the CRP decoder while routes use
        it (locked: the Metric (CRP) dock chooses it), else the graph's metric (trees
        and modes that answer the endpoints their own way use that one)."""
        s, box = self.session, self.metric_combo
        if s.graph is None:
            return
        routes_use_it = s.crp_routes and s.cell_metric is not None and not self.window.owns_endpoints(s.mode)
        decoder = s.cell_metric.name if routes_use_it else None
        items = [f"{decoder} (CRP decoder)"] if decoder else list(s.graph.metric_names)
        if [box.itemText(i) for i in range(box.count())] != items:
            box.blockSignals(True)
            box.clear()
            box.addItems(items)
            box.blockSignals(False)
        box.blockSignals(True)
        box.setCurrentText(items[0] if decoder else s.metric)
        box.blockSignals(False)
        box.setEnabled(decoder is None)
        box.setToolTip(DECODER_TIP if decoder else METRIC_TIP)

    def context_menu(self, menu, node: int) -> None:
        menu.addAction("Route from here", lambda: self._route_end("source", node))
        menu.addAction("Route to here", lambda: self._route_end("target", node))
        menu.addSeparator()

    def _route_end(self, which: str, node: int) -> None:
        """A context-menu route end: leaves a mode that owns the endpoints, then routes."""
        if self.window.owns_endpoints(self.session.mode):
            self.window.set_mode("route")
        self._set_end(which, node)

    # ------------------------------------------------------------------ routes
    def graph_changed(self) -> None:
        g = self.session.graph
        self.engine.drop("route")
        self.show(None, "")
        self._show_metric()
        self._update_fields()

    def endpoints_changed(self, which: str, live: bool = False) -> None:
        """``which`` "metric" (a new metric or decoder): the route now stays as a ghost.
        Modes whose feature owns the endpoints (it answers them its own way) get no route."""
        if which == "metric":
            self._show_metric()
        if not self.window.owns_endpoints(self.session.mode):
            self.request(live, before=self.session.route if which == "metric" else None)

    def mode_changed(self, old: str, new: str) -> None:
        self._show_metric()
        owned_before, owned_now = self.window.owns_endpoints(old), self.window.owns_endpoints(new)
        if owned_before or owned_now:
            self.engine.drop("route")
            self.show(None, "")
        if owned_before and not owned_now:
            self.request()

    def hierarchy_changed(self) -> None:
        """A hierarchy built (in the background) or dropped: the route is asked again,
        so that its summary names the method that answers clicks from now on."""
        s = self.session
        if s.route is not None and not s.crp_routes and not self.window.owns_endpoints(s.mode):
            self.request(live=True)

    def cleared(self) -> None:
        self.set_endpoints(None, None)
        self.engine.drop("route")
        self.show(None, "")

    def request(self, live: bool = False, before: ShownRoute | None = None) -> None:
        """Route between the endpoints; while dragging (``live``) earlier answers still
        show; ``before``: the route the answer is compared with (drawn as a ghost)."""
        s = self.session
        if s.graph is None or s.source is None or s.target is None:
            self.engine.drop("route")
            self.show(None, "")
            return
        if not live and before is None:
            self.engine.drop("route")
            self.summary.setText(grey("routing…"))
        params = {"source": s.source, "target": s.target, "metric": s.metric}
        if s.crp_routes:
            params["decoder"] = CURRENT_METRIC           # a turn-aware CRP route on the current metric
        self._before = before if before is not None and before.source == s.source \
            and before.target == s.target else None
        self.engine.submit("route", params)

    def slot_failed(self) -> None:
        if not self.engine.running("route") and self.summary.text() == grey("routing…"):
            self.show(None, "")

    def route_answered(self, params: dict, answer, before: ShownRoute | None) -> None:
        """A route another feature's job answered for ``params`` (source, target): a
        metric edit's customization routes too, so an edit is one round trip. Drawn as
        an answer to a request after a metric change: ``before`` becomes the ghost."""
        self._before = before if before is not None and before.source == params["source"] \
            and before.target == params["target"] else None
        self._show_metric()                              # a customization's route: its decoder
        self._draw(params, answer)

    def on_result(self, job, a) -> None:
        self._draw(job.params, a)

    def _draw(self, p: dict, a) -> None:
        d = self.session.drawing
        xy = None if d is None else route_polyline(d.points, self.session.graph, a.path.arcs)
        text = f"{a.summary.text(a.compute_ms)} by {a.method_label}"
        if a.turns:
            text += "<br>" + turns_text(a.turns)
        route = ShownRoute(p["source"], p["target"], a.path.metric, a.path, xy, text,
                           a.method_label, a.turns, a.steps)
        before, self._before = self._before, None
        ghost = None
        if before is not None and (before.source, before.target) == (route.source, route.target):
            text += "<br>" + change_text(self.session.graph, before, route)
            if not np.array_equal(before.path.arcs, route.path.arcs):
                ghost = before
        self.show(route, text, ghost=ghost)

    def on_error(self, job, message: str) -> None:
        self.show(None, message, error=True)

    def exportables(self) -> list[Exportable]:
        return [] if self.session.route is None else [Exportable("route", PATH_FORMATS, self._writer)]

    def _writer(self, path, ext: str):
        from engine.capabilities.route import route_export
        g, r = self.session.graph, self.session.route
        unit = Unit(r.turns["unit"] or "") if r.turns else unit_of(g.metric_units, r.path.metric)
        method = r.method_label or "shortest-path tree"
        return path_writer(g, r.path, path, ext, route_export(g, r.path, unit, method, method))

    def show(self, route: ShownRoute | None, text: str, error: bool = False,
             ghost: ShownRoute | None = None) -> None:
        """Draw ``route`` (None: none) and put ``text`` in the summary; ``ghost``: the
        route before the last metric change, drawn faint."""
        self.session.route, self.session.route_message = route, text
        self.session.ghost = ghost
        self.map_view.set_route(None if route is None else route.xy,
                                None if route is None else route.path.arcs)
        self.map_view.set_ghost(None if ghost is None else ghost.xy)
        self.summary.setText(red(text) if error else text)
        self.window.broadcast("route_changed", route)
        self.shown.emit(route)

    def show_route(self, route: ShownRoute | None, text: str, error: bool = False) -> None:
        """Another feature's path (a tree's) to draw as the route."""
        self.show(route, text, error)

    def put_endpoints(self, source: int | None, target: int | None) -> None:
        self.set_endpoints(source, target)
