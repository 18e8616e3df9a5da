"""The import-linter contract of pyproject.toml: engine never imports Qt, pyqtgraph or app."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_engine_imports_no_qt():
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout
