"""The window's map on DIMACS NY, offscreen: the first draw after loading, pans, and
zooming back out (DESIGN principle 7: draw big, draw few). Needs PySide6."""
from __future__ import annotations

import os
import statistics
import time

from benchmarks.common import DATA, wait_until

PANS = 10
SIZE = (1400, 900)


def _frame(app, window, map_view) -> float:
    """Seconds to fill the curves for the current view and paint the window once."""
    t0 = time.perf_counter()
    map_view.update_detail()
    app.processEvents()
    window.grab()
    return time.perf_counter() - t0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def bench_draw() -> tuple[list[str], list[list[str]]]:
    """First draw and pan times of the map on NY (offscreen, CPU backend)."""
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return ["graph", "note"], [["NY", "shared data absent"]]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    app = QApplication.instance() or QApplication([])
    w = MainWindow(backend="cpu")
    w.resize(*SIZE)
    w.show()
    shown = []
    w.graph_shown.connect(shown.append)
    t0 = time.perf_counter()
    w.open_files([ny])
    wait_until(app, lambda: bool(shown), 300, "show the graph", poll_s=0.005)
    loaded = time.perf_counter() - t0
    mv = w.map_view
    first = _frame(app, w, mv)
    segments = mv.level.num_segments
    x0, y0, x1, y1 = mv.view_rect()
    mv.view.setRange(xRange=(x0, x0 + (x1 - x0) / 4), yRange=(y0, y0 + (y1 - y0) / 4), padding=0)
    _frame(app, w, mv)
    pans = []
    for _ in range(PANS):
        mv.view.translateBy(x=(x1 - x0) / 40, y=0)
        pans.append(_frame(app, w, mv))
    mv.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
    zoom_out = _frame(app, w, mv)
    w.close()
    return (["graph", "window", "load + shown", "first draw", "drawn segments",
             f"pan at 1/4 view (median of {PANS})", "slowest pan", "zoom out to all"],
            [["DIMACS NY (264 k nodes, 734 k arcs)", f"{SIZE[0]}x{SIZE[1]} offscreen",
              f"{loaded:.2f} s", _ms(first), f"{segments:,}", _ms(statistics.median(pans)),
              _ms(max(pans)), _ms(zoom_out)]])


SECTIONS = {"draw": ("Map drawing (window, offscreen)", bench_draw)}
