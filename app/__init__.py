"""RouteLab's desktop window (PySide6 + pyqtgraph). The engine never imports this."""
