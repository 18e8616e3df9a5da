"""Open the RouteLab window (offscreen works), route between two nodes, save a PNG.

Run it from the repository root with the project's Python (no PYTHONPATH needed; Qt
runs offscreen unless QT_QPA_PLATFORM says otherwise):

    .venv/bin/python scripts/screenshot.py out.png [FILE ...]
        [--route SRC_ID DST_ID] [--zoom FACTOR] [--size 1280x800] [--no-route]
        [--tree [--method NAME]] [--compare]
        [--contract [--K K] [--C C] [--hierarchy FILE.rlh]] [--levels] [--inspect NODE_ID|auto]
        [--crp [--cells LEVEL] [--cell] [--avoid motorway] [--route-levels]]
        [--csp] [--service-area [--cutoffs TEXT]]

With no FILE it opens the generated default network. Without --route it routes
between the nodes nearest to 15 % and 85 % of the map's diagonal; --no-route shows
the first view as a person meets it (no route, no markers).
--tree shows the shortest-path tree from the start instead (tree mode), with the path
to the destination read from it; --compare runs every SSSP method and the reference
from the start and shows the chart dock.
--contract builds the contraction hierarchy first (the chart dock fills); then --tree
runs PHAST (method "phast" is the default) with its per-level chart, --levels colours
the roads by level, and --inspect draws a node's hierarchy arcs ("auto": a node with
6-14 arcs and an upward shortcut), unpacks its longest shortcut and zooms to them
(no route). --hierarchy FILE opens that hierarchy instead of contracting when it
exists, else contracts and saves it there (one slow contraction for several shots).
--crp partitions the graph and customizes the default decoder (the metric dock
opens), so the route is a turn-aware CRP route; --cells colours that level's cells,
--cell clicks the cell in the middle of the route (its entries, exits and shortcut
matrix), --avoid CLASS then toggles an avoid box (the old route stays as a ghost),
--route-levels draws the route as the query took it (shortcuts by level).
--csp routes a cost-budgeted path (mode B) at the slider's middle budget, with the
Pareto chart and the labeling course in the chart dock. --service-area shows the
start's service areas (tree mode) at --cutoffs (the panel's default when absent).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root: app, engine

from PySide6.QtCore import QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402


WIDTH = [0]        # --width: the saved picture's width (0: the window's own)


def wait_for(signal, timeout_s: float, accept=lambda *args: True):
    """Run the event loop until ``signal`` fires with arguments ``accept`` takes; returns them."""
    loop, got = QEventLoop(), []
    signal.connect(lambda *args: (got.append(args), loop.quit()) if accept(*args) else None)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    if not got:
        raise SystemExit(f"timed out after {timeout_s} s waiting for {signal}")
    return got[0]


def settle(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def far_apart_nodes(graph):
    """Two nodes of the largest strongly connected component, near 15 % and 85 % of
    the map's diagonal (or the component's first and last node without coordinates)."""
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    from engine.routing.reference import scipy_matrix
    _, label = connected_components(scipy_matrix(graph), directed=True, connection="strong")
    nodes = np.flatnonzero(label == np.bincount(label).argmax())
    if graph.xy is None:
        return int(nodes[0]), int(nodes[-1])
    xy = graph.xy[nodes]
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    _, (i, j) = cKDTree(xy).query([lo + 0.15 * (hi - lo), lo + 0.85 * (hi - lo)])
    return int(nodes[i]), int(nodes[j])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--route", nargs=2, type=int, metavar=("SRC_ID", "DST_ID"))
    ap.add_argument("--zoom", type=float, default=1.0, help="zoom in by this factor around the route")
    ap.add_argument("--size", default="1280x800", help="window size (the window's default)")
    ap.add_argument("--no-route", action="store_true", help="no route: the first view as it opens")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--tree", action="store_true", help="tree mode: the start's shortest-path tree")
    ap.add_argument("--method", default="auto", help="SSSP method for --tree")
    ap.add_argument("--compare", action="store_true", help="compare the SSSP methods from the start")
    ap.add_argument("--contract", action="store_true", help="build the contraction hierarchy first")
    ap.add_argument("--K", type=int, default=1025, help="core size for --contract")
    ap.add_argument("--C", type=float, default=0.3, help="selection fraction for --contract")
    ap.add_argument("--hierarchy", metavar="FILE", help="open this .rlh, or contract and save it")
    ap.add_argument("--levels", action="store_true", help="colour by contraction level (implies --contract)")
    ap.add_argument("--inspect", metavar="NODE_ID", help="inspect a node's hierarchy arcs (implies --contract)")
    ap.add_argument("--crp", action="store_true", help="partition and customize (CRP routes)")
    ap.add_argument("--cells", type=int, metavar="LEVEL", help="colour this level's cells (--crp)")
    ap.add_argument("--cell", action="store_true", help="click the route's middle cell (--crp)")
    ap.add_argument("--avoid", metavar="CLASS", help="toggle this avoid box after routing (--crp)")
    ap.add_argument("--route-levels", action="store_true", help="the route through the levels (--crp)")
    ap.add_argument("--width", type=int, default=0, help="scale the saved PNG to this width")
    ap.add_argument("--background", action="store_true",
                    help="build the turn-aware hierarchy in the background, as the window does")
    ap.add_argument("--csp", action="store_true", help="a cost-budgeted path with its Pareto chart")
    ap.add_argument("--service-area", action="store_true", help="the start's service areas")
    ap.add_argument("--cutoffs", help="service-area cut-offs as the panel takes them, e.g. '5, 10, 15 min'")
    args = ap.parse_args(argv)
    WIDTH[0] = args.width
    args.contract = args.contract or args.levels or args.inspect is not None or bool(args.hierarchy)
    args.crp = args.crp or args.cells is not None or args.cell or bool(args.avoid) or args.route_levels

    app = QApplication.instance() or QApplication(sys.argv[:1])
    w = MainWindow(backend=args.backend)
    width, height = map(int, args.size.split("x"))
    w.resize(width, height)
    w.show()
    # no turn-aware hierarchy built behind the shot (minutes on a big graph on the CPU):
    # when it lands it asks the route, tree or service area again, mid-grab
    w.session.background_hierarchy = args.background
    t0 = time.perf_counter()
    if args.files:
        w.open_files(args.files)
    else:
        w.open_default()
    loaded = []
    w.graph_shown.connect(loaded.append)
    w.error_shown.connect(lambda msg: print("error:", msg, file=sys.stderr))
    wait_for(w.graph_shown, 300) if not loaded else None
    print(f"loaded {w.session.graph.source}: {w.session.graph.num_nodes:,} nodes in {time.perf_counter() - t0:.1f} s")
    g = w.session.graph
    routes, trees, ch = w.controller("route"), w.controller("tree"), w.controller("contract")
    if args.contract:
        ch.panel.k_spin.setValue(args.K)
        ch.panel.c_spin.setValue(args.C)
        t1 = time.perf_counter()
        if args.hierarchy and os.path.exists(args.hierarchy):
            ch.open_hierarchy(args.hierarchy)
        else:
            ch.contract()
        h = wait_for(ch.hierarchy_shown, 1800, lambda h: h is not None)[0]
        print(f"hierarchy in {time.perf_counter() - t1:.1f} s: {h.summary()}")
        if args.hierarchy and not os.path.exists(args.hierarchy):
            ch.save_hierarchy(args.hierarchy)
            print("saved", wait_for(w.engine.result, 120, lambda job, r: job.kind == "save_hierarchy")[1])
    if args.levels:
        ch.levels_action.setChecked(True)
    if args.contract:
        settle(100)
        w.panel.ensureWidgetVisible(ch.panel, 0, 0)
    if args.inspect is not None:
        inspect(w, ch, args.inspect)
        return finish(w, args.out)
    crp = w.controller("customize")
    if args.crp:
        t1 = time.perf_counter()
        crp.partition()
        m = wait_for(crp.metric_shown, 600)[0]
        print(f"partitioned and customized {m.name} in {time.perf_counter() - t1:.1f} s "
              f"({m.decode_ms + m.total_ms:.1f} ms customization)")
        if args.cells is not None:
            crp.panel.level_combo.setCurrentIndex(args.cells + 1)
        crp.panel.route_levels_box.setChecked(args.route_levels)
    if args.no_route and not (args.tree or args.compare or args.cell or args.avoid or args.inspect):
        return finish(w, args.out)
    if args.route:
        s, t = (int(v) for v in g.index_of(args.route))
    else:
        s, t = far_apart_nodes(g)
    if args.csp:
        return cost_budgeted(w, routes, s, t, args.out)
    if args.service_area:
        return service_area(w, routes, s, args.cutoffs, args.out)
    if args.tree:
        if args.method != "auto" or trees.method_combo.findData("phast") < 0:
            trees.method_combo.setCurrentIndex(trees.method_combo.findData(args.method))
        w.set_mode("tree")
        routes.set_source(s)
        wait_for(trees.tree_shown, 120, lambda t: t is not None)
        a = w.session.tree
        print(f"tree: {a.method} on {a.backend}: {a.compute_ms:.2f} ms "
              f"({a.total_ms:.2f} ms total); {w.session.tree_bins.count} bins; "
              f"segments per bin {w.map_view.tree_curve_sizes()}")
        routes.set_target(t)
    else:
        routes.set_source(s)
        routes.set_target(t)
        wait_for(routes.shown, 120, lambda r: r is not None)
    print("route:", w.session.route_message)
    if args.avoid:
        crp.panel.editor.avoid_boxes[args.avoid].click()
        wait_for(routes.shown, 120, lambda r: r is not None)
        print("after avoiding", args.avoid + ":", w.session.route_message)
    if args.cell:
        click_route_cell(w, crp, args.cells or 0)
    if args.compare:
        trees.compare(s)
        c = wait_for(trees.comparison_shown, 300)[0]
        for r in c.timings:
            print(f"  {r.name:14s} {r.ms:10.2f} ms (best of {r.runs}) mismatches {r.mismatches}")
        print("compare:", c.verdict)
    if args.zoom != 1.0 and w.session.route is not None and w.session.route.xy is not None:
        xy = w.session.route.xy
        cx, cy = xy[len(xy) // 2]
        r = w.map_view.view.viewRect()
        hw, hh = r.width() / 2 / args.zoom, r.height() / 2 / args.zoom
        w.map_view.view.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)
    return finish(w, args.out)


def cost_budgeted(w, routes, s: int, t: int, out: str) -> int:
    """Mode B: the cost-budgeted path from s to t at the slider's middle budget."""
    c = w.controller("csp")
    c.mode_action.trigger()
    settle(100)
    routes.set_source(s)
    routes.set_target(t)
    r = wait_for(c.shown, 600, lambda r: r is not None)[0]
    print(f"cost-budgeted: {c.summary.text()} (budget {r.budget:,}, length {r.length:,}, "
          f"cost {r.cost:,}, {len(c.charts.pareto_points())} Pareto points)")
    return finish(w, out)


def service_area(w, routes, s: int, cutoffs: str | None, out: str) -> int:
    """Tree mode with the service areas of the start."""
    area = w.controller("isochrone")
    if cutoffs:
        area.cutoffs.setText(cutoffs)
    area.check.setChecked(True)
    w.set_mode("tree")
    routes.set_source(s)
    a = wait_for(area.shown, 600, lambda a: a is not None)[0]
    print(f"service areas: {a.isochrones.cutoffs}; legend {area.legend.text()!r}")
    return finish(w, out)


def click_route_cell(w, crp, level: int) -> None:
    """Cells mode: the cell of the route's middle node, its entries, exits and matrix."""
    nodes = w.session.route.path.nodes
    node = int(nodes[len(nodes) // 2])
    w.set_mode("cells")
    crp.node_clicked(node, False)
    overlay = w.session.cell_metric.overlay
    ne, nx, nv = overlay.levels[level].counts(w.session.crp_cell)
    print(f"cell {w.session.crp_cell} of level {level}: {ne} entries, {nx} exits; "
          f"{crp.cells.matrix_lines()} matrix lines {crp.cells.note}")
    xy = w.session.drawing.node_xy[overlay.cell_of[level] == w.session.crp_cell]
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    w.map_view.view.setRange(xRange=(lo[0], hi[0]), yRange=(lo[1], hi[1]), padding=0.6)


def inspect(w, ch, node_id: str) -> None:
    """Inspect a node, unpack its longest shortcut, zoom to its arcs and the road path."""
    h, g = w.session.hierarchy, w.session.graph
    if node_id == "auto":      # the highest node with an upward shortcut and 6-14 arcs
        up_sc = h.up_harc[h.is_shortcut(h.up_harc)]
        nodes = np.unique(h.arc_tail[up_sc])
        arcs = np.bincount(h.arc_tail[h.up_harc], minlength=h.num_nodes)[nodes] + \
            np.bincount(h.arc_head[h.down_harc], minlength=h.num_nodes)[nodes]
        nodes = nodes[(arcs >= 6) & (arcs <= 14)]
        node = int(nodes[np.argmax(h.node_level[nodes])])
    else:
        node = int(g.index_of(int(node_id))[0])
    w.set_mode("inspect")
    ch.inspect(node)
    up, down = h.node_arcs(node)
    arcs = np.concatenate([up, down])
    shortcuts = arcs[h.is_shortcut(arcs)]
    xy = w.session.drawing.node_xy
    print(f"inspect node {g.node_id[node]}: level {h.node_level[node]}, {up.size} up, {down.size} down, "
          f"{shortcuts.size} shortcuts")
    pts = [xy[[node]], xy[h.arc_tail[arcs]], xy[h.arc_head[arcs]]]
    if shortcuts.size:
        length = np.hypot(*(xy[h.arc_tail[shortcuts]] - xy[h.arc_head[shortcuts]]).T)
        arc = int(shortcuts[np.argmax(length)])
        ch.unpack(arc)
        x, y = ch.overlay.unpacked.getData()
        pts.append(np.c_[x, y])
        print(f"unpacked {arc}: {h.unpack(arc).size} arcs, midpoint node {g.node_id[h.midpoint(arc)]}")
    pts = np.concatenate(pts)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    w.map_view.view.setRange(xRange=(lo[0], hi[0]), yRange=(lo[1], hi[1]), padding=0.15)


def finish(w, out: str) -> int:
    settle(400)
    t1 = time.perf_counter()
    image = w.grab()
    level = w.map_view.level
    print(f"grab {1000 * (time.perf_counter() - t1):.0f} ms" +
          (f", level cell {level.cell:.0f} m, {level.num_segments:,} segments" if level else ""))
    if WIDTH[0]:           # a small PNG (README pictures): scaled, 256 colours
        image = image.toImage()
        if image.width() > WIDTH[0]:
            image = image.scaledToWidth(WIDTH[0], Qt.TransformationMode.SmoothTransformation)
        image = image.convertToFormat(QImage.Format.Format_Indexed8,
                                      Qt.ImageConversionFlag.AvoidDither)
    image.save(out, None, 0 if WIDTH[0] else -1)      # 0: the smallest PNG
    print("saved", out)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
