"""Contraction hierarchies: Hierarchy ▸ Contract (CU-CH with the panel's K, C and
metric, a dock charting every level as it finishes), Cancel, File ▸ Open / Save
hierarchy (.rlh), colour by level (L), inspect mode (I: a node's upward and downward
hierarchy arcs, unpack a shortcut onto the road), and the PHAST per-level chart of
trees computed on the hierarchy.
"""
from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QFileDialog

from engine.core.polylines import route_polyline
from engine.core.units import unit_of
from engine.model.hierarchy import background_refusal, road_node_level, turns_matter

from app import map_style as style
from app.feature import Controller, register_controller
from app.features.hierarchy.charts import ContractionChart, PhastChart
from app.features.hierarchy.overlay import HierarchyOverlay
from app.features.hierarchy.panel import HierarchyPanel
from app.features.hierarchy.level_bins import make_level_bins, segment_level
from app.map_view import Colouring
from app.widgets import legend_table, rgb

INSPECT_HINT = ("Inspect: click a node: its upward (violet) and downward (pink) hierarchy arcs, "
                "shortcuts dashed · click the middle of a drawn arc, or pick one in the side "
                "panel: unpack it onto the road · I: back to routes")
TURN_AWARE_INSPECT = ("This hierarchy is turn-aware: its nodes are road arcs, not crossings. "
                      "Inspect shows a node-based one (Hierarchy ▸ Contract with the "
                      "node-based model, or the command line's contract --node-based).")
HIERARCHY_FILTER = "RouteLab hierarchy (*.rlh);;All files (*)"
FAILED_COLOR = "#8a1c12"


def summary_line(h) -> str:
    s = h.summary()
    return (f"{'turn-aware · ' if h.turn_aware else ''}{s['levels']} levels · {s['shortcuts']:,} shortcuts · edge growth "
            f"{s['edge_growth']:.2f} · {s['contract_ms'] / 1000:.2f} s on {s['backend'].upper()} "
            f"(K = {s['K']:,}, C = {s['C']:g}, {h.metric})")


@register_controller
class HierarchyController(Controller):
    order = 40
    kinds = ("contract", "open_hierarchy", "save_hierarchy")
    modes = {"inspect": INSPECT_HINT}
    hierarchy_shown = Signal(object)    # Hierarchy now in use, or None when dropped
    inspected = Signal(int)             # node whose hierarchy arcs are drawn
    unpacked = Signal(int)              # hierarchy arc unpacked onto the road

    def __init__(self, window) -> None:
        super().__init__(window)
        self._build_actions(window)
        p = self.panel = HierarchyPanel()
        p.contract_button.clicked.connect(self.contract)
        p.cancel_button.clicked.connect(lambda: self.engine.cancel("contract"))
        p.levels_button.clicked.connect(self.levels_action.trigger)
        self.levels_action.toggled.connect(p.levels_button.setChecked)
        p.inspect_button.clicked.connect(self.inspect_action.trigger)
        self.inspect_action.toggled.connect(p.inspect_button.setChecked)
        p.arc_picked.connect(self.unpack)
        window.add_panel(p)
        self.contract_chart = ContractionChart()
        self.phast_chart = PhastChart()
        self.contract_dock = window.add_dock("contract", "Contraction (CU-CH)", self.contract_chart)
        self.phast_dock = window.add_dock("phast", "PHAST query per level", self.phast_chart)
        self.overlay = HierarchyOverlay(self.map_view)
        self.overlay.arc_clicked.connect(self.unpack)
        self.map_view.add_click_handler(self.overlay.take_click)
        window.add_painter("levels", self._paint)

    def _build_actions(self, window) -> None:
        menu = window.menu("&Hierarchy")
        self.contract_action = window.capability_action("contract")
        window.add_action(menu, "C&ancel contraction", None, lambda: self.engine.cancel("contract"))
        menu.addSeparator()
        self.levels_action = window.add_action(menu, "Colour by &level", "L", self.set_level_colours,
                                               toggled=True, needs_hierarchy=True)
        self.inspect_action = window.add_mode_action("inspect", menu, "&Inspect nodes and shortcuts", "I",
                                                     needs_hierarchy=True)
        file_menu = window.menu("&File")
        self.open_action = window.add_action(file_menu, "Open &hierarchy…", "Ctrl+Shift+O",
                                             self.choose_file, needs_graph=True)
        self.save_action = window.add_action(file_menu, "Save h&ierarchy…", "Ctrl+Shift+S",
                                             self.choose_save_path, needs_hierarchy=True)

    # ------------------------------------------------------------------ jobs
    def trigger(self, capability: str) -> None:
        self.contract()

    def contract(self, background: bool = False) -> int | None:
        """Contract the graph with the panel's K, C and metric (turn-aware where turns
        matter); the chart fills live. ``background``: started by a graph load, so that
        clicks switch to the CH query once it is ready (routes answer meanwhile)."""
        g = self.session.graph
        if g is None:
            return None
        p = self.panel
        metric = p.metric_combo.currentText() or g.default_metric
        K, C = p.k_spin.value(), p.c_spin.value()
        label = "Building the turn-aware hierarchy" if background else "Contracting"
        job = self.engine.submit("contract", {"metric": metric, "K": K, "C": C,
                                              "background": background}, label=label)
        self.contract_chart.start(f"Contracting {g.source or 'graph'} · {metric} · K = {K:,}, "
                                  f"C = {C:g} · {self.engine.backend_description}…")
        self.window.show_dock(self.contract_dock)
        p.cancel_button.setEnabled(True)
        return job

    def open_hierarchy(self, path) -> int | None:
        if self.session.graph is None:
            return None
        return self.engine.submit("open_hierarchy", {"path": str(path)},
                                  label=f"Opening the hierarchy {os.path.basename(str(path))}")

    def save_hierarchy(self, path) -> int | None:
        if self.session.hierarchy is None:
            self.window.show_error("There is no contraction hierarchy to save: contract the graph first.")
            return None
        return self.engine.submit("save_hierarchy", {"path": str(path)}, label="Saving the hierarchy")

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open contraction hierarchy", "", HIERARCHY_FILTER)
        if path:
            self.open_hierarchy(path)

    def choose_save_path(self) -> None:
        h = self.session.hierarchy
        if h is None:
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Save contraction hierarchy",
                                              f"{self.session.file_stem()}.{h.metric}.rlh",
                                              HIERARCHY_FILTER)
        if path:
            self.save_hierarchy(path if path.endswith(".rlh") else path + ".rlh")

    def on_record(self, job, record) -> None:
        self.contract_chart.add_iteration(record)

    def on_result(self, job, result) -> None:
        self.panel.cancel_button.setEnabled(self.engine.running("contract"))
        {"contract": self._contracted, "open_hierarchy": self._opened,
         "save_hierarchy": self._saved}[job.kind](job, result)

    def on_error(self, job, message: str) -> None:
        self.panel.cancel_button.setEnabled(self.engine.running("contract"))
        {"contract": self._contract_failed, "open_hierarchy": self._open_failed,
         "save_hierarchy": self._save_failed}[job.kind](job, message)

    def _contracted(self, job, h) -> None:
        self.set_hierarchy(h)
        self.contract_chart.set_title(summary_line(h), "#1b5e20")
        self.window.statusBar().showMessage(f"Hierarchy ready: {summary_line(h)}", 8000)

    def _opened(self, job, h) -> None:
        """An opened file: its contraction's records."""
        self.set_hierarchy(h)
        name = os.path.basename(job.params["path"])
        self.contract_chart.show_records(h.iterations, f"{name}: {summary_line(h)}")
        self.window.show_dock(self.contract_dock)
        self.window.statusBar().showMessage(f"Hierarchy ready: {summary_line(h)}", 8000)

    def _saved(self, job, path: str) -> None:
        self.window.statusBar().showMessage(f"Saved {path}", 5000)

    def _contract_failed(self, job, message: str) -> None:
        self.contract_chart.set_title(f"Contraction failed: {message}", FAILED_COLOR)
        self._open_failed(job, message, "Contraction")

    def _open_failed(self, job, message: str, what: str = "") -> None:
        kept = " The previous hierarchy is still in use." if self.session.hierarchy is not None else ""
        self.window.show_error(f"{what or job.label} failed: {message}.{kept}")

    def _save_failed(self, job, message: str) -> None:
        self.window.show_error(f"Could not save the hierarchy: {message}")

    def on_cancelled(self, job, message: str) -> None:
        self.panel.cancel_button.setEnabled(self.engine.running("contract"))
        levels = len(self.contract_chart.records)
        self.contract_chart.set_title(f"Contraction cancelled after {levels} levels", FAILED_COLOR)
        kept = " (the previous hierarchy is kept)" if self.session.hierarchy is not None else ""
        self.window.statusBar().showMessage(f"Contraction cancelled{kept}", 5000)

    # ------------------------------------------------------------- hierarchy
    def graph_changed(self) -> None:
        g = self.session.graph
        self.panel.metric_combo.clear()
        self.panel.metric_combo.addItems(g.metric_names)
        self.overlay.clear()
        self.set_hierarchy(None)
        if self.session.background_hierarchy and g.num_nodes and turns_matter(g):
            refused = background_refusal(g)       # the memory budget, before any work
            if refused is None:
                self.contract(background=True)
            else:
                self.panel.summary.setText(refused)    # after the load's "Loaded ..." line:
                QTimer.singleShot(0, lambda: self.window.statusBar().showMessage(refused, 30000))

    def set_hierarchy(self, h) -> None:
        """Use hierarchy ``h`` (None drops it): summary, legend, views, PHAST."""
        s = self.session
        s.hierarchy = h
        s.level_bins = None if h is None else make_level_bins(h.num_levels)
        s.node_level = None if h is None else road_node_level(h, s.graph)
        self.panel.levels_button.setEnabled(h is not None)
        # inspect shows a node's hierarchy arcs: a turn-aware hierarchy's nodes are arcs
        self.panel.inspect_button.setEnabled(h is not None and not h.turn_aware)
        if h is None:
            self.panel.summary.setText("No hierarchy.")
            self.levels_action.setChecked(False)
            if s.mode == "inspect":
                self.window.set_mode("route")
            self.phast_dock.hide()
        else:
            self._show_summary(h)
        self.window.hierarchy_adopted()
        if s.inspected_node is not None:
            self.inspect(s.inspected_node if h is not None else None)
        self.hierarchy_shown.emit(h)

    def _show_summary(self, h) -> None:
        s, bins = h.summary(), self.session.level_bins
        self.panel.summary.setText("<br>".join([
            f"<b>{s['levels']} levels</b> · core of {s['core_nodes']:,} nodes · {h.metric}",
            f"{s['shortcuts']:,} shortcuts · edge growth (|E↑|+|E↓|)/|E| = {s['edge_growth']:.2f}",
            f"<b>{s['contract_ms'] / 1000:.2f} s</b> on {s['backend'].upper()} "
            f"(core APSP {s.get('apsp_ms', 0):.0f} ms) · K = {s['K']:,}, C = {s['C']:g}"]))
        rows = zip(bins.colors, bins.labels(), np.bincount(bins.of(self.session.node_level),
                                                           minlength=bins.count))
        self.panel.legend.setText("<b>Level</b> of a road's higher end · nodes<br>" +
                                  legend_table([(c, f"{t} · {n:,}") for c, t, n in rows]))

    def set_level_colours(self, on: bool) -> None:
        self.session.levels_on = on
        self.window.apply_colouring()

    def _paint(self) -> None:
        bins, node_level = self.session.level_bins, self.session.node_level
        pens = tuple(pg.mkPen(c, width=w) for c, w in zip(bins.colors, bins.widths))
        z = tuple(1 + k / bins.count for k in range(bins.count))
        self.map_view.set_colouring(Colouring("levels", pens, z, lambda level: bins.of(
            segment_level(level.end_a, level.end_b, node_level))))

    def colouring_shown(self, name: str | None) -> None:
        self.panel.legend.setVisible(name == "levels")
        if name == "levels":                  # the map's colours need their legend in view
            self.window.panel.open(self.panel.legend, alone=False)

    def tree_changed(self, answer) -> None:
        if answer is None or answer.level_ms is None:
            return
        lm, g = answer.level_ms, self.session.graph
        self.phast_chart.show_levels(lm, f"PHAST from node {g.node_id[answer.tree.source]} · "
                                     f"{answer.backend} (per-level timing)", answer.compute_ms)
        self.window.show_dock(self.phast_dock)

    # ---------------------------------------------------------------- inspect
    def mode_changed(self, old: str, new: str) -> None:
        if new == "inspect" and self.session.inspected_node is None:
            self.panel.inspect_info.setText("Click a node: its hierarchy arcs.")
        elif old == "inspect":
            self.inspect(None)

    def node_clicked(self, node: int, shift: bool) -> bool:
        if self.session.mode != "inspect":
            return False
        self.inspect(node)
        return True

    def cleared(self) -> None:
        self.inspect(None)

    def inspect(self, node: int | None) -> None:
        """Draw ``node``'s upward and downward hierarchy arcs and list them (None clears)."""
        s, p = self.session, self.panel
        h = s.hierarchy
        s.inspected_node = node if h is not None and s.drawing is not None else None
        if s.inspected_node is None or h.turn_aware:
            s.inspected_node = None
            self.overlay.clear()
            p.set_arcs([])
            p.inspect_info.setText(TURN_AWARE_INSPECT if h is not None and h.turn_aware else "")
            p.arc_info.setText("")
            return
        up, down = h.node_arcs(node)
        arcs = np.concatenate([up, down])
        is_up = np.arange(arcs.size) < up.size
        shortcut = h.is_shortcut(arcs)
        other = np.where(is_up, h.arc_head[arcs], h.arc_tail[arcs])
        self.overlay.show_arcs(node, arcs, other, is_up, shortcut)
        unit = unit_of(s.graph.metric_units, h.metric)
        p.set_arcs([(int(a), f"{'↑' if u else '↓'} {s.node_id(o)} · lvl {h.node_level[o]} · "
                             f"{'shortcut' if sc else 'road'} · {unit.format(int(h.arc_weight[a]))}")
                    for a, u, o, sc in zip(arcs, is_up, other, shortcut)])
        p.arc_info.setText("")
        p.inspect_info.setText(self._inspect_html(h, node, up.size, shortcut))
        self.window.panel.reveal(p.arc_list)
        self.inspected.emit(node)

    def _inspect_html(self, h, node: int, num_up: int, shortcut: np.ndarray) -> str:
        level = int(h.node_level[node])
        where = f"core (level {level})" if level == h.num_levels else f"level {level} of {h.num_levels}"
        text = [f"<b>Node {self.session.node_id(node)}</b> · {where}",
                f"<b style='color:{rgb(style.UP_COLOR)}'>{num_up} up</b> "
                f"({int(shortcut[:num_up].sum())} shortcuts) · "
                f"<b style='color:{rgb(style.DOWN_COLOR)}'>{shortcut.size - num_up} down</b> "
                f"({int(shortcut[num_up:].sum())} shortcuts); shortcuts dashed"]
        if level == h.num_levels:
            text.append(f"A core node: PHAST reaches it through the core's distance matrix "
                        f"({h.core_nodes.size:,} nodes); it has no arcs up or down.")
        elif shortcut.size:
            text.append("Pick an arc (or click the middle of a drawn one): its road path.")
        return "<br>".join(text)

    def unpack(self, arc: int) -> None:
        """Draw a hierarchy arc's original arcs along the road, with the node it bypasses."""
        s = self.session
        h, g = s.hierarchy, s.graph
        if h is None or s.drawing is None:
            return
        originals, mid = h.unpack(arc), h.midpoint(arc)
        self.overlay.set_unpacked(route_polyline(s.drawing.points, g, originals), mid)
        self.panel.select_arc(arc)
        unit = unit_of(g.metric_units, h.metric)
        t, hd = int(h.arc_tail[arc]), int(h.arc_head[arc])
        lines = [f"<b>{'Shortcut' if h.is_shortcut(arc) else 'Road arc'} {g.node_id[t]} → "
                 f"{g.node_id[hd]}</b> · {unit.format(int(h.arc_weight[arc]))}"]
        if mid >= 0:
            lines.append(f"<span style='color:{rgb(style.MIDPOINT_COLOR)}'>◆</span> bypasses node "
                         f"{g.node_id[mid]} (level {h.node_level[mid]}) · "
                         f"<span style='color:{rgb(style.UNPACKED_COLOR)}'>unpacks to "
                         f"{originals.size} road arcs</span>")
        self.panel.arc_info.setText("<br>".join(lines))
        self.window.panel.reveal(self.panel.arc_info)
        self.unpacked.emit(arc)
