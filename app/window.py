"""Start the desktop window: ``run_window(paths, backend)`` is what ``app.main`` calls,
once ``problem()`` has found nothing that keeps the window from opening here.

Without a display, or with the xcb plugin's system libraries missing, Qt aborts the
process (status 134, "could not load the Qt platform plugin"), so the window checks
first and explains instead; Qt is imported only by ``run_window``.
``python -m app.window --missing`` prints the Debian packages whose libraries the
window lacks (scripts/_venv.sh installs them).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs")

# Shared libraries of the Qt xcb plugin and of QtGui outside the PySide6 wheel, and the
# Debian package of each (tests/app/test_start_anywhere.py checks this against ldd).
DEBIAN_PACKAGES = {
    "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0", "libOpenGL.so.0": "libopengl0",
    "libX11-xcb.so.1": "libx11-xcb1", "libX11.so.6": "libx11-6", "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6", "libbrotlicommon.so.1": "libbrotli1",
    "libbrotlidec.so.1": "libbrotli1", "libbsd.so.0": "libbsd0", "libcap.so.2": "libcap2",
    "libdbus-1.so.3": "libdbus-1-3", "libexpat.so.1": "libexpat1",
    "libfontconfig.so.1": "libfontconfig1", "libfreetype.so.6": "libfreetype6",
    "libgcrypt.so.20": "libgcrypt20", "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0", "libgobject-2.0.so.0": "libglib2.0-0",
    "libgpg-error.so.0": "libgpg-error0", "liblz4.so.1": "liblz4-1", "liblzma.so.5": "liblzma5",
    "libmd.so.0": "libmd0", "libpcre2-8.so.0": "libpcre2-8-0", "libpng16.so.16": "libpng16-16",
    "libsystemd.so.0": "libsystemd0", "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4", "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0", "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0", "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1", "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0", "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0", "libz.so.1": "zlib1g", "libzstd.so.1": "libzstd1",
}
# the C and C++ runtimes: on every Debian
BASE_LIBRARIES = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                  "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "linux-vdso.so.1",
                  "ld-linux-aarch64.so.1")

HEADLESS_HINT = (
    "Headless, RouteLab runs as commands: `routelab --help` lists them (route, tree, "
    "isochrone, csp, contract, partition, customize, ...), and "
    "`QT_QPA_PLATFORM=offscreen python scripts/screenshot.py` draws the window to a PNG.")


def qt_libraries() -> list[Path]:
    """The Qt pieces whose system libraries the window needs: the xcb platform plugin
    and QtGui, in the installed PySide6 (found without importing Qt)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(list(spec.submodule_search_locations)[0])
    found = [root / "Qt" / "plugins" / "platforms" / "libqxcb.so"]
    found += sorted((root / "Qt" / "lib").glob("libQt6Gui.so.*"))[:1]
    return [p for p in found if p.exists()]


def linked_libraries(library: Path) -> dict[str, str | None]:
    """``ldd``'s answer for one library: soname -> path (None: not found), without the
    wheel's own libraries; {} where there is no ldd."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return {}
    out = subprocess.run([ldd, str(library)], capture_output=True, text=True, timeout=30).stdout
    wheel = str(library.parents[2]) if "plugins" in library.parts else str(library.parents[1])
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if not parts or (len(parts) >= 3 and parts[2].startswith(wheel)):
            continue
        name = parts[0].rsplit("/", 1)[-1]
        found[name] = None if "not found" in line else (parts[2] if len(parts) >= 3 else parts[0])
    return found


def missing_libraries() -> list[str]:
    """Sonames the window's Qt pieces need and the system lacks."""
    missing = {}
    for library in qt_libraries():
        missing.update({k: None for k, v in linked_libraries(library).items() if v is None})
    return sorted(missing)


def packages(sonames) -> list[str]:
    """The Debian packages that hold ``sonames`` (unknown ones left out)."""
    return sorted({DEBIAN_PACKAGES[s] for s in sonames if s in DEBIAN_PACKAGES})


def x_server_answers(display: str) -> bool:
    """Whether an X server listens at ``display`` (":0", "unix:0", "host:10.0"): its
    socket in /tmp/.X11-unix, or TCP port 6000 + N; True when the form is unknown."""
    import socket
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return True
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        if not os.path.exists(path):
            return False
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(1.0)
            return s.connect_ex(path) == 0
    if host.startswith("/"):         # macOS launchd sockets: let Qt try
        return True
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=1.0):
            return True
    except OSError:
        return False


def problem(env=None) -> str | None:
    """Why the window cannot open here (one paragraph), or None when it can."""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform in HEADLESS_PLATFORMS or not sys.platform.startswith("linux"):
        return None
    if platform in ("", "xcb") and not env.get("DISPLAY") and not \
            (platform == "" and env.get("WAYLAND_DISPLAY")):
        return ("RouteLab cannot open its window: there is no display (DISPLAY is not set, "
                "and no Wayland session either). Run it on a desktop, or forward X11 "
                f"(ssh -X). {HEADLESS_HINT}")
    if platform in ("", "xcb") and env.get("DISPLAY"):
        if not x_server_answers(env["DISPLAY"]):
            return (f"RouteLab cannot open its window: DISPLAY is {env['DISPLAY']}, but no X "
                    f"server answers there. {HEADLESS_HINT}")
        missing = missing_libraries()
        if missing:
            names = " ".join(packages(missing)) or "the packages that hold them"
            return ("RouteLab cannot open its window: Qt's xcb platform plugin needs system "
                    f"libraries this machine lacks ({', '.join(missing)}). On Debian or "
                    f"Ubuntu: sudo apt-get install {names} (scripts/run does this when run "
                    f"as root). {HEADLESS_HINT}")
    return None


def run_window(paths: list[str], backend: str = "auto") -> int:
    """Open the window on ``paths`` (or the generated default network) and run Qt.

    The backend choice is made on the engine thread when it starts; loading runs there
    too, so the window shows at once with a progress bar in the status bar.
    """
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
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


def main(argv: list[str]) -> int:
    if argv == ["--missing"]:
        print(" ".join(packages(missing_libraries())))
        return 0
    print("usage: python -m app.window --missing", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
