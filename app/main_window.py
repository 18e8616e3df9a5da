"""RouteLab's main window: menus, the map, the route panel and the status bar.

Click the map to set the start (green), click again for the destination (pink): the
route follows. Further clicks move the destination; Shift+click or right-click moves the
start. Drag a marker to re-route (live while dragging), X swaps, Esc clears.
"""
from __future__ import annotations

import math
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QFrame, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QMainWindow, QProgressBar,
                               QPushButton, QSplitter, QToolButton, QVBoxLayout, QWidget)

from engine.graph import RoadGraph

from app import map_style as style
from app.engine_thread import EngineClient, LoadedGraph, RouteResult
from app.map_view import MapView

HINT = ("Click: start, then destination · Shift+click / right-click: move start · "
        "drag markers · X: swap · Esc: clear · wheel: zoom · drag: pan · F: fit")
OPEN_FILTERS = ";;".join([
    "Road networks (*.gr *.gr.gz *.co *.co.gz *.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2 *.rlg *.npz)",
    "DIMACS (*.gr *.gr.gz *.co *.co.gz)",
    "OpenStreetMap (*.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2)",
    "RouteLab cache (*.rlg *.npz)",
    "All files (*)",
])


def _rgb(color) -> str:
    return "#%02x%02x%02x" % tuple(color)


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
    route_shown = Signal(object)    # RouteResult drawn, or None when cleared / failed

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

        self.engine = EngineClient(backend, parent=self)
        self.map_view = MapView()
        self.banner = ErrorBanner()
        self._build_panel()
        self._build_status_bar()
        self._build_menus()

        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.banner)
        col.addWidget(self.map_view, 1)
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(self.panel)
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
        e.saved.connect(lambda path: self.statusBar().showMessage(f"Saved {path}", 5000))
        e.error.connect(self.show_error)
        self.map_view.node_clicked.connect(self._on_node_clicked)
        self.map_view.marker_dragged.connect(self._on_marker_dragged)

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

        net_box = QGroupBox("Network")
        net = QVBoxLayout(net_box)
        self.info = QLabel("No graph loaded.", wordWrap=True,
                           textInteractionFlags=Qt.TextSelectableByMouse)
        self.legend = QLabel(wordWrap=True)
        net.addWidget(self.info)
        net.addWidget(self.legend)
        col.addWidget(net_box)

        help_label = QLabel(HINT.replace(" · ", "<br>"), wordWrap=True)
        help_label.setStyleSheet("color: #666;")
        col.addWidget(help_label)
        col.addStretch(1)

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
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.Quit, self.close)
        route_menu = self.menuBar().addMenu("&Route")
        self._action(route_menu, "&Swap start and destination", "X", self.swap)
        self._action(route_menu, "&Clear", "Esc", self.clear_route)
        view_menu = self.menuBar().addMenu("&View")
        self._action(view_menu, "&Fit network", "F", self.map_view.fit)

    def _action(self, menu, text, shortcut, slot) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.WindowShortcut)
        action.triggered.connect(slot)
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
        if not self.engine.busy:
            self._show_progress(False)

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
        self.map_view.set_network(
            loaded.drawing, g.data_license,
            "This graph has no coordinates, so there is no map to draw.\n"
            "Type node ids into From and To in the side panel to route.")
        self.metric_combo.blockSignals(True)
        self.metric_combo.clear()
        self.metric_combo.addItems(g.metric_names)
        self.metric_combo.blockSignals(False)
        self._update_fields()
        self.save_action.setEnabled(True)
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
        if as_source or self.source is None:
            self.set_source(node)
        else:
            self.set_target(node)

    def _on_marker_dragged(self, which: str, node: int, finished: bool) -> None:
        if which == "source":
            self.source = node
        else:
            self.target = node
        self._update_fields()
        if not finished:
            self._request_route(live=True)
        else:
            self._request_route()

    def set_source(self, node: int | None) -> None:
        self.source = node
        self.map_view.set_marker("source", node)
        self._update_fields()
        self._request_route()

    def set_target(self, node: int | None) -> None:
        self.target = node
        self.map_view.set_marker("target", node)
        self._update_fields()
        self._request_route()

    def swap(self) -> None:
        if self.source is None and self.target is None:
            return
        self.source, self.target = self.target, self.source
        self.map_view.set_marker("source", self.source)
        self.map_view.set_marker("target", self.target)
        self._update_fields()
        self._request_route()

    def clear_route(self) -> None:
        self.source = self.target = None
        self.map_view.set_marker("source", None)
        self.map_view.set_marker("target", None)
        self._invalidate_routes()
        self._set_route(None, "")
        self._update_fields()

    def _on_metric_changed(self, metric: str) -> None:
        if metric:
            self._request_route()

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
        request_id = self.engine.route(self.source, self.target, self.metric_combo.currentText()
                                       or self.graph.default_metric)
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

    # ------------------------------------------------------------ closing
    def closeEvent(self, event) -> None:
        self.engine.shutdown()
        super().closeEvent(event)
