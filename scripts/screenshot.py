"""Open the RouteLab window (offscreen works), route between two nodes, save a PNG.

    QT_QPA_PLATFORM=offscreen PYTHONPATH=. python scripts/screenshot.py out.png [FILE ...]
        [--route SRC_ID DST_ID] [--zoom FACTOR] [--size 1280x820]
        [--tree [--method NAME]] [--compare]

With no FILE it opens the generated default network. Without --route it routes
between the nodes nearest to 15 % and 85 % of the map's diagonal.
--tree shows the shortest-path tree from the start instead (tree mode), with the path
to the destination read from it; --compare runs every SSSP method and the reference
from the start and shows the chart dock.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402


def wait_for(signal, timeout_s: float):
    """Run the event loop until ``signal`` fires; returns its arguments."""
    loop, got = QEventLoop(), []
    signal.connect(lambda *args: (got.append(args), loop.quit()))
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

    from engine.reference import scipy_matrix
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
    ap.add_argument("--size", default="1280x820")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--tree", action="store_true", help="tree mode: the start's shortest-path tree")
    ap.add_argument("--method", default="auto", help="SSSP method for --tree")
    ap.add_argument("--compare", action="store_true", help="compare the SSSP methods from the start")
    args = ap.parse_args(argv)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    w = MainWindow(backend=args.backend)
    width, height = map(int, args.size.split("x"))
    w.resize(width, height)
    w.show()
    t0 = time.perf_counter()
    if args.files:
        w.open_files(args.files)
    else:
        w.open_default()
    loaded = []
    w.graph_shown.connect(loaded.append)
    w.error_shown.connect(lambda msg: print("error:", msg, file=sys.stderr))
    wait_for(w.graph_shown, 300) if not loaded else None
    print(f"loaded {w.graph.source}: {w.graph.num_nodes:,} nodes in {time.perf_counter() - t0:.1f} s")
    g = w.graph
    if args.route:
        s, t = (int(v) for v in g.index_of(args.route))
    else:
        s, t = far_apart_nodes(g)
    if args.tree:
        w.method_combo.setCurrentIndex(w.method_combo.findData(args.method))
        w.set_tree_mode(True)
        w.set_source(s)
        wait_for(w.tree_shown, 120)
        a = w.tree
        print(f"tree: {a.method} on {a.backend}: {a.compute_ms:.2f} ms "
              f"({a.total_ms:.2f} ms total); {w.tree_bins.count} bins; "
              f"segments per bin {w.map_view.tree_curve_sizes()}")
        w.set_target(t)
    else:
        w.set_source(s)
        w.set_target(t)
        wait_for(w.route_shown, 120)
    print("route:", w.route_message)
    if args.compare:
        w.compare(s)
        c = wait_for(w.comparison_shown, 300)[0]
        for r in c.timings:
            print(f"  {r.name:14s} {r.ms:10.2f} ms (best of {r.runs}) mismatches {r.mismatches}")
        print("compare:", c.verdict)
    if args.zoom != 1.0 and w.route_result is not None and w.route_result.xy is not None:
        xy = w.route_result.xy
        cx, cy = xy[len(xy) // 2]
        r = w.map_view.view.viewRect()
        hw, hh = r.width() / 2 / args.zoom, r.height() / 2 / args.zoom
        w.map_view.view.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)
    settle(400)
    t1 = time.perf_counter()
    image = w.grab()
    level = w.map_view.level
    print(f"grab {1000 * (time.perf_counter() - t1):.0f} ms" +
          (f", level cell {level.cell:.0f} m, {level.num_segments:,} segments" if level else ""))
    image.save(args.out)
    print("saved", args.out)
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
