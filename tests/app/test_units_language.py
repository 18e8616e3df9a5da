"""One unit language (issue #36, item 4): every text the window shows, and every line the
command line prints, says a cost in the unit of its metric or decoder (h:mm:ss, km and
m), with the raw value only where it adds information.

The window is opened on an OSM extract (Monaco), a DIMACS graph (the generated network
written as .gr/.co files, lengths in decimetres, a few arcs shorter than a metre; its
units are inferred from the data), the generated network itself and Rome99 (DIMACS with
no coordinates: its unit cannot be known, and "units" is then the honest word). Each
mode is driven (a route by clicks, a tree with its service area, a contraction and an
inspected node, a CRP customization with car-fastest, a cost-budgeted path) and every
visible text is walked: labels, buttons, the Metric box, dock titles, chart axis labels,
titles and legends (pyqtgraph), the status bar. ``check_language`` is the rule.
"""
from __future__ import annotations

import dataclasses
import html
import platform
import re

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractButton, QComboBox, QDockWidget, QGraphicsView, QGroupBox,
                               QLabel, QListWidget, QWidget)

from app.cli import main
from engine.core.backend import cpu_model
from tests.app.helpers import ch, click_node, load_graph, routes, trees
from tests.app.test_units_shown import far_pair, route_summary_text, tree_legend
from tests.conftest import DATA, ROME, need

MONACO = DATA / "osm" / "monaco.osm.pbf"
TIMEOUT_MS = 120_000
SHORT_ARCS = 6                  # arcs of the DIMACS graph made 3 dm long
_TAG = re.compile(r"<[^>]+>")


# ------------------------------------------------------------------ the rule
def check_language(texts: list[str], unit_known: bool = True) -> None:
    """No "units" where the unit is known; no value repeated in its own brackets ("745
    m (745 m)"); no brackets inside brackets; no "0 m" but for a real zero (an empty
    path, turn costs not paid); no CPU named by its architecture alone."""
    machine = platform.machine()
    for text in texts:
        if unit_known:
            assert not re.search(r"\bunits\b", text), text
        depth = 0
        for c in text:
            depth += (c == "(") - (c == ")")
            assert depth <= 1, f"brackets inside brackets: {text}"
        for m in re.finditer(r"\(([^()]+)\)", text):
            inner = m.group(1).strip()
            assert not text[:m.start()].rstrip().endswith(inner), f"said twice: {text}"
        if not re.search(r"(?<![\d,])0 arcs", text):         # an empty path is 0 m long
            assert not re.search(r"(?<![\d.,])0 m\b", re.sub(r"paid 0 m\b", "", text)), text
        if cpu_model() != machine:
            assert f"CPU: {machine}" not in text, text


def plain(text: str) -> str:
    text = re.sub(r"<br\s*/?>|</tr>|</p>", "\n", text or "")
    return " ".join(html.unescape(_TAG.sub(" ", text)).replace("\xa0", " ").split())


def _shown(window, w: QWidget) -> bool:
    """Is ``w`` on screen, or in an open dock that is only tabbed behind another?"""
    dock = w if isinstance(w, QDockWidget) else None
    parent = w.parentWidget()
    while dock is None and parent is not None:
        dock = parent if isinstance(parent, QDockWidget) else None
        parent = parent.parentWidget()
    if dock is None:
        return w.isVisibleTo(window)
    return dock.toggleViewAction().isChecked() and (w is dock or w.isVisibleTo(dock))


def _chart_texts(view: QGraphicsView) -> list[str]:
    out = []
    for item in view.scene().items():
        if not item.isVisible():
            continue
        if isinstance(item, pg.AxisItem):
            out.append(f"{item.labelText} {item.labelUnits}")
        elif isinstance(item, pg.LegendItem):
            out += [label.text for _, label in item.items]
        elif isinstance(item, pg.TextItem):
            out.append(item.textItem.toPlainText())
        elif isinstance(item, pg.LabelItem):
            out.append(item.text)
    return out


def visible_texts(window) -> list[str]:
    """Every text the window shows now (HTML made plain)."""
    out = [window.statusBar().currentMessage()]
    for w in window.findChildren(QWidget):
        if not _shown(window, w):
            continue
        if isinstance(w, QLabel):
            out.append(w.text())
        elif isinstance(w, QAbstractButton):
            out.append(w.text())
        elif isinstance(w, QComboBox):
            out.append(w.currentText())
        elif isinstance(w, QGroupBox):
            out.append(w.title())
        elif isinstance(w, QDockWidget):
            out.append(w.windowTitle())
        elif isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count())]
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            out += _chart_texts(w)
    return [t for t in map(plain, out) if t]


def walk(window, unit_known: bool = True) -> list[str]:
    texts = visible_texts(window)
    check_language(texts, unit_known)
    return texts


# ------------------------------------------------------------------ the modes
def routed(qtbot, window, graph) -> tuple[int, int]:
    s, t = far_pair(graph)
    summary = plain(route_summary_text(qtbot, window, s, t))
    assert not summary.startswith("0 m"), summary
    assert re.search(r"minimizing distance|distance [\d.,]+ k?m ", summary), summary    # not in min
    return s, t


def tree_and_service_area(qtbot, window, source: int, metric: str) -> None:
    tree_legend(qtbot, window, source, metric)
    area = window.controller("isochrone")
    with qtbot.waitSignal(area.shown, timeout=TIMEOUT_MS, check_params_cb=lambda a: a is not None):
        area.check.setChecked(True)
    walk(window)
    area.check.setChecked(False)
    window.set_mode("route")


def contracted(qtbot, window):
    c = ch(window)
    with qtbot.waitSignal(c.hierarchy_shown, timeout=TIMEOUT_MS, check_params_cb=lambda h: h is not None):
        qtbot.mouseClick(c.panel.contract_button, Qt.LeftButton)
    return window.session.hierarchy


def crp_routes(qtbot, window, s: int, t: int) -> str:
    """Partition (car-fastest, or a DIMACS decoder), then the route on the decoder: the
    Metric box names it and is locked; the summary says its cost in its unit."""
    pytest.importorskip("pymetis")
    crp = window.controller("customize")
    window.clear()
    click_node(qtbot, window, s)
    with qtbot.waitSignal(routes(window).shown, timeout=TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.method_label == "CRP query"):
        with qtbot.waitSignal(crp.metric_shown, timeout=TIMEOUT_MS):
            qtbot.mouseClick(crp.panel.partition_button, Qt.LeftButton)
        click_node(qtbot, window, t)
    name = window.session.cell_metric.name
    box = routes(window).metric_combo
    assert box.currentText() == f"{name} (CRP decoder)" and not box.isEnabled()
    summary = plain(routes(window).summary.text())
    assert f"{name} " in summary, summary
    walk(window)
    crp.panel.routes_box.setChecked(False)             # back to the graph's metric
    assert box.isEnabled() and box.currentText() == window.session.metric
    return summary


def cost_budgeted(qtbot, window, s: int, t: int) -> None:
    csp = window.controller("csp")
    window.set_mode("csp")
    window.clear()
    click_node(qtbot, window, s)
    with qtbot.waitSignal(csp.shown, timeout=TIMEOUT_MS, check_params_cb=lambda r: r is not None):
        click_node(qtbot, window, t)
    texts = walk(window)
    assert any("within" in x and " km" in x for x in texts)
    window.set_mode("route")


def every_mode(qtbot, window, graph) -> list[str]:
    """Route, tree with service area, contraction, CRP, cost-budgeted path; the texts
    walked after each. Returns the CRP route's summary."""
    load_graph(qtbot, window, graph)
    assert window.backend_label.text().startswith(f"CPU: {cpu_model()}, ")
    s, t = routed(qtbot, window, graph)
    walk(window)
    tree_and_service_area(qtbot, window, s, "travel_time")
    contracted(qtbot, window)
    walk(window)
    summary = crp_routes(qtbot, window, s, t)
    cost_budgeted(qtbot, window, s, t)
    return summary


# ------------------------------------------------------------------ the graphs
@pytest.fixture(scope="module")
def network():
    from engine.generate.network import generate_road_network
    return generate_road_network(num_nodes=3000, seed=4)


def write_dimacs_set(folder, graph) -> list[str]:
    """``graph`` as DIMACS USA-style files: gen-d.x.gr (decimetres, SHORT_ARCS arcs of
    3 dm), gen-t.x.gr (deciseconds), gen-d.x.co (micro-degrees)."""
    d = graph.metrics["distance"].astype(np.int64) * 10
    d[np.linspace(0, graph.num_arcs - 1, SHORT_ARCS).astype(int)] = 3
    files = []
    for letter, w in (("d", d), ("t", graph.metrics["travel_time"])):
        lines = [f"p sp {graph.num_nodes} {graph.num_arcs}"]
        lines += [f"a {a + 1} {b + 1} {c}" for a, b, c in zip(graph.tail, graph.head, w)]
        (folder / f"gen-{letter}.x.gr").write_text("\n".join(lines) + "\n")
        files.append(str(folder / f"gen-{letter}.x.gr"))
    lines = [f"p aux sp co {graph.num_nodes}"]
    lines += [f"v {i + 1} {round(x * 1e6)} {round(y * 1e6)}"
              for i, (x, y) in enumerate(zip(graph.lon, graph.lat))]
    (folder / "gen-d.x.co").write_text("\n".join(lines) + "\n")
    return files + [str(folder / "gen-d.x.co")]


@pytest.fixture(scope="module")
def dimacs_files(network, tmp_path_factory) -> list[str]:
    return write_dimacs_set(tmp_path_factory.mktemp("dimacs"), network)


def test_the_generated_network(qtbot, window, network):
    summary = every_mode(qtbot, window, network)
    assert "car-fastest " in summary and (" min" in summary or " s " in summary)


def test_an_osm_extract(qtbot, window):
    from engine.io import load
    summary = every_mode(qtbot, window, load([need(MONACO)]))
    assert re.search(r"car-fastest \d+:\d\d min", summary), summary


def test_a_dimacs_graph_with_sub_metre_arcs(qtbot, window, dimacs_files):
    """Units inferred (decimetres, deciseconds); a node-based hierarchy's inspected arcs
    of 3 dm read "0.3 m"."""
    from engine.io import load
    g = load(dimacs_files)
    assert g.metric_units == {"distance": "dm", "travel_time": "ds"}
    every_mode(qtbot, window, g)
    h = window.session.hierarchy                        # node-based: DIMACS has no turns
    assert h.metric == "distance" and not h.turn_aware
    short = int(np.flatnonzero(h.arc_weight == 3)[0])
    node = next(int(v) for v in (h.arc_tail[short], h.arc_head[short])
                if short in np.concatenate(h.node_arcs(int(v))))
    window.set_mode("inspect")
    ch(window).inspect(node)
    ch(window).unpack(short)
    texts = walk(window)
    assert any(x.endswith(" · 0.3 m") for x in texts), texts       # its row in the arc list


def test_rome_says_units_where_its_unit_is_unknown(qtbot, window):
    from engine.io import load
    g = load([need(ROME)])
    assert g.metric_units == {} and not g.has_coordinates
    load_graph(qtbot, window, g)
    with qtbot.waitSignal(routes(window).shown, timeout=TIMEOUT_MS, check_params_cb=lambda r: r is not None):
        routes(window).set_endpoints(0, 2000)
        routes(window).request()
    summary = plain(routes(window).summary.text())
    assert re.search(r"weight [\d,]+ units", summary), summary       # its one metric
    walk(window, unit_known=False)
    window.set_mode("tree")
    with qtbot.waitSignal(trees(window).tree_shown, timeout=TIMEOUT_MS,
                          check_params_cb=lambda a: a is not None):
        trees(window).request()
    assert "its unit is not known" in trees(window).info.text()
    walk(window, unit_known=False)


# ------------------------------------------------------------------ the command line
def cli_texts(capsys, files: list[str], s: int, t: int, decoder: str) -> list[str]:
    common = ["--backend", "cpu"]
    runs = [["info"], ["route", "--from", s, "--to", t], ["route", "--from", s, "--to", t,
                                                        "--metric", "travel_time"],
            ["route", "--from", s, "--to", t, "--decoder", decoder],
            ["tree", "--from", s, "--path-to", t], ["compare", "--from", s],
            ["csp", "--from", s, "--to", t, "--budget", "30min"],
            ["isochrone", "--from", s, "--cutoffs", "1,2km"]]
    out = []
    for args in runs:
        if args[0] == "route" and "--decoder" in args:
            pytest.importorskip("pymetis")
        assert main([args[0], *files, *map(str, args[1:]), *(common if args[0] != "info" else [])]) == 0
        out += capsys.readouterr().out.splitlines()
    return out


def test_the_command_line_speaks_the_same_language(capsys, network, dimacs_files):
    from engine.io import load
    g = load(dimacs_files)
    s, t = (int(g.node_id[v]) for v in far_pair(network))
    lines = cli_texts(capsys, dimacs_files, s, t, "dimacs-time")
    check_language(lines)
    assert any(x.startswith("  metric distance: 0.3 m .. ") for x in lines), lines
    assert not any("CPU: " in x and f"CPU: {cpu_model()}, " not in x for x in lines)
    osm = load([need(MONACO)])
    s, t = (int(osm.node_id[v]) for v in far_pair(osm))
    check_language(cli_texts(capsys, [str(MONACO)], s, t, "car-fastest"))
