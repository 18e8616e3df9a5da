"""File ▸ Export…: what the map shows, in a field-standard format (engine.export). Each
feature says what it shows that can be exported (``Controller.exportables``: the
route or the cost-budgeted path as GeoJSON or GPX, the tree as GeoJSON points or CSV,
the service area as GeoJSON polygons); this one asks them all, never their widgets.
The file name's extension chooses the format;
``export_to(path)`` does the work without the dialog (tests, scripts); the menu's
export writes on the engine thread (a whole tree of NY takes a second)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog

from app.feature import Controller, Exportable, register_controller
from app.errors import describe

NOTHING = "Nothing to export: show a route, a tree or a cost-budgeted path first."


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
    def available(self) -> dict[str, Exportable]:
        """What the features show now that can be exported, the most specific first
        (each feature says what it shows: ``Controller.exportables``)."""
        found = [e for c in self.window.controllers for e in c.exportables()]
        return {e.name: e for e in sorted(found, key=lambda e: -e.rank)}

    def shown(self) -> list[str]:
        return list(self.available())

    # --------------------------------------------------------------- dialog
    def choose_file(self) -> None:
        shown = self.available()
        if not shown:
            self.window.show_error(NOTHING)
            return
        first = next(iter(shown.values()))
        what = first.offered_with or first.name     # a tree's areas are offered with the tree
        filters = [(f, w) for w in (what, *shown) for f, _ in shown[w].formats]
        filters = list(dict.fromkeys(filters))
        name = f"{self.session.file_stem()}-{what.replace('_', '-')}{shown[what].formats[0][1]}"
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
        return self.engine.submit("export", {"write": write, "path": path}, label="Exporting")

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
        shown = self.available()
        if not shown:
            raise ValueError(NOTHING)
        what = what or next(w for w, e in shown.items() if not e.offered_with)
        if what not in shown:
            raise ValueError(f"there is no {what.replace('_', ' ')} on the map to export")
        ext = Path(path).suffix.lower()
        exts = [e for _, e in shown[what].formats]
        if ext == ".json":
            ext = ".geojson"
        if ext not in exts:
            raise ValueError(f"a {what.replace('_', ' ')} is exported as {' or '.join(exts)}, "
                             f"not {Path(path).suffix or 'a file without extension'}")
        write = shown[what].writer(path, ext)     # reads the session here, now

        def run() -> str:
            said = write()                          # a writer may name a file written beside it
            return f"the {what.replace('_', ' ')} to {path}" + (f"; {said}" if isinstance(said, str) else "")
        return run
