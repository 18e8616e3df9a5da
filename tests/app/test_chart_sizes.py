"""Charts that fit (issue #36, item 5): at 1280x800, with every feature run so its charts
have data (contraction, PHAST, the SSSP comparison, CRP customization, a cost-budgeted
path with its Pareto chart, a service area), every dock with a chart is shown in turn
and each of its plots measured: a data area of at least MIN_PLOT_PX, no legend over
it, every level in view, every Pareto marker whole, SI tick labels (never "e+"), and
no series that cannot apply to the backend (the CPU here) or that is zero all along.

With ROUTELAB_CHART_PNGS=folder the window is grabbed there, one PNG per dock.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from app.charts import si_ticks
from tests.app.helpers import click_node, load_graph, shown_window, trees

MIN_PLOT_PX = (160, 150)          # width, height of a plot's data area
MAX_LEGEND_COVER = 0.1            # share of a plot's data area a legend may hide
MARKER_PX = 6                     # a Pareto marker's centre at least this far inside
TIMEOUT_MS = 60_000


def plots_of(widget) -> list[pg.PlotItem]:
    """Every PlotItem drawn in ``widget`` (found, not listed: a new chart is measured too)."""
    return [item for view in views_of(widget) for item in view.scene().items() if isinstance(item, pg.PlotItem)]


def views_of(widget) -> list[pg.GraphicsView]:
    return ([widget] if isinstance(widget, pg.GraphicsView) else []) + widget.findChildren(pg.GraphicsView)


def tick_strings(axis) -> list[str]:
    """The labels the axis draws now (set ticks, or the ones it generates)."""
    if axis._tickLevels is not None:
        return [text for level in axis._tickLevels for _, text in level]
    lo, hi = axis.range
    size = axis.geometry().width() if axis.orientation in ("top", "bottom") else axis.geometry().height()
    return [text for spacing, values in axis.tickValues(lo, hi, size)
            for text in axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)]


def check_plots(dock: QDockWidget) -> list[tuple[float, float]]:
    """Every plot of the dock legible; their data areas' (width, height) in pixels."""
    sizes = []
    legends = [item for view in views_of(dock.widget()) for item in view.scene().items()
               if isinstance(item, pg.LegendItem) and item.isVisible()]
    for plot in plots_of(dock.widget()):
        rect = plot.vb.sceneBoundingRect()
        sizes.append((rect.width(), rect.height()))
        assert rect.width() >= MIN_PLOT_PX[0] and rect.height() >= MIN_PLOT_PX[1], (dock.objectName(), rect)
        for legend in legends:
            hidden = rect.intersected(legend.sceneBoundingRect())
            assert hidden.width() * hidden.height() <= MAX_LEGEND_COVER * rect.width() * rect.height()
        ticks = [t for name in ("left", "bottom") for t in tick_strings(plot.getAxis(name))]
        assert ticks and not [t for t in ticks if re.search(r"\de[+-]?\d", t)], (dock.objectName(), ticks)
    return sizes


def in_view(plot, xs, ys=None, half: float = 0.0) -> bool:
    """Every x (and y) of a series inside the plot's view range (bars ``half`` wide)."""
    (x0, x1), (y0, y1) = plot.vb.viewRange()
    ok = np.all(np.asarray(xs) - half >= x0) and np.all(np.asarray(xs) + half <= x1)
    return bool(ok and (ys is None or (np.all(np.asarray(ys) >= y0) and np.all(np.asarray(ys) <= y1))))


def settle(qtbot, window) -> None:
    """Until the engine has been idle for a while (one answer may ask for the next)."""
    for _ in range(50):
        qtbot.waitUntil(lambda: not window.engine.busy, timeout=TIMEOUT_MS)
        qtbot.wait(300)
        if not window.engine.busy:
            return


def show(qtbot, window, dock: QDockWidget) -> list[tuple[float, float]]:
    """``dock`` shown and on top once the engine is idle (a late answer raises its own);
    its plots checked."""
    settle(qtbot, window)
    window.show_dock(dock)
    qtbot.wait(80)
    assert window.size().width() == 1280 and window.size().height() == 800
    folder = os.environ.get("ROUTELAB_CHART_PNGS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        window.grab().save(str(Path(folder) / f"{dock.objectName()}.png"))
    return check_plots(dock)


@pytest.fixture(scope="module")
def network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=4)


def trade_off_pair(graph) -> tuple[int, int]:
    """Endpoints whose halfway budget has a Pareto set of several points."""
    from engine.core.backend import cpu_backend
    from engine.core.paths import Unreachable
    from engine.workspace import Workspace
    from app.features.csp.budget import BudgetScale
    query = Workspace(graph, cpu_backend()).csp_query("distance", "travel_time")
    rng = np.random.default_rng(0)
    for s, t in rng.integers(0, graph.num_nodes, (300, 2)).tolist():
        try:
            r = query.solve(s, t, 2**62)
        except Unreachable:
            continue
        scale = BudgetScale(r.least_cost, r.shortest_cost)
        if scale.steps >= 40 and len(query.solve(s, t, scale.budget(scale.steps // 2), pareto=True).pareto) >= 4:
            return s, t
    pytest.skip("no pair with a cost/length trade-off")


def test_si_tick_labels():
    assert si_ticks([0, 1e6, 2e6], 1, 1e6) == ["0", "1 M", "2 M"]
    assert si_ticks([0, 250_000, 500_000], 1, 250_000) == ["0", "250 k", "500 k"]
    assert si_ticks([0, 0.5e6, 1e6], 1, 0.5e6) == ["0", "0.5 M", "1.0 M"]
    assert si_ticks([0, 2000, 4000], 1, 2000) == ["0", "2000", "4000"]         # below 10,000: plain
    assert si_ticks([0.005, 0.01], 1, 0.005) == ["0.005", "0.010"]


def test_every_chart_of_every_dock_fits_1280x800(qtbot, network):
    with shown_window(qtbot, 1280, 800) as w:
        load_graph(qtbot, w, network)
        measured = {}
        ch = w.controller("contract")
        ch.panel.k_spin.setValue(100)
        with qtbot.waitSignal(ch.hierarchy_shown, timeout=TIMEOUT_MS, check_params_cb=lambda h: h is not None):
            qtbot.mouseClick(ch.panel.contract_button, Qt.LeftButton)
        h = w.session.hierarchy
        measured["contract"] = show(qtbot, w, ch.contract_dock)
        check_contraction(ch.contract_chart, h)

        source = int(np.argmin(np.hypot(*(network.xy - network.xy.mean(axis=0)).T)))
        area = w.controller("isochrone")
        area.check.setChecked(True)                     # a service area on the map as well
        qtbot.mouseClick(trees(w).tree_button, Qt.LeftButton)
        with qtbot.waitSignal(area.shown, timeout=TIMEOUT_MS, check_params_cb=lambda a: a is not None):
            click_node(qtbot, w, source)
        measured["phast"] = show(qtbot, w, ch.phast_dock)
        check_phast(ch.phast_chart, h, w.session.tree)

        t = trees(w)
        with qtbot.waitSignal(t.comparison_shown, timeout=TIMEOUT_MS):
            t.compare(source)
        measured["compare"] = show(qtbot, w, t.compare_dock)

        crp = w.controller("customize")
        with qtbot.waitSignal(crp.metric_shown, timeout=TIMEOUT_MS):
            qtbot.mouseClick(crp.panel.partition_button, Qt.LeftButton)
        measured["crp_chart"] = show(qtbot, w, crp.chart_dock)
        check_customization(crp.chart, w.session.cell_metric)

        c = w.controller("csp")
        w.set_mode("csp")
        s, tt = trade_off_pair(network)
        with qtbot.waitSignal(c.shown, timeout=TIMEOUT_MS, check_params_cb=lambda r: r is not None):
            w.put_endpoints(s, tt)
            w.endpoints_changed("both")
        measured["csp"] = show(qtbot, w, c.dock)
        check_pareto(c.charts)

        with_charts = {d.objectName() for d in w.findChildren(QDockWidget) if plots_of(d.widget())}
        assert with_charts == set(measured)             # every dock with a chart was measured
        print({name: [(round(x), round(y)) for x, y in sizes] for name, sizes in measured.items()})


def check_contraction(chart, h) -> None:
    """Every level's bar and point, in view of both plots; the legend names measured steps only."""
    assert chart.bar_count() == chart.point_count() == h.num_levels == len(chart.records)
    levels = [r["level"] for r in chart.records]
    assert in_view(chart.times, levels, half=0.4) and in_view(chart.sizes, levels)
    x, y = chart.contracted.getData()
    assert in_view(chart.sizes, x, y)
    for step in chart.header.legend():
        if step in chart.bars:
            assert np.asarray(chart.bars[step].opts["height"]).any(), step


def check_phast(chart, h, answer) -> None:
    """Every level's bar in view, and the bars add up to the query's time."""
    assert chart.bar_count() == 2 * h.num_levels + 1
    xs = np.concatenate([np.asarray(b.opts["x"], float) for b in chart.bars.values()])
    assert in_view(chart.plot_item, xs, half=0.4)
    lm = answer.level_ms
    parts = sum(lm["up"]) + sum(lm["down"]) + lm.get("core", 0.0) + chart.other_ms
    assert parts == pytest.approx(answer.compute_ms, rel=1e-6)
    assert f"{answer.compute_ms:.2f} ms = up" in chart.header.text().replace("&nbsp;", " ")


def check_customization(chart, metric) -> None:
    """On the CPU: the legend names the phases measured (no GPU phase); every row in view;
    the rows add up to the total."""
    assert set(chart.legend()) <= {"decode", "search", "other"}
    assert chart.bar_count() == len(metric.timings)
    rows = len(chart.row_labels())
    assert in_view(chart.levels_plot, [0], np.arange(rows))
    widths = sum(np.asarray(b.opts["width"], float).sum() for b in chart.bars.values())
    if "other" in chart.row_labels():
        assert widths == pytest.approx(metric.decode_ms + metric.total_ms, rel=1e-6)


def check_pareto(charts) -> None:
    """Every Pareto point and reference drawn whole inside the plot; on the CPU no Kₜ line
    and no line that is zero all along."""
    vb = charts.pareto_plot.vb
    inner = vb.sceneBoundingRect().adjusted(MARKER_PX, MARKER_PX, -MARKER_PX, -MARKER_PX)
    items = [charts.scatter, charts.chosen_item, *charts.refs.values()]
    points = [p for item in items for p in zip(*item.getData()) if len(item.getData()[0])]
    assert len(points) >= 6
    for x, y in points:
        assert inner.contains(vb.mapViewToScene(pg.Point(x, y))), (x, y)
    shown = charts.history_series_shown()
    assert shown and "k_t" not in shown
    for name in shown:
        y = charts.history_curves[name].getData()[1]
        assert np.nanmax(y) > 0, name
    assert "Kₜ" not in charts.header.text()
