"""Graphs: File ▸ Open / Open default network / Save cache, and the side panel's
"Network" box (what is loaded, the road-class legend)."""
from __future__ import annotations

import html

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QGroupBox, QLabel, QVBoxLayout

from engine.core.units import unit_of

from app import map_style as style
from app.feature import Controller, register_controller
from app.widgets import legend_table, selectable_label

OPEN_FILTERS = ";;".join([
    "Road networks (*.gr *.gr.gz *.co *.co.gz *.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2 *.rlg *.npz)",
    "DIMACS (*.gr *.gr.gz *.co *.co.gz)",
    "OpenStreetMap (*.osm.pbf *.pbf *.osm *.osm.gz *.osm.bz2)",
    "RouteLab cache (*.rlg *.npz)",
    "All files (*)",
])
NO_COORDINATES = ("This graph has no coordinates, so there is no map to draw.\n"
                  "Type node ids into From and To in the side panel to route.")


@register_controller
class GraphController(Controller):
    order = 10
    kinds = ("load", "cache")

    def __init__(self, window) -> None:
        super().__init__(window)
        self._colouring: str | None = None      # the map's last colouring (None: road classes)
        menu = window.menu("&File")
        window.add_action(menu, "&Open…", QKeySequence.Open, self.choose_files)
        window.add_action(menu, "Open &default network", "Ctrl+D", self.engine.generate_default)
        self.save_action = window.capability_action("cache")     # File ▸ Save cache…
        box = QGroupBox("Network")
        col = QVBoxLayout(box)
        self.info = selectable_label("No graph loaded.")
        self.legend = QLabel(wordWrap=True)
        col.addWidget(self.info)
        col.addWidget(self.legend)
        window.add_panel(box, last=True)

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Open road network", "", OPEN_FILTERS)
        if paths:
            self.engine.open_files(paths)

    def trigger(self, capability: str) -> None:
        self.choose_cache_path()

    def choose_cache_path(self) -> None:
        if self.session.graph is None:
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Save graph cache",
                                              f"{self.session.file_stem()}.rlg",
                                              "RouteLab cache (*.rlg *.npz)")
        if path:
            self.save_cache(path)

    def save_cache(self, path) -> int:
        return self.engine.submit("cache", {"out": str(path)}, label="Saving the cache")

    def on_result(self, job, result) -> None:
        {"load": self._adopt, "cache": self._saved}[job.kind](result)

    def on_error(self, job, message: str) -> None:
        {"load": self._load_failed, "cache": self._save_failed}[job.kind](job, message)

    def _saved(self, written) -> None:
        self.window.statusBar().showMessage(f"Saved {written.path}", 5000)

    def _save_failed(self, job, message: str) -> None:
        self.window.show_error(f"Could not save the cache: {message}")

    def _load_failed(self, job, message: str) -> None:
        kept = " The previous graph is still loaded." if self.session.graph is not None else ""
        self.window.show_error(f"{job.label} failed: {message}.{kept}")

    def _adopt(self, result) -> None:
        """A graph made and prepared on the engine thread (engine_thread.LoadedGraph)."""
        g = result.graph
        self.window.banner.hide()
        self.session.adopt(g, result.drawing)
        self.map_view.set_network(result.drawing, g.data_license, NO_COORDINATES)
        self.window.graph_adopted()
        name = g.source or "graph"
        self.window.setWindowTitle(f"RouteLab — {name}")
        self.window.size_label.setText(f"{g.num_nodes:,} nodes · {g.num_arcs:,} arcs")
        units = ", ".join(f"{m} (in {u.words})" if u.kind else f"{m} (unit not known)"
                          for m, u in ((m, unit_of(g.metric_units, m)) for m in g.metric_names))
        info = [f"<b>{name}</b>", f"{g.num_nodes:,} nodes, {g.num_arcs:,} arcs · loaded in {result.seconds:.2f} s",
                f"metrics: {units}"]
        if g.data_license:
            info.append(g.data_license)
        info += [f"<span style='color:#8a5a00'>{html.escape(note)}</span>" for note in result.notes]
        self.info.setText("<br>".join(info))
        self.legend.setText(self._legend_html(result.drawing))
        skipped = f" ({len(result.notes)} file(s) beside it not used: see Network)" if result.notes else ""
        self.window.statusBar().showMessage(f"Loaded {name}{skipped}", 6000)
        self.window.graph_shown.emit(g)

    def colouring_shown(self, name: str | None) -> None:
        self.legend.setVisible(name is None)
        if name is None and self._colouring is not None:   # the classes are back: their legend too
            self.window.panel.open(self.legend, alone=False)
        self._colouring = name

    @staticmethod
    def _legend_html(d) -> str:
        if d is None or len(d.groups) == 1:
            return ""
        rows = [(grp.color, grp.label) for g, grp in enumerate(d.groups)
                if d.exact.group_first[g + 1] > d.exact.group_first[g]]
        return legend_table([*rows, (style.ROUTE_COLOR, "route")])   # two columns: the panel fits 1280x800
