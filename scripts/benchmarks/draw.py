"""The window's map, offscreen (DESIGN principle 7: draw big, draw few). Needs PySide6.

* ``draw``: DIMACS NY, the first draw after loading, pans, and zooming back out.
* ``draw_scale``: generated networks of the sizes in ROUTELAB_DRAW_SIZES (comma-separated
  node counts, default 1000000), each in a fresh process (its own RSS): load into the
  window, first paint, pans and zoom steps at three zooms, RSS, and the bytes per node and
  per arc of the window's geometry (app.network_geometry.NetworkDrawing.memory).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import DATA, ROOT, wait_until

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


# ---------------------------------------------------------------- draw_scale
SCALE_SIZES = os.environ.get("ROUTELAB_DRAW_SIZES", "1000000")
SCALE_PANS = 20          # per zoom, each 1/10 of the view wide: the crop is re-made every few
ZOOMS = (1, 4, 16)       # the full view, then zoomed in this many times


def _rss_gb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1e6
    return float("nan")


def _paint(map_view) -> float:
    """Seconds to fill the curves for the current view and paint the map once."""
    t0 = time.perf_counter()
    map_view.update_detail()
    map_view.plot.grab()
    return time.perf_counter() - t0


def _pans_and_zooms(map_view) -> dict:
    """Pans at each zoom of ZOOMS around the centre, and zoom steps (x2) in and back out."""
    x0, y0, x1, y1 = map_view.view_rect()
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    out = {}
    for z in ZOOMS:
        hw, hh = (x1 - x0) / 2 / z, (y1 - y0) / 2 / z
        map_view.view.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)
        _paint(map_view)
        pans = []
        for k in range(SCALE_PANS):         # whole pixels, as a mouse drag moves the view
            step = round(map_view.view.width() / 10) * map_view.metres_per_pixel()
            step *= 1 if k < SCALE_PANS // 2 else -1
            map_view.view.translateBy(x=step, y=step / 2)
            pans.append(_paint(map_view))
        out[z] = (statistics.median(pans), max(pans), map_view.level.num_segments,
                  sum(0 if x is None else len(x) // 2 for x, _ in (c.getData() for c in map_view._curves)),
                  len(map_view.drawn_groups()))
    map_view.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
    _paint(map_view)
    zooms = []
    for factor in (0.5,) * 5 + (2.0,) * 5:      # the wheel's steps, in to 1/32 and back
        map_view.view.scaleBy(s=(factor, factor), center=(cx, cy))
        zooms.append(_paint(map_view))
    out["zoom"] = (statistics.median(zooms), max(zooms))
    return out


def measure_scale(num_nodes: int) -> dict:
    """One size, in this process: the window opens a generated network (no background
    hierarchy), then first paint, pans, zooms and memory."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from engine.generate.network import generate_road_network
    t0 = time.perf_counter()
    graph = generate_road_network(num_nodes, seed=1)
    generated = time.perf_counter() - t0
    app = QApplication.instance() or QApplication([])
    w = MainWindow(backend="cpu")
    w.session.background_hierarchy = False
    w.resize(*SIZE)
    w.show()
    shown = []
    w.graph_shown.connect(shown.append)
    t0 = time.perf_counter()
    w.adopt_graph(graph)
    wait_until(app, lambda: bool(shown), 1800, "show the graph", poll_s=0.005)
    loaded = time.perf_counter() - t0
    mv = w.map_view
    t0 = time.perf_counter()
    mv.set_network(mv.drawing)      # what the window does when the drawing arrives
    mv.plot.grab()
    first = time.perf_counter() - t0
    moves = _pans_and_zooms(mv)
    memory = mv.drawing.memory()
    result = {"nodes": graph.num_nodes, "arcs": graph.num_arcs, "generated": generated,
              "loaded": loaded, "first": first, "moves": {str(k): v for k, v in moves.items()},
              "rss": _rss_gb(), "peak": _rss_gb("VmHWM"), "memory": memory,
              "segments": mv.drawing.exact.num_segments, "map_px": (mv.view.width(), mv.view.height())}
    w.close()
    return result


def bench_draw_scale() -> tuple[list[str], list[list[str]]]:
    """The window at scale: every size of ROUTELAB_DRAW_SIZES in a fresh process."""
    rows = []
    for n in (int(x) for x in SCALE_SIZES.split(",") if x.strip()):
        done = subprocess.run([sys.executable, "-m", "benchmarks.draw", str(n)], capture_output=True,
                              text=True, cwd=ROOT / "scripts", env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        if done.returncode != 0:
            rows.append([f"{n:,}", f"failed: {done.stderr.strip().splitlines()[-1:]}"] + [""] * 9)
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        m = r["moves"]
        pans = " / ".join(f"{_ms(m[str(z)][0])} ({_ms(m[str(z)][1])}, {m[str(z)][3]:,} seg)" for z in ZOOMS)
        geometry = sum(r["memory"].values())
        rows.append([f"{r['nodes']:,} nodes, {r['arcs']:,} arcs", f"{r['generated']:.1f} s",
                     f"{r['loaded']:.1f} s", _ms(r["first"]), pans,
                     f"{_ms(m['zoom'][0])} ({_ms(m['zoom'][1])})",
                     f"{r['rss']:.2f} / {r['peak']:.2f} GB",
                     f"{geometry / 1e6:.0f} MB: {geometry / r['nodes']:.0f} B/node, {geometry / r['arcs']:.0f} B/arc",
                     ", ".join(f"{k} {v / r['nodes']:.0f}" for k, v in r["memory"].items())])
    return (["generated network", "generate", "load into the window", "first paint",
             f"pan median (slowest, drawn) at zoom {' / '.join(f'x{z}' for z in ZOOMS)}",
             "zoom step median (slowest)", "RSS of the window: now / peak", "window geometry",
             "geometry B/node by part"], rows)


SECTIONS = {"draw": ("Map drawing (window, offscreen)", bench_draw),
            "draw_scale": ("The window at scale (generated networks, offscreen)", bench_draw_scale)}


if __name__ == "__main__":      # one size of draw_scale, in its own process
    print(json.dumps(measure_scale(int(sys.argv[1]))))
