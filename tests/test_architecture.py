"""The house rules, checked on every run:

- the import-linter contracts of pyproject.toml hold (engine never imports Qt; the
  engine's layers; CuPy only in engine.core.backend; features independent of each other);
- no module is over 400 lines and no function over 60;
- ARCHITECTURE.md matches the tree: every path it names exists, and every engine
  module, every engine and app package and every app module is named in it.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
SOURCE_PACKAGES = ("app", "engine")


def _sources():
    for package in SOURCE_PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_import_contracts_hold():
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: \d+ kept, 0 broken", done.stdout), done.stdout


def test_modules_and_functions_are_small():
    too_long = []
    for path in _sources():
        text = path.read_text()
        name = path.relative_to(ROOT)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    assert not too_long, "over the limits:\n" + "\n".join(too_long)


# ------------------------------------------------------------ ARCHITECTURE.md
PATH_IN_TEXT = re.compile(r"`((?:app|engine|tests|scripts|resources|docs)/[\w./-]*)`")


def _architecture() -> str:
    return (ROOT / "ARCHITECTURE.md").read_text()


def _named_paths(text: str) -> set[str]:
    return {m.rstrip("/") for m in PATH_IN_TEXT.findall(text)}


def test_every_path_in_architecture_exists():
    missing = sorted(p for p in _named_paths(_architecture()) if not (ROOT / p).exists())
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def _must_be_named() -> list[str]:
    """Every engine module and package, every app module and app package."""
    out = []
    for path in _sources():
        rel = path.relative_to(ROOT)
        if path.name == "__init__.py":
            out.append(str(rel.parent))
        elif path.name != "__main__.py":
            out.append(str(rel))
    return out


def test_architecture_names_every_module():
    named = _named_paths(_architecture())
    unnamed = [p for p in _must_be_named() if p not in named]
    assert not unnamed, ("ARCHITECTURE.md does not name these (add a line each, in the "
                         f"same commit that adds them): {unnamed}")


@pytest.mark.parametrize("package", ["engine/capabilities", "app/features"])
def test_registries_are_discovered_not_listed(package):
    """A new capability or feature is a new file: the packages that find them hold no
    hand-written list of their members' names."""
    init = (ROOT / package / "__init__.py").read_text()
    members = [p.stem if p.suffix == ".py" else p.name
               for p in (ROOT / package).iterdir()
               if not p.name.startswith("_") and (p.suffix == ".py" or p.is_dir())]
    listed = [m for m in members if re.search(rf"\b(import|from)\b[^\n]*\b{m}\b", init)]
    assert not listed, f"{package}/__init__.py imports its members by name: {listed}"
