"""Time the first draw and pans of the window on a graph (offscreen): the figures in the closing notes.
    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/draw_timing.py [FILE]
"""
import sys, time
sys.path[:0] = [str(__import__("pathlib").Path(__file__).parent), str(__import__("pathlib").Path(__file__).parents[1])]
from screenshot import wait_for
from PySide6.QtWidgets import QApplication
from app.main_window import MainWindow
app = QApplication([])
w = MainWindow(backend="cpu"); w.resize(1400, 900); w.show()
t0 = time.perf_counter()
w.open_files(sys.argv[1:] or [str(__import__("pathlib").Path(__file__).parents[2] / "shared/data/dimacs/USA-road-d.NY.gr.gz")])
wait_for(w.graph_shown, 300)
t1 = time.perf_counter()
w.repaint(); app.processEvents(); img = w.grab()
t2 = time.perf_counter()
print(f"load+shown {t1-t0:.2f} s, first paint {1000*(t2-t1):.0f} ms, level {w.map_view.level.num_segments}")
v = w.map_view.view
x0, x1, y0, y1 = w.map_view.view_rect()
# zoom to a 1/4 window then pan 10 steps
v.setRange(xRange=(x0, x0 + (x1-x0)/4), yRange=(y0, y0 + (y1-y0)/4), padding=0); app.processEvents(); w.map_view.update_detail(); w.grab()
ts = []
for i in range(10):
    t = time.perf_counter()
    dx = (x1-x0)/40
    v.translateBy(x=dx, y=0)
    w.map_view.update_detail(); app.processEvents(); w.grab()
    ts.append(time.perf_counter() - t)
ts.sort()
print(f"pan step median {1000*ts[5]:.0f} ms, max {1000*ts[-1]:.0f} ms")
t = time.perf_counter(); v.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0); w.map_view.update_detail(); app.processEvents(); w.grab()
print(f"zoom out to all {1000*(time.perf_counter()-t):.0f} ms")
