"""Shortest-path trees and the SSSP comparison: tree mode, the side panel's
"Shortest-path tree" box (method, Compare, the tree's figures and legend), the
network coloured by distance, hover and click paths read from the tree (no
recomputation), the compare chart dock, and the ``tree`` and ``compare`` jobs.
With a hierarchy, PHAST is the default method (its per-level chart belongs to the
hierarchy controller, which listens to ``tree_shown``).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QPushButton, QVBoxLayout

from engine.core import paths
from engine.capabilities.tree import ON_HIERARCHY, method_label, method_names
from engine.core.polylines import route_polyline
from engine.core.summary import route_summary
from engine.core.units import unit_of

from app.features.tree.compare_chart import CompareChart
from app.feature import Controller, Exportable, register_controller
from engine.core.tree_bins import segment_bins

from app.features.tree.distance_bins import (UNREACHABLE_COLOR, coloured, display_unit, make_bins,
                                             segment_distance)
from app.map_view import Colouring
from app.session import ShownRoute
from app.widgets import button_row, grey, legend_table, red, selectable_label

TREE_HINT = ("Tree mode: click a node for its shortest-path tree · then hover or click: "
             "distance and path · Shift+click: new tree · C: compare methods · Esc: clear · "
             "T: back to routes")
TREE_FORMATS = (("GeoJSON, a point per node (*.geojson)", ".geojson"),
                ("CSV, a row per node (*.csv)", ".csv"))
TREE_WIDTH = 1.6               # pixels, the distance-bin curves


@register_controller
class TreeController(Controller):
    order = 30
    kinds = ("tree", "compare")
    modes = {"tree": TREE_HINT}
    owns_endpoints = True        # the start is the tree's source, the destination a path in it
    tree_shown = Signal(object)          # TreeAnswer coloured on the map, or None when cleared
    comparison_shown = Signal(object)    # Comparison drawn in the chart dock

    def __init__(self, window) -> None:
        super().__init__(window)
        self.mode_action = window.capability_action("tree")
        self.compare_action = window.capability_action("compare")
        window.add_panel(self._build_box())
        self.compare_chart = CompareChart()
        self.compare_dock = window.add_dock("compare", "SSSP methods compared", self.compare_chart)
        window.add_painter("tree", self._paint)
        self.map_view.node_hovered.connect(self._on_node_hovered)

    def _build_box(self) -> QGroupBox:
        box = QGroupBox("Shortest-path tree")
        column = QVBoxLayout(box)
        form = QFormLayout()
        column.addLayout(form)
        self.tree_button = QPushButton("Tree mode (T)", checkable=True,
                                       toolTip="Click a node: colour the network by its distance")
        self.tree_button.clicked.connect(self.mode_action.trigger)
        self.mode_action.toggled.connect(self.tree_button.setChecked)
        self.method_combo = QComboBox(toolTip="SSSP method (engine.sssp) on the engine's backend; "
                                      "auto: on the GPU the variant measured fastest on this "
                                      "graph, on the CPU near-far")
        for name in method_names():           # the tree capability's methods
            if name not in ON_HIERARCHY:        # (those are offered while a hierarchy exists)
                self.method_combo.addItem(method_label(name), name)
        self.method_combo.currentIndexChanged.connect(self._on_method_changed)
        self.method_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.method_combo.setMinimumContentsLength(16)
        self.method_combo.setFocusPolicy(Qt.ClickFocus)
        form.addRow(self.tree_button)
        form.addRow("Method", self.method_combo)
        self.compare_button = QPushButton("Compare methods (C)",
                                          toolTip="Time every method and the CPU reference from the start")
        self.compare_button.clicked.connect(lambda: self.compare())
        self.clear_button = QPushButton("Clear tree (Esc)")
        self.clear_button.clicked.connect(self.window.clear)
        form.addRow(button_row(self.compare_button, self.clear_button))
        self.info = selectable_label()
        self.legend = QLabel(wordWrap=True)
        # below the form, not in it: QFormLayout shares height-for-width between rows
        # wrongly (the info label got 14 px too many, the legend lost its last row)
        column.addWidget(self.info)
        column.addWidget(self.legend)
        self.window.offer_box("tree", column)     # where options of trees (the service area) go
        for w in (self.tree_button, self.compare_button, self.clear_button):
            w.setFocusPolicy(Qt.NoFocus)     # keys stay with the map
        return box

    # ------------------------------------------------------------------ hooks
    def trigger(self, capability: str) -> None:
        self.compare()

    def graph_changed(self) -> None:
        self.set_tree(None)

    def mode_changed(self, old: str, new: str) -> None:
        if "tree" not in (old, new):
            return
        self.map_view.hover_enabled = new == "tree"
        self.set_tree(None)
        if new == "tree":
            if self.session.source is None:
                self.info.setText("Click a node: its shortest-path tree.")
            self.request()

    def endpoints_changed(self, which: str, live: bool = False) -> None:
        if self.session.mode != "tree":
            return
        if which == "target":
            self.show_path(self.session.target)
        elif not live:
            self.request()

    def cleared(self) -> None:
        self.set_tree(None)

    def hierarchy_changed(self) -> None:
        """The methods on a hierarchy (PHAST) are offered while one exists, and then the default."""
        for name in ON_HIERARCHY:
            index = self.method_combo.findData(name)
            if self.session.hierarchy is None:
                if index >= 0:
                    self.method_combo.removeItem(index)
            elif index < 0:
                self.method_combo.insertItem(0, method_label(name), name)
        if self.session.hierarchy is not None:
            self.method_combo.setCurrentIndex(0)

    def context_menu(self, menu, node: int) -> None:
        menu.addAction("Shortest-path tree from here", lambda: self.tree_from(node))
        menu.addAction("Compare SSSP methods from here", lambda: self.compare(node))

    # ------------------------------------------------------------------ trees
    def tree_from(self, node: int) -> None:
        """Tree mode, with ``node`` as the source and no destination."""
        self.window.put_endpoints(node, None)
        if self.session.mode == "tree":
            self.request()
        else:
            self.window.set_mode("tree")

    def _on_method_changed(self) -> None:
        if self.session.mode == "tree":
            self.request()

    def request(self) -> None:
        s = self.session
        if s.graph is None or s.source is None:
            return
        self.engine.submit("tree", {"source": s.source, "metric": s.metric,
                                    "method": self.method_combo.currentData(),
                                    "per_level": True,      # (PHAST's chart; others ignore it)
                                    "bins": True})          # the colouring, made where the tree is
        self.info.setText(grey(f"computing the tree from node {s.node_id(s.source)}…"))

    def on_result(self, job, answer) -> None:
        {"tree": self._show_tree, "compare": self._show_comparison}[job.kind](answer)

    def on_error(self, job, message: str) -> None:
        {"tree": self._tree_failed, "compare": self._compare_failed}[job.kind](message)

    def _compare_failed(self, message: str) -> None:
        self.window.show_error(f"Comparing SSSP methods failed: {message}")

    def _tree_failed(self, message: str) -> None:
        self.set_tree(None)
        self.info.setText(red(f"no tree: {message}"))
        self.window.show_error(f"Shortest-path tree failed: {message}")

    def _show_tree(self, answer) -> None:
        if self.session.mode != "tree":
            return
        self.set_tree(answer)
        if self.session.target is not None:
            self.show_path(self.session.target)
        else:
            self.window.show_route(None, "Hover or click a node: its distance and path.")

    def on_cancelled(self, job, message: str) -> None:
        self.window.statusBar().showMessage("Comparison cancelled", 5000)

    def set_tree(self, answer) -> None:
        """Show a tree on the map and in the panel, or go back to the road classes."""
        s = self.session
        s.tree = answer
        if answer is None:
            self.engine.drop("tree")
            s.tree_bins = None
            self.info.setText("")
            self.legend.setText("")
        else:
            unit = display_unit(s.graph.metric_units, answer.tree.metric)
            b = answer.bins
            s.tree_bins = make_bins(answer.tree.distance, unit) if b is None else \
                coloured(b.lows, b.highs, unit, b.node_bin)                        # ferry-proof
            self.info.setText(self._info_html(answer))
            self.legend.setText(legend_table(self.legend_rows()))
            self.window.statusBar().showMessage(
                f"Tree from node {s.node_id(answer.tree.source)}: {answer.method_label}, "
                f"{answer.compute_ms:.2f} ms on {answer.backend}", 8000)
        self.window.apply_colouring()
        self.window.broadcast("tree_changed", answer)
        self.tree_shown.emit(answer)

    def exportables(self) -> list[Exportable]:
        if self.session.mode != "tree" or self.session.tree is None:
            return []
        return [Exportable("tree", TREE_FORMATS, self._writer, rank=10)]

    def _writer(self, path, ext: str):
        from engine.export import csv, geojson
        g, tree = self.session.graph, self.session.tree.tree
        unit = unit_of(g.metric_units, tree.metric)
        if ext == ".geojson":
            return lambda: geojson.write_tree(path, g, tree, unit)
        return lambda: f"its columns and attribution in {csv.write_tree(path, g, tree, unit)}"

    def _paint(self) -> None:
        bins, distance = self.session.tree_bins, self.session.tree.tree.distance
        n = bins.count
        pens = (*(pg.mkPen(c, width=TREE_WIDTH) for c in bins.colors), pg.mkPen(UNREACHABLE_COLOR, width=1))
        z = (*(1 + k / (n + 1) for k in range(n)), 0.5)       # below routes
        if bins.node_bin is not None:         # a byte per node from the engine
            colour = lambda level: segment_bins(bins.node_bin, level.end_a, level.end_b)  # noqa: E731
        else:
            colour = lambda level: bins.of(segment_distance(level.end_a, level.end_b, distance))  # noqa: E731
        self.map_view.set_colouring(Colouring("tree", pens, z, colour))

    def legend_rows(self) -> list[tuple[tuple, str]]:
        """(colour, text) per distance bin, then the unreachable roads when there are any."""
        s = self.session
        if s.tree is None:
            return []
        rows = list(zip(s.tree_bins.colors, s.tree_bins.labels()))
        unreached = int(np.count_nonzero(s.tree.tree.distance < 0))
        if unreached:
            rows.append((UNREACHABLE_COLOR, f"unreachable ({unreached:,} nodes)"))
        return rows

    def _info_html(self, a) -> str:
        s, d = self.session, a.tree.distance
        unit = unit_of(s.graph.metric_units, a.tree.metric)
        what = a.tree.metric + ("" if unit.kind else " (its unit is not known)")
        turns = "turn-aware: over the arcs, turn costs paid, banned turns never taken" \
            if a.tree.arc_parent is not None else ""
        return "<br>".join([
            f"<b>From node {s.node_id(a.tree.source)}</b> · {what}", a.method_label,
            *([turns] if turns else []), f"on {a.backend}",
            f"<b>{a.compute_ms:.2f} ms</b> ({a.total_ms:.2f} ms with the copy to host)",
            f"reached {int(np.count_nonzero(d >= 0)):,} of {s.graph.num_nodes:,} nodes · "
            f"farthest {unit.format(int(d.max()))}"])

    def show_path(self, node: int | None, pinned: bool = True) -> None:
        """The path to ``node`` read from the tree on the map (no recomputation)."""
        s = self.session
        if s.tree is None or node is None:
            return
        g, t = s.graph, s.tree.tree
        try:
            path = paths.path_from_tree(g, t, node)
        except paths.Unreachable as e:
            self.window.show_route(None, f"node {s.node_id(node)}: {e}", error=pinned)
            return
        xy = None if s.drawing is None else route_polyline(s.drawing.points, g, path.arcs)
        cost = unit_of(g.metric_units, t.metric).format(path.distance)      # h:mm:ss, km and m
        text = (f"<b>{cost}</b> from node {s.node_id(t.source)} to node {s.node_id(node)}<br>"
                f"{route_summary(g, path).text(cost=False)}")
        self.window.show_route(ShownRoute(t.source, node, t.metric, path, xy, text), text)

    def _on_node_hovered(self, node: int) -> None:
        s = self.session
        if s.tree is None:
            return
        d = s.tree.tree.distance
        far = "cannot be reached" if d[node] < 0 else \
            unit_of(s.graph.metric_units, s.tree.tree.metric).format(int(d[node]))
        self.window.statusBar().showMessage(f"node {s.node_id(node)}: {far}", 4000)
        if s.target is None:       # a clicked destination stays until the next click
            self.show_path(node, pinned=False)

    # ---------------------------------------------------------------- compare
    def compare(self, source: int | None = None) -> int | None:
        """Time every SSSP method and the reference from ``source`` (default: the start)."""
        s = self.session
        source = s.source if source is None else source
        if s.graph is None or source is None:
            self.window.statusBar().showMessage(
                "Compare: set a start first, or right-click a node ▸ Compare SSSP methods from here", 6000)
            return None
        return self.engine.submit("compare", {"source": source, "metric": s.metric},
                                  label="Comparing SSSP methods")

    def _show_comparison(self, c) -> None:
        self.compare_chart.show_comparison(c, self.session.node_id(c.source))
        self.window.show_dock(self.compare_dock)
        self.window.statusBar().showMessage(f"Compared {len(c.timings)} methods: {c.verdict}", 8000)
        self.comparison_shown.emit(c)
