"""The window's features, one folder each (``app/features/<capability>/``): its
controller, panel, map overlay, charts and text.

Features are discovered, not listed: ``discover()`` imports every package found on
this package's ``__path__`` (a folder appended to ``app.features.__path__`` is scanned
too) and every module in it, so each ``@register_controller`` class registers
itself. The window's order comes from each controller's ``order``, not from the
order of the files.
"""
from __future__ import annotations

import importlib
import pkgutil


def discover() -> None:
    """Import every feature package (and its modules) on ``__path__``."""
    for package in pkgutil.iter_modules(__path__, __name__ + "."):
        if not package.ispkg or package.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(package.name)
        for member in pkgutil.iter_modules(module.__path__, package.name + "."):
            importlib.import_module(member.name)
