"""Cost-budgeted paths in the window (issue #14): csp mode, the side panel's
"Cost-budgeted path" box (the two metrics, the budget slider, the answer), the
constrained path and its two references on the map, and the charts' dock.

Clicks set the endpoints as in route mode (the route controller takes them and
draws no route in csp mode); each new pair of endpoints first asks the engine with a
huge budget, which the bounds answer at once with the least cost and the shortest
path's cost: the slider spans them, starts halfway, and every move asks again with
the Pareto set (newest wins: the engine keeps one csp job in flight and only the
newest waiting). One slider step lies below the least cost, where the engine says
"no path within budget" and the least cost.

Below the two metrics, app/features/csp/hierarchy_controller.py adds the bi-criteria
hierarchy's row: with it checked, every query labels on the hierarchy (the same
answers, a few dozen arcs deep), and the summary says so.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QSlider, QVBoxLayout)

from engine.core.polylines import route_polyline

from app import map_style as style
from app.feature import PATH_FORMATS, Controller, Exportable, path_writer, register_controller
from app.features.csp.budget import BudgetScale
from app.features.csp.charts import LEAST_COST_COLOR, PATH_COLOR, SHORTEST_COLOR, CspCharts, metric_text
from app.widgets import grey, legend_table, red, selectable_label

HINT = ("Cost-budgeted path mode: click a start, then a destination · drag the budget slider · "
        "click a Pareto point: its path · Shift+click: move start · Esc: clear · B: back to routes")
RANGE_BUDGET = 2**62     # the bounds answer it at once: least cost and shortest path's cost
DEBOUNCE_MS = 16         # about one frame
WORKING = (grey("finding the least cost and the shortest path…"), grey("searching…"))
PATH_WIDTH = 6.0
REF_WIDTH = 2.5


@register_controller
class CspController(Controller):
    order = 60
    kinds = ("csp",)
    modes = {"csp": HINT}
    owns_endpoints = True        # the endpoints ask for cost-budgeted paths, not routes
    shown = Signal(object)       # CspResult drawn, or None
    failed = Signal(str)         # the engine's message (no path within the budget, ...)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.mode_action = window.capability_action("csp")
        self.box = self._build_box()
        window.add_panel(self.box)
        self.charts = CspCharts()
        self.charts.picked.connect(self._on_picked)
        self.dock = window.add_dock("csp", "Cost-budgeted paths", self.charts)
        self._build_map_items()
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.requery)
        self.scale: BudgetScale | None = None
        self.result = None               # the CspResult shown
        self._key = None                 # (source, target, minimize, budget metric) of the scale
        self._range_job = None           # job id of the range (huge budget) query
        self._refs: dict[str, tuple[int, int]] = {}
        self.hierarchy = None            # the CspHierarchyController, which sets itself here
        self._shown_on_hierarchy = False
        self._set_enabled(False)

    # ------------------------------------------------------------- building
    def _build_box(self) -> QGroupBox:
        box = QGroupBox("Cost-budgeted path")
        column = QVBoxLayout(box)
        self.mode_button = QPushButton("Cost-budgeted path mode (B)", checkable=True,
                                       toolTip="Click a start and a destination: the shortest "
                                       "path whose cost stays within a budget")
        self.mode_button.clicked.connect(self.mode_action.trigger)
        self.mode_action.toggled.connect(self.mode_button.setChecked)
        column.addWidget(self.mode_button)
        form = QFormLayout()
        column.addLayout(form)
        self.minimize_combo, self.budget_combo = QComboBox(), QComboBox()
        for combo in (self.minimize_combo, self.budget_combo):
            combo.setFocusPolicy(Qt.ClickFocus)
            combo.currentTextChanged.connect(self._on_metrics_changed)
        form.addRow("Minimize", self.minimize_combo)
        form.addRow("Budget on", self.budget_combo)
        self.options = QVBoxLayout()       # for other controllers' rows (the hierarchy's)
        column.addLayout(self.options)
        self.note = QLabel(wordWrap=True, visible=False)
        column.addWidget(self.note)
        self.budget_label = QLabel(wordWrap=True)
        column.addWidget(self.budget_label)
        self.slider = QSlider(Qt.Horizontal, focusPolicy=Qt.ClickFocus)
        self.slider.valueChanged.connect(self._on_slider)
        column.addWidget(self.slider)
        ends = QHBoxLayout()
        self.low_label, self.high_label = QLabel(), QLabel(alignment=Qt.AlignRight)
        for label in (self.low_label, self.high_label):
            label.setStyleSheet("color: #555; font-size: 11px;")
            ends.addWidget(label)
        column.addLayout(ends)
        self.legend = QLabel(legend_table([(PATH_COLOR, "within the budget"),
                                           (SHORTEST_COLOR, "shortest"),
                                           (LEAST_COST_COLOR, "least cost")], columns=2))
        column.addWidget(self.legend)
        self.summary = selectable_label()
        self.summary.setMinimumHeight(40)
        self.error_label = selectable_label()
        column.addWidget(self.error_label)       # above the summary: seen without scrolling
        column.addWidget(self.summary)
        return box

    def _build_map_items(self) -> None:
        def curve(color, width, z, dashed=False):
            pen = pg.mkPen(color, width=width)
            if dashed:
                pen.setDashPattern([4, 2])
            item = pg.PlotCurveItem(pen=pen, antialias=True, skipFiniteCheck=True)
            item.setZValue(z)
            self.map_view.plot.addItem(item, ignoreBounds=True)
            return item
        self.casing = curve(style.ROUTE_CASING, PATH_WIDTH + 3, 10.7)
        self.path_curve = curve(PATH_COLOR, PATH_WIDTH, 10.8)
        self.ref_curves = {"least_cost": curve(LEAST_COST_COLOR, REF_WIDTH, 10.9, dashed=True),
                           "shortest": curve(SHORTEST_COLOR, REF_WIDTH, 10.95, dashed=True)}

    # ------------------------------------------------------------ session hooks
    def graph_changed(self) -> None:
        g = self.session.graph
        names = list(g.metric_names)
        for combo, wanted in ((self.minimize_combo, "distance"), (self.budget_combo, "travel_time")):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            others = [n for n in names if n != self.minimize_combo.currentText()] or names
            combo.setCurrentText(wanted if wanted in names else
                                 (names[0] if combo is self.minimize_combo else others[0]))
            combo.blockSignals(False)
            combo.setEnabled(len(names) >= 2)
        self.note.setText(grey(f"This graph has one metric ({names[0]}): a budget needs a second one."))
        self.note.setVisible(len(names) < 2)
        self.reset()

    def mode_changed(self, old: str, new: str) -> None:
        if new == "csp":
            self.window.show_dock(self.dock)
            self.window.panel.reveal(self.box)
            self.start()
        elif old == "csp":
            self.reset()

    def endpoints_changed(self, which: str, live: bool = False) -> None:
        if self.session.mode == "csp" and which != "metric":
            self.start(live)

    def cleared(self) -> None:
        self.reset()

    def node_clicked(self, node: int, shift: bool) -> bool:
        return False             # the route controller sets the endpoints; they come back here

    def slot_failed(self) -> None:
        if not self.engine.running("csp") and self.summary.text() in WORKING:
            self.summary.setText("")         # a "working…" line that no answer will replace

    # ------------------------------------------------------------------ queries
    def metrics(self) -> tuple[str, str]:
        return self.minimize_combo.currentText(), self.budget_combo.currentText()

    def _on_metrics_changed(self, _text: str) -> None:
        if self.session.mode == "csp":
            self.start()

    def start(self, live: bool = False) -> None:
        """New endpoints or metrics: ask for the budget's range first."""
        self.reset(keep_drawing=live)
        s = self.session
        if s.graph is None or s.source is None or s.target is None or s.mode != "csp":
            return
        if len(s.graph.metric_names) < 2:
            self._error(red("cost-budgeted paths need two metrics"))
            return
        minimize, budget_metric = self.metrics()
        self._key = (s.source, s.target, minimize, budget_metric)
        units = s.graph.metric_units
        self.charts.set_metrics(minimize, units.get(minimize, ""), budget_metric,
                                units.get(budget_metric, ""))
        if not live:
            self.summary.setText(WORKING[0])
        self._range_job = self.engine.submit("csp", self._params(RANGE_BUDGET, pareto=False),
                                             label="Cost-budgeted path: budget range")

    def _params(self, budget: int, pareto: bool) -> dict:
        source, target, minimize, budget_metric = self._key
        return {"source": source, "target": target, "budget": int(budget), "minimize": minimize,
                "budget_metric": budget_metric, "pareto": pareto,
                "hierarchy": self.hierarchy is not None and self.hierarchy.in_use(self.metrics())}

    def budget(self) -> int | None:
        """The budget the slider is at (None before the range is known)."""
        return None if self.scale is None else self.scale.budget(self.slider.value())

    def _on_slider(self, value: int) -> None:
        if self.scale is not None:
            self._show_budget()
            self._debounce.start()

    def requery(self) -> None:
        """Ask again for the slider's budget (when the range is known)."""
        if self.scale is not None and self._key is not None:
            self.engine.submit("csp", self._params(self.budget(), pareto=True))

    def reset(self, keep_drawing: bool = False) -> None:
        """No query, nothing drawn (``keep_drawing``: a marker drag, where the last
        answer shows until the next): the slider waits for endpoints."""
        self.engine.drop("csp")
        self._debounce.stop()
        self.scale = self._key = self._range_job = None
        self._error("")
        self._set_enabled(False)
        if keep_drawing:
            return
        self._refs = {}
        self._draw_refs(None)
        self._show(None)
        self.summary.setText("")
        self.charts.clear("Cost-budgeted path mode (B): click a start and a destination"
                          if self.session.mode == "csp" else "")

    def _error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))     # no empty line when all is well

    def _set_enabled(self, on: bool) -> None:
        self.slider.setEnabled(on)
        if not on:
            self.budget_label.setText(grey("Budget: set a start and a destination"))
            self.low_label.setText("")
            self.high_label.setText("")

    # -------------------------------------------------------------- job answers
    def _current(self, job) -> bool:
        """An answer for the endpoints and metrics now set."""
        p = job.params
        return self._key is not None and \
            (p["source"], p["target"], p["minimize"], p["budget_metric"]) == self._key

    def on_result(self, job, r) -> None:
        if not self._current(job):
            return
        if job.job_id == self._range_job:
            self._adopt_range(r)
        elif job.params["budget"] != RANGE_BUDGET:
            self._error("")
            self._shown_on_hierarchy = bool(job.params.get("hierarchy"))
            self._show(r)

    def on_error(self, job, message: str) -> None:
        if not self._current(job):
            return
        if job.job_id == self._range_job:           # unreachable, or the same node twice
            self.summary.setText("")
            self._error(red(message))
            self.failed.emit(message)
            return
        unit = self.session.graph.metric_units.get(self._key[3], "")
        budget = metric_text(job.params["budget"], unit)
        below = self.scale is not None and job.params["budget"] < self.scale.least
        least = metric_text(self.scale.least, unit) if below else ""
        self._error(red(message))                     # the engine's words are in the budget's unit
        self.summary.setText(grey("No constrained path: raise the budget."))
        self._show(None)
        self.charts.show_failure(job.params["budget"], self._refs, f"no path within budget {budget}"
                                 + (f": the least cost is {least}" if least else ""))
        self.failed.emit(message)

    def _adopt_range(self, r) -> None:
        """The range answer: the slider spans [least cost, shortest path's cost] and
        starts halfway; the two references are drawn."""
        g = self.session.graph
        length, cost = (np.asarray(g.metrics[m], np.int64) for m in self._key[2:])
        refs = {name: (int(length[a].sum()), int(cost[a].sum())) for name, a in r.references.items()}
        self._refs = refs
        self._draw_refs(r.references)
        self.scale = BudgetScale(r.least_cost, r.shortest_cost)
        self.slider.blockSignals(True)
        self.slider.setRange(-1, self.scale.steps)
        self.slider.setValue(self.scale.steps // 2)
        self.slider.blockSignals(False)
        self._set_enabled(True)
        unit = g.metric_units.get(self._key[3], "")
        self.low_label.setText(f"least cost<br><b>{metric_text(r.least_cost, unit)}</b>")
        self.high_label.setText(f"shortest path<br><b>{metric_text(r.shortest_cost, unit)}</b>")
        self._show_budget()
        self.summary.setText(WORKING[1])
        self.requery()

    def _show_budget(self) -> None:
        unit = self.session.graph.metric_units.get(self._key[3], "")
        b = self.budget()
        below = "<br>" + red("below the least cost: no path") if b < self.scale.least else ""
        self.budget_label.setText(f"Budget ({self._key[3]}): <b>{metric_text(b, unit)}</b>{below}")

    # ------------------------------------------------------------------ drawing
    def _draw_path(self, arcs) -> None:
        d = self.session.drawing
        xy = np.zeros((0, 2)) if arcs is None or d is None else \
            route_polyline(d.points, self.session.graph, arcs)
        for c in (self.casing, self.path_curve):
            c.setData(x=xy[:, 0], y=xy[:, 1])

    def _draw_refs(self, references: dict | None) -> None:
        d = self.session.drawing
        for name, c in self.ref_curves.items():
            arcs = None if references is None else references.get(name)
            xy = np.zeros((0, 2)) if arcs is None or d is None else \
                route_polyline(d.points, self.session.graph, arcs)
            c.setData(x=xy[:, 0], y=xy[:, 1])

    def exportables(self) -> list[Exportable]:
        if self.session.mode != "csp" or self.result is None:
            return []
        return [Exportable("csp", PATH_FORMATS, self._writer, rank=10)]

    def _writer(self, path, ext: str):
        from engine.capabilities.csp import csp_export
        g, r = self.session.graph, self.result
        minimize, budget_metric = self.metrics()
        return path_writer(g, r.path, path, ext, csp_export(
            g, r, minimize, budget_metric, f"label-setting ({r.backend})"))

    def _show(self, r) -> None:
        """Draw CspResult ``r`` (None: no constrained path) and say what it is."""
        self.result = r
        self._draw_path(None if r is None else r.path.arcs)
        if r is not None:
            self.summary.setText(self._summary(r))
            self.charts.show_result(r, self._refs, self._chart_title(r))
        self.shown.emit(r)

    def _summary(self, r, picked: int | None = None) -> str:
        units = self.session.graph.metric_units
        minimize, budget_metric = self._key[2:]
        lt = lambda v: metric_text(v, units.get(minimize, ""))         # noqa: E731
        ct = lambda v: metric_text(v, units.get(budget_metric, ""))    # noqa: E731
        s = r.stats
        lines = [f"<b>{lt(r.length)}</b> at <b>{ct(r.cost)}</b> within {ct(r.budget)} "
                 f"({r.path.num_arcs:,} arcs)"]
        if picked is not None:
            p = r.pareto[picked]
            lines.append(f"map: Pareto point {picked + 1} of {len(r.pareto)}: "
                         f"<b>{lt(p.length)}</b> at <b>{ct(p.cost)}</b>")
        pareto = f"Pareto set {len(r.pareto)} points · " if r.pareto is not None else ""
        lines.append(grey(f"{pareto}answered by the {r.answered_by} · shortest {lt(r.shortest_length)}"))
        lines.append(grey(f"labels {s['created']:,} created, {s['settled']:,} settled; pruned "
                          f"{s['pruned_cost_bound']:,} by cost bound, {s['pruned_length_bound']:,} "
                          f"by length bound, {s['pruned_dominated']:,} dominated"))
        where = " on the bi-criteria hierarchy" if self._shown_on_hierarchy else ""
        lines.append(grey(f"{r.ms['total']:.1f} ms (bounds {r.ms['bounds']:.1f} + labeling "
                          f"{r.ms['labeling']:.1f}) on the {r.backend.upper()}{where}"))
        return "<br>".join(lines)

    def _chart_title(self, r) -> str:
        unit = self.session.graph.metric_units.get(self._key[3], "")
        n = len(r.pareto) if r.pareto is not None else 1
        return f"{n} Pareto point{'s' * (n != 1)} within budget {metric_text(r.budget, unit)}"

    def _on_picked(self, i: int) -> None:
        """A Pareto point clicked: its path on the map; the answer's summary stays."""
        r = self.result
        if r is None or not r.pareto:
            return
        self._draw_path(r.pareto[i].arcs)
        self.summary.setText(self._summary(r, picked=i))

    # --------------------------------------------------------------- test hooks
    def path_points(self) -> int:
        x, _ = self.path_curve.getData()
        return 0 if x is None else len(x)

    def reference_points(self) -> dict[str, int]:
        return {name: 0 if c.getData()[0] is None else len(c.getData()[0])
                for name, c in self.ref_curves.items()}
