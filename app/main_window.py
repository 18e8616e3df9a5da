"""RouteLab's main window: menus, the map, the route and tree panels, the status bar.

Click the map to set the start (green), click again for the destination (pink): the
route follows. Further clicks move the destination; Shift+click moves the start.
Drag a marker to re-route (live while dragging), X swaps, Esc clears. Right-click a
node for a menu: route from / to here, shortest-path tree from here, compare methods.

Tree mode (T) computes the whole shortest-path tree from the start with the chosen SSSP
method on the engine's backend and colours the network by distance; hovering or clicking
a node then shows its distance and draws its path from the tree (no recomputation).
Compare (C) times every method and the CPU reference from the start, in a chart dock.

Contraction hierarchy (Hierarchy ▸ Contract, Ctrl+K): CU-CH with the panel's K, C and
metric runs on the engine thread while a dock charts every level's step times as it
finishes. Then: colour by level (L); inspect (I) a node's upward and downward hierarchy
arcs and unpack a shortcut onto the road; tree mode runs PHAST with a per-level chart;
File ▸ Save / Open hierarchy (.rlh).
"""
from __future__ import annotations

import math
import os

import numpy as np

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QFormLayout, QFrame,
                               QGroupBox, QHBoxLayout, QLabel, QLineEdit, QMainWindow, QMenu,
                               QProgressBar, QPushButton, QScrollArea, QSplitter, QToolButton,
                               QVBoxLayout, QWidget)

from engine import paths
from engine.graph import RoadGraph
from engine.sssp import METHODS
from engine.summary import route_summary

from app import map_style as style
from app.compare_chart import CompareChart
from app.distance_bins import UNREACHABLE_COLOR, DistanceBins, display_unit, make_bins
from app.engine_thread import (PHAST, PHAST_LABEL, Comparison, EngineClient, HierarchyAnswer,
                               LoadedGraph, RouteResult, TreeAnswer, method_label)
from app.hierarchy_charts import ContractionChart, PhastChart
from app.hierarchy_panel import HierarchyPanel
from app.level_bins import LevelBins, make_level_bins
from app.map_view import MapView
from app.network_geometry import route_polyline

HINT = ("Click: start, then destination · Shift+click: move start · right-click: menu · "
        "drag markers · X: swap · Esc: clear · T: tree mode · wheel: zoom · drag: pan · F: fit")
TREE_HINT = ("Tree mode: click a node for its shortest-path tree · then hover or click: "
             "distance and path · Shift+click: new tree · C: compare methods · Esc: clear · "
             "T: back to routes")
INSPECT_HINT = ("Inspect: click a node: its upward (violet) and downward (pink) hierarchy arcs, "
                "shortcuts dashed · click the middle of a drawn arc, or pick one in the side "
                "panel: unpack it onto the road · I: back to routes")
HIERARCHY_FILTER = "RouteLab hierarchy (*.rlh);;All files (*)"
OPEN_FILTERS = ";;".join([
    "Road networks (*.gr *.gr.gz *.co *.co.gz *.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2 *.rlg *.npz)",
    "DIMACS (*.gr *.gr.gz *.co *.co.gz)",
    "OpenStreetMap (*.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2)",
    "RouteLab cache (*.rlg *.npz)",
    "All files (*)",
])


def _rgb(color) -> str:
    return "#%02x%02x%02x" % tuple(color)


def _legend_table(rows: list[tuple[tuple, str]], columns: int = 2) -> str:
    """(colour, text) rows as a compact HTML table, filled column by column."""
    per_column = -(-len(rows) // columns)
    cells = [f"<td><span style='color:{_rgb(c)}; font-size:15px'><b>━━</b></span>&nbsp;{text}"
             "&nbsp;&nbsp;</td>" for c, text in rows]
    lines = ["".join(cells[r::per_column]) for r in range(per_column)]
    return "<table cellspacing='0' cellpadding='0'>" + "".join(f"<tr>{x}</tr>" for x in lines) + "</table>"


class ErrorBanner(QFrame):
    """A non-modal, dismissable error line above the map."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setStyleSheet("ErrorBanner { background: #fdecea; border-bottom: 1px solid #e0a49c; }"
                           "QLabel { color: #8a1c12; }")
        self.label = QLabel(wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)
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


class MainWindow(QMainWindow):
    error_shown = Signal(str)       # any error the person is shown
    graph_shown = Signal(object)    # RoadGraph now on screen
    route_shown = Signal(object)    # RouteResult drawn (also a path from the tree), or None
    tree_shown = Signal(object)     # TreeAnswer coloured on the map, or None when cleared
    comparison_shown = Signal(object)   # Comparison drawn in the chart dock
    hierarchy_shown = Signal(object)    # Hierarchy now in use, or None when dropped
    inspected = Signal(int)             # node whose hierarchy arcs are drawn
    unpacked = Signal(int)              # hierarchy arc unpacked onto the road

    def __init__(self, backend: str = "auto") -> None:
        super().__init__()
        self.graph: RoadGraph | None = None
        self.drawing = None
        self.source: int | None = None
        self.target: int | None = None
        self.route_result: RouteResult | None = None
        self.route_message = ""        # summary or why there is no route
        self.last_error = ""
        self._accept_from = math.inf      # route answers with a lower request id are stale
        self._job_labels: dict[int, str] = {}
        self.tree: TreeAnswer | None = None        # the tree on the map
        self.tree_bins: DistanceBins | None = None
        self._tree_accept_from = math.inf          # likewise for trees
        self.comparison: Comparison | None = None
        self.node_menu: QMenu | None = None         # the last right-click menu
        self.hierarchy = None                       # engine.ch.Hierarchy in use
        self.level_bins: LevelBins | None = None
        self.inspected_node: int | None = None
        self._colouring_key = None                  # what the map's colours show (_apply_colouring)
        self._hierarchy_jobs: dict[int, str] = {}   # job id -> what it does, for messages

        self.engine = EngineClient(backend, parent=self)
        self.map_view = MapView()
        self.banner = ErrorBanner()
        self._build_menus()
        self._build_panel()
        self._build_status_bar()
        self._build_docks()

        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.banner)
        col.addWidget(self.map_view, 1)
        splitter = QSplitter()
        splitter.addWidget(left)
        scroll = self.panel_scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(self.panel)
        scroll.setMinimumWidth(320)
        scroll.setMaximumWidth(440)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 1)
        splitter.setCollapsible(0, False)
        self.setCentralWidget(splitter)
        self.resize(1280, 820)
        self.setWindowTitle("RouteLab")
        self.map_view.plot.setFocus()

        e = self.engine
        e.backend_ready.connect(self._on_backend_ready)
        e.job_started.connect(self._on_job_started)
        e.job_progress.connect(self._on_job_progress)
        e.job_cancelled.connect(self._on_job_cancelled)
        e.job_failed.connect(self._on_job_failed)
        e.graph_loaded.connect(self._on_graph_loaded)
        e.route_found.connect(self._on_route_found)
        e.route_failed.connect(self._on_route_failed)
        e.tree_found.connect(self._on_tree_found)
        e.tree_failed.connect(self._on_tree_failed)
        e.compare_progress.connect(self._on_compare_progress)
        e.compare_done.connect(self._on_compare_done)
        e.compare_failed.connect(self._on_compare_failed)
        e.compare_cancelled.connect(self._on_compare_cancelled)
        e.contract_progress.connect(self._on_compare_progress)      # the same progress bar
        e.contract_iteration.connect(self._on_contract_iteration)
        e.contract_cancelled.connect(self._on_contract_cancelled)
        e.hierarchy_ready.connect(self._on_hierarchy_ready)
        e.hierarchy_failed.connect(self._on_hierarchy_failed)
        e.saved.connect(lambda path: self.statusBar().showMessage(f"Saved {path}", 5000))
        e.error.connect(self.show_error)
        self.map_view.node_clicked.connect(self._on_node_clicked)
        self.map_view.node_hovered.connect(self._on_node_hovered)
        self.map_view.context_requested.connect(self._on_context_menu)
        self.map_view.marker_dragged.connect(self._on_marker_dragged)
        self.map_view.arc_clicked.connect(self.unpack)

    # ------------------------------------------------------------- building
    def _build_panel(self) -> None:
        self.panel = QWidget()
        self.panel.setMinimumWidth(300)
        self.panel.setMaximumWidth(420)
        col = QVBoxLayout(self.panel)

        route_box = QGroupBox("Route")
        form = QFormLayout(route_box)
        self.source_edit = QLineEdit(placeholderText="click the map or type a node id")
        self.target_edit = QLineEdit(placeholderText="click again or type a node id")
        for edit in (self.source_edit, self.target_edit):
            edit.setFocusPolicy(Qt.ClickFocus)   # keys (X, F, Esc) go to the map until clicked
        self.source_edit.returnPressed.connect(lambda: self._on_id_typed("source"))
        self.target_edit.returnPressed.connect(lambda: self._on_id_typed("target"))
        self.metric_combo = QComboBox()
        self.metric_combo.currentTextChanged.connect(self._on_metric_changed)
        form.addRow(self._dot(style.SOURCE_COLOR, "From"), self.source_edit)
        form.addRow(self._dot(style.TARGET_COLOR, "To"), self.target_edit)
        form.addRow("Metric", self.metric_combo)
        buttons = QHBoxLayout()
        self.swap_button = QPushButton("⇅ Swap (X)")
        self.swap_button.clicked.connect(self.swap)
        self.clear_button = QPushButton("Clear (Esc)")
        self.clear_button.clicked.connect(self.clear_route)
        buttons.addWidget(self.swap_button)
        buttons.addWidget(self.clear_button)
        form.addRow(buttons)
        self.summary = QLabel(wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)
        self.summary.setMinimumHeight(60)
        self.summary.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        form.addRow(self.summary)
        col.addWidget(route_box)
        col.addWidget(self._build_tree_box())
        col.addWidget(self._build_hierarchy_box())

        net_box = QGroupBox("Network")
        net = QVBoxLayout(net_box)
        self.info = QLabel("No graph loaded.", wordWrap=True,
                           textInteractionFlags=Qt.TextSelectableByMouse)
        self.legend = QLabel(wordWrap=True)
        net.addWidget(self.info)
        net.addWidget(self.legend)
        col.addWidget(net_box)

        self.help_label = QLabel(HINT.replace(" · ", "<br>"), wordWrap=True)
        self.help_label.setStyleSheet("color: #666;")
        col.addWidget(self.help_label)
        col.addStretch(1)

    def _build_tree_box(self) -> QGroupBox:
        box = QGroupBox("Shortest-path tree")
        form = QFormLayout(box)
        self.tree_button = QPushButton("Tree mode (T)", checkable=True,
                                       toolTip="Click a node: colour the network by its distance")
        self.tree_button.toggled.connect(self.tree_action.setChecked)
        self.tree_action.toggled.connect(self.tree_button.setChecked)
        self.method_combo = QComboBox(toolTip="SSSP method (engine.sssp) on the engine's backend; "
                                      "auto: on the GPU the variant measured fastest on this "
                                      "graph, on the CPU near-far")
        self.method_combo.addItem("auto", "auto")
        for name, (_, label) in METHODS.items():
            self.method_combo.addItem(label, name)
        self.method_combo.currentIndexChanged.connect(self._on_method_changed)
        self.method_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.method_combo.setMinimumContentsLength(16)
        self.method_combo.setFocusPolicy(Qt.ClickFocus)
        form.addRow(self.tree_button)
        form.addRow("Method", self.method_combo)
        buttons = QHBoxLayout()
        self.compare_button = QPushButton("Compare methods (C)",
                                          toolTip="Time every method and the CPU reference from the start")
        self.compare_button.clicked.connect(lambda: self.compare())
        self.clear_tree_button = QPushButton("Clear tree (Esc)")
        self.clear_tree_button.clicked.connect(self.clear_route)
        buttons.addWidget(self.compare_button)
        buttons.addWidget(self.clear_tree_button)
        form.addRow(buttons)
        self.tree_info = QLabel(wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)
        self.tree_legend = QLabel(wordWrap=True)
        form.addRow(self.tree_info)
        form.addRow(self.tree_legend)
        for w in (self.tree_button, self.compare_button, self.clear_tree_button):
            w.setFocusPolicy(Qt.NoFocus)     # keys stay with the map
        return box

    def _build_hierarchy_box(self) -> QGroupBox:
        p = self.hierarchy_panel = HierarchyPanel()
        p.contract_button.clicked.connect(self.contract)
        p.cancel_button.clicked.connect(self.engine.cancel_contraction)
        p.levels_button.toggled.connect(self.levels_action.setChecked)
        self.levels_action.toggled.connect(p.levels_button.setChecked)
        p.inspect_button.toggled.connect(self.inspect_action.setChecked)
        self.inspect_action.toggled.connect(p.inspect_button.setChecked)
        p.arc_picked.connect(self.unpack)
        return p

    def _build_docks(self) -> None:
        """Chart docks at the bottom, tabbed: methods compared, contraction, PHAST levels."""
        self.compare_chart = CompareChart()
        self.contract_chart = ContractionChart()
        self.phast_chart = PhastChart()
        docks = []
        for name, title, chart in (("compare", "SSSP methods compared", self.compare_chart),
                                   ("contract", "Contraction (CU-CH)", self.contract_chart),
                                   ("phast", "PHAST query per level", self.phast_chart)):
            chart.setMinimumHeight(200)
            dock = QDockWidget(title, self)
            dock.setObjectName(name)
            dock.setWidget(chart)
            self.addDockWidget(Qt.BottomDockWidgetArea, dock)
            self.view_menu.addAction(dock.toggleViewAction())
            docks.append(dock)
        self.compare_dock, self.contract_dock, self.phast_dock = docks
        self.tabifyDockWidget(self.compare_dock, self.contract_dock)
        self.tabifyDockWidget(self.contract_dock, self.phast_dock)
        for dock in docks:
            dock.hide()

    def _show_dock(self, dock: QDockWidget) -> None:
        if not dock.isVisible():
            dock.show()
            self.resizeDocks([dock], [max(240, self.height() // 3)], Qt.Vertical)
        dock.raise_()

    @staticmethod
    def _dot(color, text: str) -> QLabel:
        return QLabel(f"<span style='color:{_rgb(color)}; font-size:16px'>●</span> {text}")

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.hint_label = QLabel(HINT)
        self.hint_label.setStyleSheet("color: #555;")
        bar.addWidget(self.hint_label, 1)
        self.progress_label = QLabel()
        self.progress = QProgressBar(maximumWidth=180, maximumHeight=16, textVisible=False)
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.engine.cancel)
        self.size_label = QLabel()
        self.backend_label = QLabel("starting engine…")
        for w in (self.progress_label, self.progress, self.cancel_button, self.size_label,
                  self.backend_label):
            bar.addPermanentWidget(w)
        self._show_progress(False)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open…", QKeySequence.Open, self.choose_files)
        self._action(file_menu, "Open &default network", "Ctrl+D", self.open_default)
        self.save_action = self._action(file_menu, "&Save cache…", QKeySequence.Save,
                                        self.choose_cache_path)
        self.save_action.setEnabled(False)
        self.open_hierarchy_action = self._action(file_menu, "Open &hierarchy…", "Ctrl+Shift+O",
                                                  self.choose_hierarchy_file)
        self.save_hierarchy_action = self._action(file_menu, "Save h&ierarchy…", "Ctrl+Shift+S",
                                                  self.choose_hierarchy_path)
        self.open_hierarchy_action.setEnabled(False)
        self.save_hierarchy_action.setEnabled(False)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.Quit, self.close)
        route_menu = self.menuBar().addMenu("&Route")
        self._action(route_menu, "&Swap start and destination", "X", self.swap)
        self._action(route_menu, "&Clear", "Esc", self.clear_route)
        tree_menu = self.menuBar().addMenu("&Tree")
        self.tree_action = self._action(tree_menu, "&Tree mode: shortest-path tree from a click",
                                        "T", self.set_tree_mode, toggled=True)
        self.compare_action = self._action(tree_menu, "&Compare SSSP methods from the start", "C",
                                           lambda: self.compare())
        ch_menu = self.menuBar().addMenu("&Hierarchy")
        self.contract_action = self._action(ch_menu, "&Contract (CU-CH)", "Ctrl+K", self.contract)
        self._action(ch_menu, "C&ancel contraction", None, lambda: self.engine.cancel_contraction())
        ch_menu.addSeparator()
        self.levels_action = self._action(ch_menu, "Colour by &level", "L", self.set_level_colours,
                                          toggled=True)
        self.inspect_action = self._action(ch_menu, "&Inspect nodes and shortcuts", "I",
                                           self.set_inspect_mode, toggled=True)
        for a in (self.contract_action, self.levels_action, self.inspect_action):
            a.setEnabled(False)
        self.view_menu = self.menuBar().addMenu("&View")
        self._action(self.view_menu, "&Fit network", "F", self.map_view.fit)

    def _action(self, menu, text, shortcut, slot, toggled: bool = False) -> QAction:
        action = QAction(text, self, checkable=toggled)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.WindowShortcut)
        (action.toggled if toggled else action.triggered).connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    # ------------------------------------------------------------ loading
    def open_files(self, paths) -> int:
        return self.engine.open_files(paths)

    def open_default(self) -> int:
        return self.engine.generate_default()

    def adopt_graph(self, graph: RoadGraph) -> int:
        return self.engine.adopt_graph(graph, f"Preparing {graph.source or 'graph'}")

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open road network", "", OPEN_FILTERS)
        if paths:
            self.open_files(paths)

    def choose_cache_path(self) -> None:
        if self.graph is None:
            return
        stem = os.path.basename(self.graph.source or "graph").split(".")[0] or "graph"
        path, _ = QFileDialog.getSaveFileName(self, "Save graph cache", f"{stem}.rlg",
                                              "RouteLab cache (*.rlg *.npz)")
        if path:
            self.engine.save_cache(path)

    def _show_progress(self, on: bool) -> None:
        for w in (self.progress_label, self.progress, self.cancel_button):
            w.setVisible(on)

    def _on_backend_ready(self, name: str, description: str) -> None:
        self.backend_label.setText(description)

    def _on_job_started(self, job_id: int, label: str) -> None:
        self._job_labels[job_id] = label
        if job_id == self.engine.current_job:
            self.progress.setValue(0)
            self.progress_label.setText(label + "…")
            self._show_progress(True)

    def _on_job_progress(self, job_id: int, fraction: float, message: str) -> None:
        if job_id == self.engine.current_job:
            self.progress.setValue(int(1000 * min(max(fraction, 0.0), 1.0)))
            if message:
                self.progress_label.setText(message)

    def _job_ended(self) -> None:
        e = self.engine
        if not e.busy and not e.comparing and e.current_hierarchy_job is None:
            self._show_progress(False)
        self.hierarchy_panel.cancel_button.setEnabled(e.contracting)

    def _on_job_cancelled(self, job_id: int, message: str) -> None:
        self._job_ended()
        self.statusBar().showMessage(message, 5000)

    def _on_job_failed(self, job_id: int, message: str) -> None:
        self._job_ended()
        label = self._job_labels.get(job_id, "Loading")
        kept = " The previous graph is still loaded." if self.graph is not None else ""
        self.show_error(f"{label} failed: {message}.{kept}")

    def show_error(self, message: str) -> None:
        self.last_error = message
        self.banner.show_text(message)
        self.error_shown.emit(message)

    def _on_graph_loaded(self, loaded: LoadedGraph) -> None:
        self._job_ended()
        g = self.graph = loaded.graph
        self.drawing = loaded.drawing
        self.banner.hide()
        self.source = self.target = None
        self._invalidate_routes()
        self._set_route(None, "")
        self._set_tree(None)
        self._set_hierarchy(None)
        self.map_view.set_network(
            loaded.drawing, g.data_license,
            "This graph has no coordinates, so there is no map to draw.\n"
            "Type node ids into From and To in the side panel to route.")
        self.metric_combo.blockSignals(True)
        self.metric_combo.clear()
        self.metric_combo.addItems(g.metric_names)
        self.metric_combo.blockSignals(False)
        self.hierarchy_panel.metric_combo.clear()
        self.hierarchy_panel.metric_combo.addItems(g.metric_names)
        self._update_fields()
        self.save_action.setEnabled(True)
        self.open_hierarchy_action.setEnabled(True)
        self.contract_action.setEnabled(True)
        name = g.source or "graph"
        self.setWindowTitle(f"RouteLab — {name}")
        self.size_label.setText(f"{g.num_nodes:,} nodes · {g.num_arcs:,} arcs")
        units = ", ".join(f"{m} ({g.metric_units[m]})" if m in g.metric_units else m
                          for m in g.metric_names)
        info = [f"<b>{name}</b>", f"{g.num_nodes:,} nodes, {g.num_arcs:,} arcs",
                f"metrics: {units}", f"loaded in {loaded.seconds:.2f} s"]
        if g.data_license:
            info.append(g.data_license)
        self.info.setText("<br>".join(info))
        self.legend.setText(self._legend_html(loaded))
        self.statusBar().showMessage(f"Loaded {name}", 4000)
        self.graph_shown.emit(g)

    def _legend_html(self, loaded: LoadedGraph) -> str:
        d = loaded.drawing
        if d is None or len(d.groups) == 1:
            return ""
        present = {int(g) for g in range(len(d.groups))
                   if d.exact.group_first[g + 1] > d.exact.group_first[g]}
        rows = [f"<span style='color:{_rgb(grp.color)}; font-size:15px'><b>━━</b></span> {grp.label}"
                for g, grp in enumerate(d.groups) if g in present]
        rows.append(f"<span style='color:{_rgb(style.ROUTE_COLOR)}; font-size:15px'><b>━━</b></span> route")
        return "<br>".join(rows)

    # ------------------------------------------------------------ routing
    def _on_node_clicked(self, node: int, as_source: bool) -> None:
        if self.inspect_mode:
            self.inspect(node)
        elif as_source or self.source is None:
            self.set_source(node)
        else:
            self.set_target(node)

    def _on_marker_dragged(self, which: str, node: int, finished: bool) -> None:
        if which == "source":
            self.source = node
        else:
            self.target = node
        self._update_fields()
        if self.tree_mode:
            if which == "target":
                self._show_tree_path(node)
            elif finished:
                self._request_tree()
        elif not finished:
            self._request_route(live=True)
        else:
            self._request_route()

    @property
    def tree_mode(self) -> bool:
        return self.tree_action.isChecked()

    def _update(self) -> None:
        """Route, or in tree mode the tree (then the path to the destination)."""
        if self.tree_mode:
            self._request_tree()
        else:
            self._request_route()

    def set_source(self, node: int | None) -> None:
        self.source = node
        self.map_view.set_marker("source", node)
        self._update_fields()
        self._update()

    def set_target(self, node: int | None) -> None:
        self.target = node
        self.map_view.set_marker("target", node)
        self._update_fields()
        if self.tree_mode:
            self._show_tree_path(node)
        else:
            self._request_route()

    def swap(self) -> None:
        if self.source is None and self.target is None:
            return
        self.source, self.target = self.target, self.source
        self.map_view.set_marker("source", self.source)
        self.map_view.set_marker("target", self.target)
        self._update_fields()
        self._update()

    def clear_route(self) -> None:
        """Esc: no start, no destination, no route and no tree."""
        self.source = self.target = None
        self.map_view.set_marker("source", None)
        self.map_view.set_marker("target", None)
        self._invalidate_routes()
        self._set_route(None, "")
        self._set_tree(None)
        self.inspect(None)
        self._update_fields()

    def _on_metric_changed(self, metric: str) -> None:
        if metric:
            self._update()

    def _metric(self) -> str:
        return self.metric_combo.currentText() or self.graph.default_metric

    def _on_id_typed(self, which: str) -> None:
        if self.graph is None:
            return
        edit = self.source_edit if which == "source" else self.target_edit
        text = edit.text().strip()
        if not text:
            (self.set_source if which == "source" else self.set_target)(None)
            return
        try:
            node = int(self.graph.index_of(int(text))[0])
        except (KeyError, ValueError) as e:
            msg = str(e).strip("'\"") if isinstance(e, KeyError) else f"{text!r} is not a node id"
            self._set_route(None, msg, error=True)
            return
        (self.set_source if which == "source" else self.set_target)(node)
        self.map_view.plot.setFocus()

    def _update_fields(self) -> None:
        for node, edit in ((self.source, self.source_edit), (self.target, self.target_edit)):
            edit.setText("" if node is None or self.graph is None else str(self.graph.node_id[node]))

    def _invalidate_routes(self) -> None:
        self._accept_from = math.inf
        self.engine.drop_pending_route()

    def _request_route(self, live: bool = False) -> None:
        if self.graph is None or self.source is None or self.target is None:
            self._invalidate_routes()
            self._set_route(None, "")
            return
        if not live:
            self._invalidate_routes()
        request_id = self.engine.route(self.source, self.target, self._metric())
        self._accept_from = min(self._accept_from, request_id)
        if not live:
            self.summary.setText("<span style='color:#777'>routing…</span>")

    def _on_route_found(self, result: RouteResult) -> None:
        if result.request_id < self._accept_from:
            return
        self._set_route(result, result.summary)

    def _on_route_failed(self, request_id: int, message: str) -> None:
        if request_id < self._accept_from:
            return
        self._set_route(None, message, error=True)

    def _set_route(self, result: RouteResult | None, text: str, error: bool = False) -> None:
        self.route_result = result
        self.route_message = text
        self.map_view.set_route(None if result is None else result.xy)
        if error:
            self.summary.setText(f"<span style='color:#b3261e'>{text}</span>")
        else:
            self.summary.setText(text)
        self.route_shown.emit(result)

    # ------------------------------------------------------- shortest-path trees
    def set_tree_mode(self, on: bool) -> None:
        """Tree mode: the start gets its whole shortest-path tree instead of a route."""
        if self.tree_action.isChecked() != on:
            self.tree_action.setChecked(on)      # comes back here through toggled
            return
        if on and self.inspect_mode:
            self.inspect_action.setChecked(False)
        self._show_hint(TREE_HINT if on else HINT)
        self.map_view.hover_enabled = on
        self._invalidate_routes()
        self._set_route(None, "")
        self._set_tree(None)
        if on and self.source is None:
            self.tree_info.setText("Click a node: its shortest-path tree.")
        self._update()

    def tree_from(self, node: int) -> None:
        """Tree mode, with ``node`` as the source and no destination."""
        self.source, self.target = node, None
        self.map_view.set_marker("source", node)
        self.map_view.set_marker("target", None)
        self._update_fields()
        if self.tree_mode:
            self._request_tree()
        else:
            self.set_tree_mode(True)

    def _on_method_changed(self) -> None:
        if self.tree_mode:
            self._request_tree()

    def _request_tree(self) -> None:
        if self.graph is None or self.source is None:
            return
        method = self.method_combo.currentData()
        self._tree_accept_from = self.engine.tree(self.source, self._metric(), method)
        self.tree_info.setText(f"<span style='color:#777'>computing the tree from node "
                               f"{self.graph.node_id[self.source]}…</span>")

    def _on_tree_found(self, answer: TreeAnswer) -> None:
        if answer.request_id < self._tree_accept_from or not self.tree_mode:
            return
        self._tree_accept_from = answer.request_id
        self._set_tree(answer)
        if self.target is not None:
            self._show_tree_path(self.target)
        else:
            self._set_route(None, "Hover or click a node: its distance and path.")

    def _on_tree_failed(self, request_id: int, message: str) -> None:
        if request_id < self._tree_accept_from:
            return
        self._set_tree(None)
        self.tree_info.setText(f"<span style='color:#b3261e'>no tree: {message}</span>")
        self.show_error(f"Shortest-path tree failed: {message}")

    def _set_tree(self, answer: TreeAnswer | None) -> None:
        """Show a tree on the map and in the panel, or go back to the road classes."""
        self.tree = answer
        if answer is None:
            self._tree_accept_from = math.inf
            self.engine.drop_pending_tree()
            self.tree_bins = None
            self.tree_info.setText("")
            self.tree_legend.setText("")
        else:
            g, d = self.graph, answer.tree.distance
            self.tree_bins = make_bins(int(d.max()), display_unit(g.metric_units, answer.metric))
            self.tree_info.setText(self._tree_info_html(answer))
            self.tree_legend.setText(_legend_table(self.tree_legend_rows()))
            self.statusBar().showMessage(
                f"Tree from node {g.node_id[answer.source]}: {method_label(answer.method)}, "
                f"{answer.compute_ms:.2f} ms on {answer.backend}", 8000)
            if answer.level_ms is not None:
                self._show_phast_levels(answer)
        self._apply_colouring()
        self.tree_shown.emit(answer)

    def _apply_colouring(self) -> None:
        """The map's colours: the tree on the map, else levels when asked for, else classes."""
        mv = self.map_view
        levels = self.levels_action.isChecked() and self.hierarchy is not None
        key = ("tree", id(self.tree)) if self.tree is not None else ("levels", id(self.hierarchy)) \
            if levels else None
        if key != self._colouring_key:       # unchanged: keep the curves
            self._colouring_key = key
            if self.tree is not None:
                mv.set_tree(self.tree.tree.distance, self.tree_bins)
            elif levels:
                mv.set_levels(self.hierarchy.node_level, self.level_bins)
            else:
                mv.set_colouring(None)
        self.legend.setVisible(mv.colouring is None)
        self.hierarchy_panel.legend.setVisible(mv.colouring == "levels")

    def tree_legend_rows(self) -> list[tuple[tuple, str]]:
        """(colour, text) per distance bin, then the unreachable roads when there are any."""
        if self.tree is None:
            return []
        bins = self.tree_bins
        rows = list(zip(bins.colors, bins.labels()))
        unreached = int(np.count_nonzero(self.tree.tree.distance < 0))
        if unreached:
            rows.append((UNREACHABLE_COLOR, f"unreachable ({unreached:,} nodes)"))
        return rows

    def _tree_info_html(self, a: TreeAnswer) -> str:
        g, d = self.graph, a.tree.distance
        reached = int(np.count_nonzero(d >= 0))
        unit = self.tree_bins.unit
        what = a.metric if unit.suffix else f"{a.metric}, in metric units"
        return "<br>".join([
            f"<b>From node {g.node_id[a.source]}</b> · {what}",
            f"{method_label(a.method)}",
            f"on {a.backend}",
            f"<b>{a.compute_ms:.2f} ms</b> ({a.total_ms:.2f} ms with the copy to host)",
            f"reached {reached:,} of {g.num_nodes:,} nodes · farthest {unit.format(int(d.max()))}",
        ])

    def _show_tree_path(self, node: int | None, pinned: bool = True) -> None:
        """The path to ``node`` read from the tree on the map (no recomputation)."""
        if self.tree is None or node is None or self.graph is None:
            return
        g, t = self.graph, self.tree.tree
        unit = self.tree_bins.unit
        try:
            path = paths.path_from_tree(g, t, node)
        except paths.Unreachable as e:
            self._set_route(None, f"node {g.node_id[node]}: {e}", error=pinned)
            return
        xy = None if self.drawing is None else route_polyline(self.drawing.points, g, path.arcs)
        text = (f"<b>{unit.format(path.distance)}</b> from node {g.node_id[t.source]} to node "
                f"{g.node_id[node]}<br>{route_summary(g, path).text()}")
        self._set_route(RouteResult(0, t.source, node, t.metric, path, xy, text, 0.0), text)

    def _on_node_hovered(self, node: int) -> None:
        if self.tree is None:
            return
        g, d = self.graph, self.tree.tree.distance
        far = "cannot be reached" if d[node] < 0 else self.tree_bins.unit.format(int(d[node]))
        self.statusBar().showMessage(f"node {g.node_id[node]}: {far}", 4000)
        if self.target is None:       # a clicked destination stays until the next click
            self._show_tree_path(node, pinned=False)

    def _on_context_menu(self, node: int, global_pos) -> None:
        if self.node_menu is None:
            self.node_menu = QMenu(self)
        menu = self.node_menu
        menu.clear()
        menu.addSection(f"node {self.graph.node_id[node]}")
        menu.addAction("Route from here", lambda: self._route_end("source", node))
        menu.addAction("Route to here", lambda: self._route_end("target", node))
        menu.addSeparator()
        menu.addAction("Shortest-path tree from here", lambda: self.tree_from(node))
        menu.addAction("Compare SSSP methods from here", lambda: self.compare(node))
        menu.popup(global_pos)

    def _route_end(self, which: str, node: int) -> None:
        """A context-menu route end: leaves tree mode, then routes."""
        if self.tree_mode:
            self.set_tree_mode(False)
        (self.set_source if which == "source" else self.set_target)(node)

    # ------------------------------------------------------------ compare
    def compare(self, source: int | None = None) -> int | None:
        """Time every SSSP method and the reference from ``source`` (default: the start)."""
        source = self.source if source is None else source
        if self.graph is None or source is None:
            self.statusBar().showMessage(
                "Compare: set a start first, or right-click a node ▸ Compare SSSP methods from here", 6000)
            return None
        request_id = self.engine.compare(source, self._metric())
        self.progress.setValue(0)
        self.progress_label.setText("Comparing SSSP methods…")
        self._show_progress(True)
        return request_id

    def _on_compare_progress(self, request_id: int, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * min(max(fraction, 0.0), 1.0)))
        self.progress_label.setText(message)

    def _on_compare_done(self, c: Comparison) -> None:
        self._job_ended()
        self.comparison = c
        self.compare_chart.show_comparison(c, int(self.graph.node_id[c.source]))
        if not self.compare_dock.isVisible():
            self.compare_dock.show()
            self.resizeDocks([self.compare_dock], [max(220, self.height() // 3)], Qt.Vertical)
        self.compare_dock.raise_()
        self.statusBar().showMessage(f"Compared {len(c.timings)} methods: {c.verdict}", 8000)
        self.comparison_shown.emit(c)

    def _on_compare_failed(self, request_id: int, message: str) -> None:
        self._job_ended()
        self.show_error(f"Comparing SSSP methods failed: {message}")

    def _on_compare_cancelled(self, request_id: int) -> None:
        self._job_ended()
        self.statusBar().showMessage("Comparison cancelled", 5000)

    # ------------------------------------------------ contraction hierarchy
    def contract(self) -> int | None:
        """Contract the graph with the panel's K, C and metric; the chart fills live."""
        if self.graph is None:
            return None
        p = self.hierarchy_panel
        metric = p.metric_combo.currentText() or self.graph.default_metric
        K, C = p.k_spin.value(), p.c_spin.value()
        job = self.engine.contract(metric, K, C)
        self._hierarchy_jobs[job] = "Contraction"
        self.contract_chart.start(f"Contracting {self.graph.source or 'graph'} · {metric} · "
                                  f"K = {K:,}, C = {C:g} · {self.engine.backend_description}…")
        self._show_dock(self.contract_dock)
        self.progress.setValue(0)
        self.progress_label.setText("Contracting…")
        self._show_progress(True)
        p.cancel_button.setEnabled(True)
        return job

    def open_hierarchy(self, path) -> int | None:
        if self.graph is None:
            return None
        job = self.engine.open_hierarchy(path)
        self._hierarchy_jobs[job] = f"Opening the hierarchy {os.path.basename(str(path))}"
        self.progress_label.setText("Opening hierarchy…")
        self._show_progress(True)
        return job

    def choose_hierarchy_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open contraction hierarchy", "", HIERARCHY_FILTER)
        if path:
            self.open_hierarchy(path)

    def choose_hierarchy_path(self) -> None:
        if self.hierarchy is None:
            return
        stem = os.path.basename(self.graph.source or "graph").split(".")[0] or "graph"
        path, _ = QFileDialog.getSaveFileName(self, "Save contraction hierarchy",
                                              f"{stem}.{self.hierarchy.metric}.rlh", HIERARCHY_FILTER)
        if path:
            self.engine.save_hierarchy(path if path.endswith(".rlh") else path + ".rlh")

    def _on_contract_iteration(self, job_id: int, record: dict) -> None:
        self.contract_chart.add_iteration(record)

    def _on_contract_cancelled(self, job_id: int) -> None:
        self._job_ended()
        self._hierarchy_jobs.pop(job_id, None)
        levels = len(self.contract_chart.records)
        self.contract_chart.set_title(f"Contraction cancelled after {levels} levels", "#8a1c12")
        kept = " (the previous hierarchy is kept)" if self.hierarchy is not None else ""
        self.statusBar().showMessage(f"Contraction cancelled{kept}", 5000)

    def _on_hierarchy_failed(self, job_id: int, message: str) -> None:
        self._job_ended()
        what = self._hierarchy_jobs.pop(job_id, "Contraction")
        if what == "Contraction":
            self.contract_chart.set_title(f"Contraction failed: {message}", "#8a1c12")
        kept = " The previous hierarchy is still in use." if self.hierarchy is not None else ""
        self.show_error(f"{what} failed: {message}.{kept}")

    def _on_hierarchy_ready(self, answer: HierarchyAnswer) -> None:
        self._job_ended()
        self._hierarchy_jobs.pop(answer.job_id, None)
        h = answer.hierarchy
        self._set_hierarchy(h)
        if answer.origin == "contracted":
            self.contract_chart.set_title(self._summary_line(h), "#1b5e20")
        else:                 # an opened file: its contraction's records
            self.contract_chart.show_records(h.iterations, f"{os.path.basename(answer.origin)}: "
                                                           f"{self._summary_line(h)}")
            self._show_dock(self.contract_dock)
        self.statusBar().showMessage(f"Hierarchy ready: {self._summary_line(h)}", 8000)

    @staticmethod
    def _summary_line(h) -> str:
        s = h.summary()
        return (f"{s['levels']} levels · {s['shortcuts']:,} shortcuts · edge growth "
                f"{s['edge_growth']:.2f} · {s['contract_ms'] / 1000:.2f} s on {s['backend'].upper()} "
                f"(K = {s['K']:,}, C = {s['C']:g}, {h.metric})")

    def _set_hierarchy(self, h) -> None:
        """Use hierarchy ``h`` (None drops it): summary, PHAST as the tree method, views."""
        self.hierarchy = h
        self.level_bins = None if h is None else make_level_bins(h.num_levels)
        p = self.hierarchy_panel
        for w in (p.levels_button, p.inspect_button, self.levels_action, self.inspect_action,
                  self.save_hierarchy_action):
            w.setEnabled(h is not None)
        phast_index = self.method_combo.findData(PHAST)
        if h is None:
            p.summary.setText("No hierarchy.")
            self.levels_action.setChecked(False)
            self.inspect_action.setChecked(False)
            if phast_index >= 0:
                self.method_combo.removeItem(phast_index)
            self.phast_dock.hide()
        else:
            s = h.summary()
            p.summary.setText("<br>".join([
                f"<b>{s['levels']} levels</b> · core of {s['core_nodes']:,} nodes · metric {h.metric}",
                f"{s['shortcuts']:,} shortcuts · edge growth (|E↑|+|E↓|)/|E| = {s['edge_growth']:.2f}",
                f"<b>{s['contract_ms'] / 1000:.2f} s</b> on {s['backend'].upper()} "
                f"(core APSP {s.get('apsp_ms', 0):.0f} ms) · K = {s['K']:,}, C = {s['C']:g}"]))
            rows = zip(self.level_bins.colors, self.level_bins.labels(),
                       np.bincount(self.level_bins.of(h.node_level), minlength=self.level_bins.count))
            p.legend.setText("<b>Level</b> of a road's higher end · nodes<br>" +
                             _legend_table([(c, f"{t} · {n:,}") for c, t, n in rows]))
            if phast_index < 0:
                self.method_combo.insertItem(0, PHAST_LABEL, PHAST)
            self.method_combo.setCurrentIndex(0)         # the default while a hierarchy exists
        self._apply_colouring()
        if self.inspected_node is not None:
            self.inspect(self.inspected_node if h is not None else None)
        self.hierarchy_shown.emit(h)

    def set_level_colours(self, on: bool) -> None:
        self._apply_colouring()

    @property
    def inspect_mode(self) -> bool:
        return self.inspect_action.isChecked()

    def set_inspect_mode(self, on: bool) -> None:
        """Inspect: clicks show a node's hierarchy arcs instead of routing."""
        if on and self.tree_mode:
            self.set_tree_mode(False)
        self._show_hint(INSPECT_HINT if on else TREE_HINT if self.tree_mode else HINT)
        if not on:
            self.inspect(None)
        elif self.inspected_node is None:
            self.hierarchy_panel.inspect_info.setText("Click a node: its hierarchy arcs.")

    def _show_hint(self, text: str) -> None:
        self.hint_label.setText(text)
        self.help_label.setText(text.replace(" · ", "<br>"))

    def inspect(self, node: int | None) -> None:
        """Draw ``node``'s upward and downward hierarchy arcs and list them (None clears)."""
        h, p, g = self.hierarchy, self.hierarchy_panel, self.graph
        self.inspected_node = node if h is not None and self.drawing is not None else None
        if self.inspected_node is None:
            self.map_view.clear_hierarchy_arcs()
            p.set_arcs([])
            p.inspect_info.setText("")
            p.arc_info.setText("")
            return
        up, down = h.node_arcs(node)
        arcs = np.concatenate([up, down])
        is_up = np.arange(arcs.size) < up.size
        shortcut = h.is_shortcut(arcs)
        other = np.where(is_up, h.arc_head[arcs], h.arc_tail[arcs])
        self.map_view.show_hierarchy_arcs(node, arcs, other, is_up, shortcut)
        unit = display_unit(g.metric_units, h.metric)
        rows = [(int(a), f"{'↑' if u else '↓'} {g.node_id[o]} · lvl {h.node_level[o]} · "
                         f"{'shortcut' if sc else 'road'} · {unit.format(int(h.arc_weight[a]))}")
                for a, u, o, sc in zip(arcs, is_up, other, shortcut)]
        p.set_arcs(rows)
        p.arc_info.setText("")
        level = int(h.node_level[node])
        where = f"core (level {level})" if level == h.num_levels else f"level {level} of {h.num_levels}"
        text = [f"<b>Node {g.node_id[node]}</b> · {where}",
                f"<b style='color:{_rgb(style.UP_COLOR)}'>{up.size} up</b> "
                f"({int(shortcut[:up.size].sum())} shortcuts) · "
                f"<b style='color:{_rgb(style.DOWN_COLOR)}'>{down.size} down</b> "
                f"({int(shortcut[up.size:].sum())} shortcuts); shortcuts dashed"]
        if level == h.num_levels:
            text.append(f"A core node: PHAST reaches it through the core's distance matrix "
                        f"({h.core_nodes.size:,} nodes); it has no arcs up or down.")
        elif arcs.size:
            text.append("Pick an arc (or click the middle of a drawn one): its road path.")
        p.inspect_info.setText("<br>".join(text))
        self._reveal(p.arc_list)
        self.inspected.emit(node)

    def unpack(self, arc: int) -> None:
        """Draw a hierarchy arc's original arcs along the road, with the node it bypasses."""
        h, g = self.hierarchy, self.graph
        if h is None or self.drawing is None:
            return
        originals = h.unpack(arc)
        mid = h.midpoint(arc)
        self.map_view.set_unpacked(route_polyline(self.drawing.points, g, originals), mid)
        self.hierarchy_panel.select_arc(arc)
        unit = display_unit(g.metric_units, h.metric)
        t, hd = int(h.arc_tail[arc]), int(h.arc_head[arc])
        lines = [f"<b>{'Shortcut' if h.is_shortcut(arc) else 'Road arc'} {g.node_id[t]} → "
                 f"{g.node_id[hd]}</b> · {unit.format(int(h.arc_weight[arc]))}"]
        if mid >= 0:
            lines.append(f"<span style='color:{_rgb(style.MIDPOINT_COLOR)}'>◆</span> bypasses node "
                         f"{g.node_id[mid]} (level {h.node_level[mid]}) · "
                         f"<span style='color:{_rgb(style.UNPACKED_COLOR)}'>unpacks to "
                         f"{originals.size} road arcs</span>")
        self.hierarchy_panel.arc_info.setText("<br>".join(lines))
        self._reveal(self.hierarchy_panel.arc_info)
        self.unpacked.emit(arc)

    def _reveal(self, widget) -> None:
        """Scroll the side panel to ``widget`` once the layout has taken its new text."""
        QTimer.singleShot(0, lambda: self.panel_scroll.ensureWidgetVisible(widget, 0, 0))

    def _show_phast_levels(self, a: TreeAnswer) -> None:
        lm = a.level_ms
        self.phast_chart.show_levels(lm, (
            f"PHAST from node {self.graph.node_id[a.source]} · {a.compute_ms:.2f} ms · up "
            f"{sum(lm['up']):.2f} · core {lm.get('core', 0.0):.2f} · down {sum(lm['down']):.2f} ms "
            f"(per-level timing) · {a.backend}"))
        self._show_dock(self.phast_dock)

    # ------------------------------------------------------------ closing
    def closeEvent(self, event) -> None:
        self.engine.shutdown()
        super().closeEvent(event)
