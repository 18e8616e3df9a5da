"""Start-up: cold and warm launches, as a person meets them (issue #36, items 2 and 3).

Every figure is a new process (subprocess), the clock running from its start to its
exit. *Cold*: Numba's cache is empty (NUMBA_CACHE_DIR a new folder), as on the first
run after an install; *warm*: the same folder on the next launch. Python writes and
reads its own bytecode as it does by default (PYTHONDONTWRITEBYTECODE is dropped).

- `routelab cache` on NY's DIMACS files, then `routelab route` from the cache it wrote
  (1 -> 264346) and, for comparison, from the text files;
- `routelab partition` and `routelab customize` (car-fastest) on Monaco;
- the window (offscreen, CPU backend), run by this file itself
  (``python scripts/benchmarks/startup.py window FILE``): the launch until Monaco is on
  the map, then Metric > Partition until the customized metric is shown (a partition
  and a customization, after the background hierarchy of the load, as a person who
  clicks at once meets it), and the words the status bar showed meanwhile.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):                 # run as a script: the window probe
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.common import DATA, ROOT  # noqa: E402

HEADER = ["what", "cold (empty Numba cache)", "warm (second launch)", "target", "notes"]
NY_FROM, NY_TO = "1", "264346"


def _env(cache_dir) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def _run(args, cache_dir) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, env=_env(cache_dir),
                          capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(f"{' '.join(map(str, args))} failed: {done.stderr[-2000:]}")
    return seconds, done


def _cold_warm(args, runs: int) -> tuple[float, list[float], str]:
    """(cold seconds, warm seconds of ``runs`` launches, the cold run's stderr)."""
    with tempfile.TemporaryDirectory(prefix="routelab-numba-") as cache_dir:
        cold, done = _run(args, cache_dir)
        warm = [_run(args, cache_dir)[0] for _ in range(runs)]
    return cold, warm, done.stderr


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _warm_text(times: list[float]) -> str:
    return f"{_s(statistics.median(times))} (median of {len(times)}; {_s(min(times))}–{_s(max(times))})"


def _said(stderr: str) -> str:
    lines = [line.removeprefix("routelab: ") for line in stderr.splitlines()
             if "first time only" in line or "compiled" in line]
    return "; ".join(lines) or "no compilation"


def _ny_rows(tmp: Path) -> list[list[str]]:
    ny = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not ny.exists():
        return [["NY", "", "", "", "shared data absent"]]
    rlg = tmp / "NY.rlg"
    cache_s, _ = _run(["-m", "app.main", "cache", ny, "--out", rlg], tmp / "numba")
    route = ["-m", "app.main", "route", rlg, "--from", NY_FROM, "--to", NY_TO]
    load = os.getloadavg()[0]
    cold, warm, said = _cold_warm(route, runs=11)
    text_cold, text_warm, _ = _cold_warm(["-m", "app.main", "route", ny, "--from", NY_FROM,
                                          "--to", NY_TO], runs=3)
    size = rlg.stat().st_size / 1e6
    return [
        ["`routelab cache USA-road-d.NY.gr.gz --out NY.rlg`", "", _s(cache_s), "",
         f"writes {size:.1f} MB (the -t.gr and .co siblings included)"],
        [f"`routelab route NY.rlg --from {NY_FROM} --to {NY_TO}`", _s(cold), _warm_text(warm),
         "≤ 0.5 s warm", f"{_said(said)}; load average {load:.1f} on {os.cpu_count()} cores"],
        [f"`routelab route USA-road-d.NY.gr.gz --from {NY_FROM} --to {NY_TO}`", _s(text_cold),
         _warm_text(text_warm), "", "parsing the three text files"],
    ]


def _monaco_rows(monaco: Path) -> list[list[str]]:
    rows = []
    for command in (["partition"], ["customize", "--decoder", "car-fastest"]):
        cold, warm, said = _cold_warm(["-m", "app.main", command[0], monaco, *command[1:]], runs=3)
        rows.append([f"`routelab {' '.join(command)} monaco.osm.pbf`", _s(cold),
                     _warm_text(warm), "", _said(said)])
    return rows


def _window_rows(monaco: Path) -> list[list[str]]:
    try:
        import PySide6  # noqa: F401
    except ImportError:
        return [["window", "", "", "", "PySide6 absent"]]
    with tempfile.TemporaryDirectory(prefix="routelab-numba-") as cache_dir:
        runs = [json.loads(_run([__file__, "window", monaco], cache_dir)[1].stdout.splitlines()[-1])
                for _ in range(4)]
    cold, warm = runs[0], runs[1:]
    words = [m for m in cold["words"] if "first time only" in m]
    first = sorted({m.split(":")[0] for m in words})
    return [
        ["window: launch until Monaco is on the map", _s(cold["shown_s"]),
         _warm_text([r["shown_s"] for r in warm]), "", ""],
        ["window: Metric ▸ Partition until the metric is shown", _s(cold["partition_s"]),
         _warm_text([r["partition_s"] for r in warm]), "≤ 2 s warm",
         f"cold: {len(words)} compilations told in the status bar, as "
         + ", ".join(f"'{w}: N compiled'" for w in first)
         + f"; warm: {sum('first time only' in m for r in warm for m in r['words'])}"],
    ]


def bench_startup() -> tuple[list[str], list[list[str]]]:
    monaco = DATA / "osm" / "monaco.osm.pbf"
    with tempfile.TemporaryDirectory(prefix="routelab-bench-") as tmp:
        rows = _ny_rows(Path(tmp))
    if monaco.exists():
        rows += _monaco_rows(monaco) + _window_rows(monaco)
    else:
        rows.append(["Monaco", "", "", "", "shared data absent"])
    return HEADER, rows


# --------------------------------------------------- the window, in its own process
def window_probe(path: str) -> dict:
    """Open ``path`` in the window, partition at once; seconds since the process began."""
    started = time.perf_counter() - _since_process_start()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from benchmarks.common import wait_until
    app = QApplication.instance() or QApplication([])
    w = MainWindow(backend="cpu")
    w.resize(1280, 800)
    w.show()
    words, shown, metrics = [], [], []
    w.engine.progress.connect(lambda job, fraction, message: words.append(message))
    w.graph_shown.connect(shown.append)
    w.open_files([path])
    wait_until(app, lambda: bool(shown), 900, "show the graph")
    shown_s = time.perf_counter() - started
    crp = w.controller("customize")
    crp.metric_shown.connect(metrics.append)
    t0 = time.perf_counter()
    crp.partition()
    wait_until(app, lambda: bool(metrics), 900, "show the customized metric")
    result = {"shown_s": shown_s, "partition_s": time.perf_counter() - t0,
              "words": list(dict.fromkeys(m for m in words if m))}
    w.close()
    w.engine.shutdown()
    return result


def _since_process_start() -> float:
    """Seconds since this process started (from /proc; 0 where there is none)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


SECTIONS = {"startup": ("Start-up, cold and warm (`routelab` commands and the window)",
                        bench_startup)}

if __name__ == "__main__" and sys.argv[1:2] == ["window"]:
    print(json.dumps(window_probe(sys.argv[2])), flush=True)
    os._exit(0)         # the window's threads are stopped; skip teardown (seen: a segfault)
