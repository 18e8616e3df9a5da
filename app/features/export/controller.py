"""File ▸ Export…: what the map shows, in a field-standard format (engine.export): the
route or the cost-budgeted path as GeoJSON or GPX, the tree as GeoJSON points or CSV,
the service area as GeoJSON polygons. The file name's extension chooses the format;
``export_to(path)`` does the work without the dialog (tests, scripts); the menu's
export writes on the engine thread (a whole tree of NY takes a second)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog

from engine.export import write_path
from engine.core.units import Unit, unit_of

from app.feature import Controller, register_controller
from app.errors import describe

NOTHING = "Nothing to export: show a route, a tree or a cost-budgeted path first."
# What can be exported -> (dialog filter, extension) per format, the first the default.
FORMATS = {
    "route": (("GeoJSON line (*.geojson)", ".geojson"), ("GPX track (*.gpx)", ".gpx")),
    "csp": (("GeoJSON line (*.geojson)", ".geojson"), ("GPX track (*.gpx)", ".gpx")),
    "tree": (("GeoJSON, a point per node (*.geojson)", ".geojson"), ("CSV, a row per node (*.csv)", ".csv")),
    "service_area": (("Service area, GeoJSON polygons (*.geojson)", ".geojson"),),
}


@register_controller
class ExportController(Controller):
    order = 80
    kinds = ("export",)      # the engine job that writes the file
    exported = Signal(str)   # what was written, once the engine thread has written it

    def __init__(self, window) -> None:
        super().__init__(window)
        self.action = window.add_action(window.menu("&File"), "&Export…", "Ctrl+E",
                                        self.choose_file, needs_graph=True)

    # ---------------------------------------------------------------- what
    def shown(self) -> list[str]:
        """What the map shows that can be exported, the most specific first."""
        s, found = self.session, []
        if s.mode == "tree" and s.tree is not None:
            if self._service_area() is not None:
                found.append("service_area")
            found.append("tree")
        if s.mode == "csp" and self._csp() is not None:
            found.append("csp")
        if s.route is not None and s.mode != "csp":
            found.append("route")
        return found

    def _csp(self):
        c = self.window.controller("csp")
        return None if c is None else c.result

    def _service_area(self):
        c = self.window.controller("isochrone")
        return None if c is None else c.answer

    # --------------------------------------------------------------- dialog
    def choose_file(self) -> None:
        shown = self.shown()
        if not shown:
            self.window.show_error(NOTHING)
            return
        what = "tree" if shown[0] == "service_area" else shown[0]   # the tree first, its areas offered
        filters = [(f, w) for w in (what, *shown) for f, _ in FORMATS[w]]
        filters = list(dict.fromkeys(filters))
        name = f"{self.session.file_stem()}-{what.replace('_', '-')}{FORMATS[what][0][1]}"
        path, chosen = QFileDialog.getSaveFileName(self.window, "Export", name,
                                                   ";;".join(f for f, _ in filters))
        if path:
            self.export_and_report(path, dict(filters).get(chosen))

    def export_and_report(self, path: str, what: str | None = None) -> int | None:
        """Check here, write on the engine thread; the status bar says when it is done."""
        try:
            write = self.writer(path, what)
        except ValueError as e:
            self.window.show_error(f"Export failed: {describe(e)}")
            return None
        return self.engine.submit("export", {"write": write}, label="Exporting")

    def on_result(self, job, written: str) -> None:
        self.window.statusBar().showMessage(f"Exported {written}", 8000)
        self.exported.emit(written)

    def on_error(self, job, message: str) -> None:
        self.window.show_error(f"Export failed: {message}")

    # ----------------------------------------------------------------- work
    def export_to(self, path, what: str | None = None) -> str:
        """Write what is shown (or ``what``: route, csp, tree, service_area) to ``path``
        now; returns a line saying what was written."""
        return self.writer(path, what)()

    def writer(self, path, what: str | None = None):
        """A function that writes what is shown (or ``what``) to ``path`` in the format its
        extension names and returns a line saying what it wrote. Raises ValueError when
        there is nothing to export or the format does not fit."""
        shown = self.shown()
        if not shown:
            raise ValueError(NOTHING)
        what = what or next(w for w in shown if w != "service_area")
        if what not in shown:
            raise ValueError(f"there is no {what.replace('_', ' ')} on the map to export")
        ext = Path(path).suffix.lower()
        exts = [e for _, e in FORMATS[what]]
        if ext == ".json":
            ext = ".geojson"
        if ext not in exts:
            raise ValueError(f"a {what.replace('_', ' ')} is exported as {' or '.join(exts)}, "
                             f"not {Path(path).suffix or 'a file without extension'}")
        write = getattr(self, f"_{what}_writer")(path, ext)     # reads the session here, now

        def run() -> str:
            write()
            return f"the {what.replace('_', ' ')} to {path}"
        return run

    # Each returns a function of no arguments that writes: what it needs is read now,
    # on the window's thread, so the write can run on the engine thread.
    def _route_writer(self, path, ext: str):
        from engine.capabilities.route import route_export
        g, r = self.session.graph, self.session.route
        unit = Unit(r.turns["unit"] or "") if r.turns else unit_of(g.metric_units, r.path.metric)
        method = r.method_label or "shortest-path tree"
        return _path_writer(g, r.path, path, ext, route_export(g, r.path, unit, method, method))

    def _csp_writer(self, path, ext: str):
        from engine.capabilities.csp import csp_export
        c, g = self.window.controller("csp"), self.session.graph
        minimize, budget_metric = c.minimize_combo.currentText(), c.budget_combo.currentText()
        return _path_writer(g, c.result.path, path, ext, csp_export(
            g, c.result, minimize, budget_metric, f"label-setting ({c.result.backend})"))

    def _tree_writer(self, path, ext: str):
        from engine.export import csv, geojson
        g, tree = self.session.graph, self.session.tree.tree
        module = geojson if ext == ".geojson" else csv
        return lambda: module.write_tree(path, g, tree, unit_of(g.metric_units, tree.metric))

    def _service_area_writer(self, path, ext: str):
        from engine.export import geojson
        a, g = self._service_area(), self.session.graph
        return lambda: geojson.write(path, geojson.isochrone_collection(
            g, a.isochrones, a.tree.tree.metric, a.unit, a.tree.tree.source))


def _path_writer(graph, path_, out, ext: str, described):
    return lambda: write_path(graph, path_, {"geojson" if ext == ".geojson" else "gpx": out},
                              *described)
