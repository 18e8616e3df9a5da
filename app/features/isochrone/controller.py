"""The service area (isochrones) in tree mode: a "Service area" option and its cut-offs
in the tree's box; while it is on, every tree shown is followed by an ``isochrone``
job (engine.capabilities.isochrone, on the engine thread, the newest cancelling the
older), whose bands app/features/isochrone/overlay.py fills on the map in colours of their
own (AREA_COLORS: teal to green, a scale apart from the tree's plasma, so no colour means
two distances), with their own legend under the option.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLineEdit, QVBoxLayout, QWidget

from engine.core.units import unit_of

from app.feature import Controller, Exportable, register_controller
from app.features.isochrone.overlay import AREA_COLORS, IsochroneOverlay
from app.widgets import FoldingLabel, grey, red, rgb

FORMATS = (("Service area, GeoJSON polygons (*.geojson)", ".geojson"),)
# Cut-offs offered first, by the kind of the tree metric's unit.
DEFAULT_CUTOFFS = {"time": "5, 10, 15, 20 min", "length": "1, 2, 3, 4 km", "": ""}


@register_controller
class ServiceAreaController(Controller):
    order = 70
    kinds = ("isochrone",)
    shown = Signal(object)          # IsochroneAnswer drawn on the map, or None when cleared

    def __init__(self, window) -> None:
        super().__init__(window)
        self.overlay = IsochroneOverlay(self.map_view)
        self.answer = None
        self._partial = []              # bands of the running job, as they come
        window.extend_box("tree", self._build_row())    # an option of the tree's box

    def _build_row(self) -> QWidget:
        widget = QWidget()
        column = QVBoxLayout(widget)
        column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.check = QCheckBox("Service area", toolTip="Fill the areas reachable within the "
                               "cut-offs from the tree's start (isochrones)")
        self.cutoffs = QLineEdit(placeholderText="e.g. 5, 10, 15 min or 1, 2 km",
                                 toolTip="Increasing cut-offs: 5, 10, 15, 20 min · 1, 2, 3 km · "
                                 "300, 600 (seconds or metres)")
        for w in (self.check, self.cutoffs):
            w.setFocusPolicy(Qt.ClickFocus)                 # keys stay with the map
        row.addWidget(self.check)
        row.addWidget(self.cutoffs, 1)
        column.addLayout(row)
        self.legend = FoldingLabel()
        column.addWidget(self.legend)
        self.check.toggled.connect(self._on_toggled)
        self.cutoffs.editingFinished.connect(self.request)
        return widget

    # ------------------------------------------------------------------ hooks
    def trigger(self, capability: str) -> None:
        """Its menu action: the option on or off."""
        self.check.toggle()

    def graph_changed(self) -> None:
        self.set_areas(None)

    def tree_changed(self, answer) -> None:
        if answer is None:
            self.set_areas(None)
            return
        kind = unit_of(self.session.graph.metric_units, answer.tree.metric).kind
        if self.cutoffs.text().strip() in DEFAULT_CUTOFFS.values():     # not typed in: follow the metric
            self.cutoffs.setText(DEFAULT_CUTOFFS[kind])
        if self.check.isChecked():
            self.overlay.clear()             # the areas of the last tree are not this one's
        self.request()

    def _on_toggled(self, on: bool) -> None:
        if on:
            self.request()
        else:
            self.set_areas(None)

    # ------------------------------------------------------------------ jobs
    def request(self) -> int | None:
        """An isochrone job for the tree on the map, when the option is on."""
        tree = self.session.tree
        if not self.check.isChecked() or tree is None:
            return None
        text = self.cutoffs.text().strip()
        if not text:
            self.legend.setText(red("Give cut-offs, e.g. 5, 10, 15 min or 1, 2 km."))
            return None
        self.legend.setText(grey("computing the service area…"))
        return self.engine.submit("isochrone", {
            "source": tree.tree.source, "metric": tree.tree.metric, "cutoffs": text,
            "method": tree.method}, label="Service area")

    def _current(self, job) -> bool:
        tree = self.session.tree
        return (self.check.isChecked() and tree is not None and
                (job.params["source"], job.params["metric"]) == (tree.tree.source, tree.tree.metric))

    def on_record(self, job, record) -> None:
        """A band is known: show it (and the nearer ones) while the farther ones grow."""
        if not self._current(job):
            return
        if record["band"] == 0:
            self._partial = []
        self._partial.append(record["geometry"])
        colors = self.band_colors(record["cutoffs"])[:len(self._partial)]
        self.overlay.show(self.session.graph, self._partial, colors)

    def on_result(self, job, answer) -> None:
        if self._current(job):
            self.set_areas(answer)

    def on_error(self, job, message: str) -> None:
        if self._current(job):
            self.set_areas(None)
            self.legend.setText(red(f"no service area: {message.removeprefix('--cutoffs: ')}"))

    def on_cancelled(self, job, message: str) -> None:
        pass                             # a newer tree or cut-off asked for another one

    def exportables(self) -> list[Exportable]:
        if self.session.mode != "tree" or self.session.tree is None or self.answer is None:
            return []
        return [Exportable("service_area", FORMATS, self._writer, offered_with="tree", rank=20)]

    def _writer(self, path, ext: str):
        from engine.export import geojson
        a, g = self.answer, self.session.graph
        return lambda: geojson.write(path, geojson.isochrone_collection(
            g, a.isochrones, a.tree.tree.metric, a.unit, a.tree.tree.source))

    # ---------------------------------------------------------------- drawing
    @staticmethod
    def band_colors(cutoffs) -> list[tuple]:
        """The service areas' own scale stretched over the cut-offs (near: deep teal, far:
        olive green), never the tree's colours: the tree's yellow is its farthest bin."""
        k = len(cutoffs)
        positions = np.linspace(0.0, 1.0, k) if k > 1 else np.array([0.0])
        scale = pg.ColorMap(np.linspace(0.0, 1.0, len(AREA_COLORS)), AREA_COLORS)
        return [tuple(int(c) for c in color[:3]) for color in scale.map(positions, mode="byte")]

    def set_areas(self, answer) -> None:
        """Fill the bands of ``answer`` (an IsochroneAnswer) on the map, or none."""
        self.answer = answer
        if answer is None:
            self.engine.drop("isochrone")
            self.overlay.clear()
            self.legend.setText("")
            self.legend.setToolTip("")
        else:
            iso, unit = answer.isochrones, answer.unit
            colors = self.band_colors(iso.cutoffs)
            self.overlay.show(self.session.graph, iso.bands, colors)
            self.legend.setText(band_legend(colors, [unit.format(c) for c in iso.cutoffs]))
            km2 = " · ".join(f"{m2 / 1e6:,.{1 if m2 < 1e7 else 0}f}" for m2 in iso.area_m2)
            about = f"{km2} km² (buffer {iso.buffer_m:.0f} m), computed in {iso.seconds:.2f} s"
            self.legend.setToolTip(f"Areas reachable within the cut-offs: {about}")
            self.window.statusBar().showMessage(f"Service area: {about}", 10000)
        self.shown.emit(answer)


def band_legend(colors, labels: list[str]) -> str:
    """One line: a filled square per band and its cut-off, the unit written once
    ("■ 5:00 ■ 10:00 ■ 15:00 min")."""
    unit = labels[-1].rsplit(" ", 1)[-1]
    if all(label.endswith(" " + unit) for label in labels):
        labels = [label.removesuffix(" " + unit) for label in labels[:-1]] + [labels[-1]]
    return "≤ " + "&nbsp; ".join(f"<span style='color:{rgb(c)}; font-size:15px'>■</span>&nbsp;{label}"
                                 for c, label in zip(colors, labels))
