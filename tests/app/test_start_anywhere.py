"""The window starts anywhere or says why not (issue #36): without a display, or with
the xcb plugin's system libraries missing, `scripts/run` explains in one paragraph and
exits 1 instead of Qt's abort (134); the set-up knows the package of every system
library the plugin links."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import window

ROOT = Path(__file__).resolve().parents[2]


def no_display_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 display rules")
def test_scripts_run_without_a_display_explains_and_exits_1():
    r = subprocess.run(["bash", str(ROOT / "scripts" / "run")], env=no_display_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "no display" in r.stderr and "routelab --help" in r.stderr
    assert "Aborted" not in r.stderr and "qt.qpa" not in r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 display rules")
def test_a_display_nobody_answers_is_said(tmp_path):
    env = {**no_display_env(), "DISPLAY": ":987"}
    assert "no X server answers" in window.problem(env)
    r = subprocess.run([sys.executable, "-m", "app.main"], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and ":987" in r.stderr


@pytest.mark.parametrize("platform", ["offscreen", "minimal", "offscreen:fontengine=freetype"])
def test_headless_platforms_need_no_display(platform):
    assert window.problem({"QT_QPA_PLATFORM": platform}) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 display rules")
def test_missing_libraries_are_named_with_their_packages(monkeypatch):
    monkeypatch.setattr(window, "x_server_answers", lambda display: True)
    monkeypatch.setattr(window, "missing_libraries",
                        lambda: ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    text = window.problem({"DISPLAY": ":0"})
    assert "libxcb-icccm.so.4" in text and "apt-get install libxcb-icccm4 libxcb-keysyms1" in text
    monkeypatch.setattr(window, "missing_libraries", lambda: [])
    assert window.problem({"DISPLAY": ":0"}) is None


def test_every_system_library_of_the_xcb_plugin_has_its_package():
    """ldd on the plugin and QtGui: every library outside the wheel is a C/C++ runtime
    or in DEBIAN_PACKAGES, whose missing ones scripts/_venv.sh installs."""
    libraries = window.qt_libraries()
    if not libraries or not any(p.name == "libqxcb.so" for p in libraries):
        pytest.skip("PySide6 without the xcb plugin here")
    linked = {}
    for lib in libraries:
        linked.update(window.linked_libraries(lib))
    if not linked:
        pytest.skip("no ldd here")
    unknown = sorted(set(linked) - set(window.DEBIAN_PACKAGES) - set(window.BASE_LIBRARIES))
    assert unknown == []
    assert "app.window --missing" in (ROOT / "scripts" / "_venv.sh").read_text()
