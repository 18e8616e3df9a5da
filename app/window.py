"""Start the desktop window: ``run_window(paths, backend)`` is what ``app.main`` calls."""
from __future__ import annotations

import os
import sys

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow


def run_window(paths: list[str], backend: str = "auto") -> int:
    """Open the window on ``paths`` (or the generated default network) and run Qt.

    The backend choice is made on the engine thread when it starts; loading runs there
    too, so the window shows at once with a progress bar in the status bar.
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("RouteLab")
    pg.setConfigOptions(antialias=False)
    window = MainWindow(backend=backend)
    window.show()
    if paths:
        window.open_files(paths)
    else:
        window.open_default()
    status = app.exec()
    if not window.engine.shutdown(timeout_ms=100):      # at once when closing stopped it
        # A step that never checks its cancel flag outlived the close: destroying its
        # QThread would abort the process, so leave at once with the window's status.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status
