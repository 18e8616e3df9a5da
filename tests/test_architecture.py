"""The import-linter contracts of pyproject.toml: engine never imports Qt, pyqtgraph or app;
the window's session model (app.session) imports no Qt or pyqtgraph."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_engine_and_session_import_no_qt():
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout
