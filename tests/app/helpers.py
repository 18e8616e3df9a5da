"""Helpers for the window tests: small graphs, DIMACS and OSM files, loading, real clicks."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from engine.core.graph import ROAD_CLASS_INDEX, RoadGraph, haversine_m
from tests.engine.test_osm import write_osm

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LOAD_TIMEOUT_MS = 30_000
ROUTE_TIMEOUT_MS = 10_000
SIDE = 6                          # grid side: SIDE*SIDE grid nodes plus one island node
ISLAND = SIDE * SIDE              # index of a node nothing reaches (it only has an out-arc)
ID_OFFSET = 1000                  # file ids differ from indices, as in real files


def grid_graph(side: int = SIDE, *, classes: bool = True, coordinates: bool = True,
               geometry: bool = True, license_text: str = "", source: str = "test grid") -> RoadGraph:
    """A two-way grid around Heidelberg, 200 m blocks, one middle row primary, a bend
    point on every horizontal street, plus an island node with one outgoing arc."""
    n = side * side + 1
    r, c = np.divmod(np.arange(side * side), side)
    lon = np.append(8.68 + 0.0027 * c, 8.68 + 0.0027 * (side + 3))
    lat = np.append(49.40 + 0.0018 * r, 49.40 - 0.0018 * 3)
    right = np.flatnonzero(c < side - 1)
    up = np.flatnonzero(r < side - 1)
    u = np.concatenate([right, right + 1, up, up + side, [n - 1]])
    v = np.concatenate([right + 1, right, up + side, up, [0]])
    horizontal = np.concatenate([np.ones(2 * right.size, bool), np.zeros(2 * up.size + 1, bool)])
    dist = np.maximum(1, np.rint(haversine_m(lon[u], lat[u], lon[v], lat[v]))).astype(np.int64)
    rc = np.full(u.size, ROAD_CLASS_INDEX["residential"], np.int8)
    rc[horizontal & (r[np.minimum(u, side * side - 1)] == side // 2)] = ROAD_CLASS_INDEX["primary"]
    speed = np.where(rc == ROAD_CLASS_INDEX["primary"], 50.0, 20.0)
    kw = {}
    if coordinates:
        kw.update(lon=lon, lat=lat)
    if geometry and coordinates:
        k = horizontal.astype(np.int64)   # one bend point, pushed 20 m north
        first = np.zeros(u.size + 1, np.int64)
        np.cumsum(k, out=first[1:])
        a = np.flatnonzero(horizontal)
        mid = np.stack([(lon[u[a]] + lon[v[a]]) / 2, (lat[u[a]] + lat[v[a]]) / 2 + 0.00018], axis=1)
        kw.update(geometry_first=first, geometry_lonlat=mid)
    return RoadGraph.from_arcs(
        n, u, v, {"distance": dist, "travel_time": np.rint(dist / (speed / 3.6) * 10).astype(np.int64)},
        node_id=np.arange(n) + ID_OFFSET, arc_attrs={"road_class": rc} if classes else None,
        metric_units={"distance": "m", "travel_time": "ds"}, source=source,
        data_license=license_text, **kw)


def write_dimacs(folder: Path, graph: RoadGraph, name: str = "tiny") -> tuple[Path, Path]:
    """The graph as DIMACS .gr (distance) and .co (micro-degrees), 1-based ids."""
    gr, co = folder / f"{name}.gr", folder / f"{name}.co"
    w = graph.metrics["distance"]
    lines = [f"p sp {graph.num_nodes} {graph.num_arcs}"]
    lines += [f"a {t + 1} {h + 1} {c}" for t, h, c in zip(graph.tail, graph.head, w)]
    gr.write_text("c tiny test graph\n" + "\n".join(lines) + "\n")
    lines = [f"p aux sp co {graph.num_nodes}"]
    lines += [f"v {i + 1} {round(x * 1e6)} {round(y * 1e6)}" for i, (x, y) in enumerate(zip(graph.lon, graph.lat))]
    co.write_text("\n".join(lines) + "\n")
    return gr, co


def write_banned_left_osm(folder: Path) -> Path:
    """A small OSM extract (the audit's Bayreuth case, issue #34) where the short way
    from node 1 to 3 is a banned left turn at 2 (east along 1-2, then north); the legal
    way goes on east to 4, north to 5 and back west to 3."""
    nodes = {1: (8.680, 49.400), 2: (8.682, 49.400), 3: (8.682, 49.402), 4: (8.684, 49.400),
             5: (8.684, 49.402), 6: (8.686, 49.400)}
    road = {"highway": "residential"}
    ways = [(10, [1, 2], road), (11, [2, 3], road), (12, [2, 4], road), (13, [4, 5, 3], road),
            (14, [4, 6], road)]
    relations = [(1, [("w", 10, "from"), ("n", 2, "via"), ("w", 11, "to")],
                  {"type": "restriction", "restriction": "no_left_turn"})]
    return write_osm(folder / "banned-left.osm", nodes, ways, relations)


def load_graph(qtbot, window, graph: RoadGraph) -> None:
    with qtbot.waitSignal(window.graph_shown, timeout=LOAD_TIMEOUT_MS):
        window.adopt_graph(graph)
    window.map_view.update_detail()


def node_viewport_pos(window, node: int) -> QPoint:
    plot = window.map_view.plot
    return plot.mapFromScene(window.map_view.node_scene_pos(node))


def click_node(qtbot, window, node: int, button=Qt.LeftButton, modifier=Qt.NoModifier) -> None:
    """A real mouse click on the map's viewport where the node is drawn."""
    QTest.mouseClick(window.map_view.plot.viewport(), button, modifier, node_viewport_pos(window, node))
    qtbot.wait(20)   # keep two clicks from reading as a double click


def context_menu_action(qtbot, window, node: int, text: str):
    """Right-click the node; the action called ``text`` of the menu that pops up."""
    click_node(qtbot, window, node, button=Qt.RightButton)
    menu = window.node_menu
    qtbot.waitUntil(menu.isVisible, timeout=2000)
    action = next(a for a in menu.actions() if a.text() == text)
    menu.close()
    return action


def routes(window):
    return window.controller("route")


def trees(window):
    return window.controller("tree")


def show_tree(qtbot, window, node: int, timeout_ms: int = ROUTE_TIMEOUT_MS):
    """Tree mode on (the panel's button), click ``node``: the tree it draws."""
    if window.session.mode != "tree":
        qtbot.mouseClick(trees(window).tree_button, Qt.LeftButton)
    assert window.session.mode == "tree" and window.map_view.hover_enabled
    with qtbot.waitSignal(trees(window).tree_shown, timeout=timeout_ms,
                          check_params_cb=lambda t: t is not None and t.tree.source == node):
        click_node(qtbot, window, node)
    return window.session.tree


def ch(window):
    return window.controller("contract")


def answer_of(qtbot, client, kind: str, event: str = "result", timeout: int = ROUTE_TIMEOUT_MS):
    """Wait (``with``) for the engine's ``event`` answer to a job of ``kind``;
    ``blocker.args`` is (job, payload)."""
    return qtbot.waitSignal(getattr(client, event), timeout=timeout,
                            check_params_cb=lambda job, *rest: job.kind == kind)


def shift_click_route(qtbot, window, s: int, t: int):
    """Shift+click ``s`` (the source), click ``t``: the route shown between them."""
    click_node(qtbot, window, s, modifier=Qt.ShiftModifier)
    with qtbot.waitSignal(routes(window).shown, timeout=ROUTE_TIMEOUT_MS,
                          check_params_cb=lambda r: r is not None and r.target == t):
        click_node(qtbot, window, t)
    return window.session.route


@contextmanager
def shown_window(qtbot, width: int, height: int):
    """The main window (CPU backend) shown at ``width`` x ``height``; closed, and its
    engine thread stopped, afterwards."""
    from app.main_window import MainWindow
    w = MainWindow(backend="cpu")
    # a background contraction at every load would race the tests' own jobs; the test
    # of the background build turns it on
    w.session.background_hierarchy = False
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    try:
        yield w
    finally:
        w.close()
        w.engine.shutdown()
