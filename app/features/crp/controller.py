"""CRP in the window: partition the graph, edit the metric decoder live, see the cells.

Every valid edit of the decoder (app.features.crp.decoder_editor, which parsed it once)
becomes, after one frame of debounce, a ``customize`` job that carries the Decoder
itself and, while routes use the metric, the endpoints; the engine keeps one in flight
and only the newest waiting (stale edits are dropped, never queued). Its answer is the
session's new metric and the route on it (one round trip per edit): the route feature
draws it with the old one as a ghost and says what changed (``route_answered``), the
customization chart shows the run, and the map's cells follow the new overlay. Routes
asked later (new endpoints) name the engine's current metric, never the decoder again.
An edit that fails (in the editor, or in the engine, e.g. a division by zero) never
replaces the working metric: the panel says which one the map keeps.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer, Signal

from engine.crp.metric.decoder import shipped_decoders
from engine.core.graph import ROAD_CLASSES

from app.feature import Controller, register_controller
from app.features.crp.chart import CustomizationChart
from app.features.crp.map import CellOverlay, cell_colouring
from app.features.crp.panel import CrpPanel
from app.widgets import grey, legend_table, red

CELLS_HINT = ("Cells: click a cell: its entries (in) and exits (out), and its shortcut matrix "
              "coloured by cost · P: back to routes")
DEBOUNCE_MS = 16            # about one frame: a slider drag sends a job per frame at most
DIMACS_DECODERS = ("dimacs-time", "dimacs-distance")


@register_controller
class CrpController(Controller):
    order = 50
    kinds = ("partition", "customize")
    modes = {"cells": CELLS_HINT}
    metric_shown = Signal(object)      # CellMetric now routing (and drawn), after each edit
    metric_failed = Signal(str)        # a customization failed; the last good metric stays

    def __init__(self, window) -> None:
        super().__init__(window)
        p = self.panel = CrpPanel()
        self.dock = window.add_dock("crp", "Metric (CRP)", p, right=True)
        self.chart = CustomizationChart()
        self.chart_dock = window.add_dock("crp_chart", "Customization", self.chart)
        self.cells = CellOverlay(self.map_view)
        menu = window.menu("&Metric")
        window.capability_action("partition")
        window.capability_action("customize")          # the editor is where customizing starts
        window.add_mode_action("cells", menu, "&Cells mode: inspect partition cells", "P")
        window.add_painter("cells", self._paint_cells)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._customize)
        self._wanted = None            # the decoder the next customization runs
        self._partitioned = False
        p.partition_button.clicked.connect(self.partition)
        p.editor.edited.connect(self._on_edited)
        p.editor.invalid.connect(self._on_invalid)
        p.routes_box.toggled.connect(self._on_routes_toggled)
        p.level_combo.currentIndexChanged.connect(self._on_level_chosen)
        p.route_levels_box.toggled.connect(lambda on: self._show_route_levels())

    def route_changed(self, route) -> None:
        self._show_route_levels()

    def trigger(self, capability: str) -> None:
        {"partition": self.partition, "customize": lambda: self.window.show_dock(self.dock)}[capability]()

    # ------------------------------------------------------------ the graph
    def graph_changed(self) -> None:
        g = self.session.graph
        for kind in self.kinds:
            self.engine.drop(kind)
        self._partitioned, self._wanted = False, None
        self.cells.clear()
        dimacs = "road_class" not in g.arc_attrs
        names = [n for n in shipped_decoders() if (n in DIMACS_DECODERS) == dimacs]
        default = "car-fastest" if not dimacs else (
            "dimacs-time" if "travel_time" in g.metrics else "dimacs-distance")
        editor = self.panel.editor
        editor.set_presets(names, default)
        editor.set_features(*_features(g))
        self.panel.set_levels(0)
        self.panel.say(grey("Partition the graph, then every edit of the metric "
                            "re-customizes it and re-routes."))

    def partition(self) -> None:
        if self.session.graph is None:
            return
        self.window.show_dock(self.dock)
        self.panel.say(grey("partitioning…"))
        self.engine.submit("partition", {}, label="Partitioning")

    # ----------------------------------------------------------- the metric
    def _on_edited(self, decoder) -> None:
        self._wanted = decoder
        if self._partitioned:
            self._debounce.start()

    def _on_invalid(self, message: str) -> None:
        self.panel.say(red(message) + "<br>" + self._keeps())

    def _keeps(self) -> str:
        m = self.session.cell_metric
        return grey(f"the map keeps {m.name}" if m is not None else "no metric yet")

    def _customize(self) -> None:
        """One job per edit: the Decoder (not its text) and, when routes use the metric,
        the endpoints, so the answer carries the route on the new metric too."""
        decoder = self._wanted or self.panel.editor.decoder()
        params = {"decoder": decoder}
        s = self.session
        if self.panel.routes_box.isChecked() and s.source is not None and s.target is not None \
                and not self.window.owns_endpoints(s.mode):
            params.update(source=s.source, target=s.target)
        self.engine.submit("customize", params, label=f"Customizing {decoder.name}")

    def _on_routes_toggled(self, on: bool) -> None:
        self.session.crp_routes = on and self.session.cell_metric is not None
        self.window.endpoints_changed("metric")

    # ---------------------------------------------------------- job answers
    def on_record(self, job, record) -> None:
        self.chart.add_level(record)        # a customization's level (a partition sends none)

    def on_result(self, job, result) -> None:
        {"partition": self._adopt_partition, "customize": self._adopt_metric}[job.kind](job, result)

    def on_error(self, job, message: str) -> None:
        {"partition": self._partition_failed, "customize": self._customize_failed}[job.kind](job, message)

    def _adopt_partition(self, job, result) -> None:
        self._partitioned = True
        s = result.summary(self.session.graph)
        self.panel.set_levels(s["levels"], s["mezzanine"])
        self.panel.say(f"{s['levels']} levels, {s['cells'][-1]:,} top cells, partitioned "
                       f"in {s['partition_ms'] / 1000:.1f} s; " + grey("customizing…"))
        self._customize()

    def _adopt_metric(self, job, answer) -> None:
        s, metric = self.session, answer.metric
        s.cell_metric = metric
        s.crp_routes = self.panel.routes_box.isChecked()
        total = metric.decode_ms + metric.total_ms
        self.chart.show_run(metric.timings, metric.decode_ms, metric.total_ms, metric.backend,
                            metric.device_bytes)
        notes = "".join(f"<br>{grey(n)}" for n in metric.notes)
        self.panel.say(f"<b>{metric.name}</b> customized in {total:.1f} ms on "
                       f"{metric.backend.upper()}{notes}")
        self.window.apply_colouring()
        self.metric_shown.emit(metric)
        self._show_route(job.params, answer)

    def _show_route(self, params: dict, answer) -> None:
        """The route the customization answered with it, if it is still the one wanted
        (newer endpoints have their own route job, which runs on this metric); with no
        route asked, the routes are asked again, on this metric."""
        s = self.session
        if "source" not in params:
            self.window.endpoints_changed("metric")
        elif (params["source"], params["target"]) != (s.source, s.target):
            return
        elif answer.route is not None:
            self.window.broadcast("route_answered", params, answer.route, s.route)
        else:
            self.window.show_route(None, answer.route_error, error=True)

    def _customize_failed(self, job, message: str) -> None:
        self.panel.say(red(f"{job.label} failed: {message}") + "<br>" + self._keeps())
        self.metric_failed.emit(message)

    def _partition_failed(self, job, message: str) -> None:
        self.panel.say(red(f"{job.label} failed: {message}"))
        self.window.show_error(f"{job.label} failed: {message}")

    # ------------------------------------------------------------ the cells
    def _on_level_chosen(self, index: int) -> None:
        self.session.cells_level = self.panel.chosen_level()
        self.cells.clear()
        self.window.apply_colouring()

    def _paint_cells(self) -> None:
        s = self.session
        overlay = s.cell_metric.overlay
        level = s.cells_level
        g = s.graph
        self.map_view.set_colouring(cell_colouring(overlay.cell_of[level],
                                                   overlay.levels[level].num_cells, (g.tail, g.head)))

    def node_clicked(self, node: int, shift: bool) -> bool:
        s = self.session
        if s.mode != "cells":
            return False
        if s.cell_metric is None:
            self.window.statusBar().showMessage("Cells: partition the graph first", 6000)
            return True
        overlay, level = s.cell_metric.overlay, s.cells_level or 0
        cell = int(overlay.cell_of[level][node])
        s.crp_cell = cell
        self.cells.clear()
        self.cells.show_cell(overlay, level, cell)
        legend = ""
        if self.panel.matrix_box.isChecked():
            self.cells.show_matrix(overlay, s.cell_metric, level, cell)
            legend = legend_table(self.cells.matrix_legend()) + grey(self.cells.note or "")
        ne, nx, nv = overlay.levels[level].counts(cell)
        self.panel.legend.setText(f"level {level}, cell {cell}: {ne} entries (▲), {nx} exits "
                                  f"(■), shortcuts by cost:<br>{legend}" if legend else "")
        self.window.statusBar().showMessage(
            f"level {level}, cell {cell}: {ne} entries, {nx} exits, {ne * nx:,} shortcuts", 10000)
        return True

    def mode_changed(self, old: str, new: str) -> None:
        if old == "cells":
            self.cleared()

    def cleared(self) -> None:
        self.cells.clear()
        self.panel.legend.setText("")

    # ------------------------------------------------- the route's levels
    def _show_route_levels(self) -> None:
        route = self.session.route
        if not self.panel.route_levels_box.isChecked() or route is None or route.steps is None \
                or self.session.drawing is None:
            self.cells.show_route_levels([])
            return
        self.cells.show_route_levels(route_level_pieces(self.session.graph,
                                                        self.session.drawing.node_xy, *route.steps))
        self.panel.legend.setText("the route as the query took it:<br>" +
                                  legend_table(self.cells.route_legend()))


def route_level_pieces(graph, node_xy, arcs, levels) -> list[tuple[int, np.ndarray]]:
    """The route as the search took it: (level, polyline) runs, where a level-l
    shortcut is a straight line between the heads of the arcs it joins and a turn
    (level -1) is the arc itself."""
    pieces: list[tuple[int, list]] = []
    for i, (arc, level) in enumerate(zip(arcs.tolist(), levels.tolist())):
        if i == 0 or level < 0:
            a, b = node_xy[graph.tail[arc]], node_xy[graph.head[arc]]
            level = -1
        else:
            a, b = node_xy[graph.head[arcs[i - 1]]], node_xy[graph.head[arc]]
        if pieces and pieces[-1][0] == level:
            pieces[-1][1].append(b)
        else:
            pieces.append((level, [a, b]))
    return [(level, np.asarray(xy, dtype=float)) for level, xy in pieces]


def _features(graph) -> tuple[set[str], set[str]]:
    """The road classes and tags the graph's data has (for the editor's toggles)."""
    attrs = graph.arc_attrs
    classes = set()
    if "road_class" in attrs and attrs["road_class"].size:
        classes = {ROAD_CLASSES[i] for i in np.unique(attrs["road_class"]) if i < len(ROAD_CLASSES)}
    tags = {"toll"} if "toll" in attrs else set()
    return classes, tags
