"""What every benchmark section shares: where the data is, timing helpers, the machine."""
from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("ROUTELAB_DATA", ROOT.parent / "shared" / "data"))
DOC = ROOT / "docs" / "benchmarks.md"
# The large generated graph of the GPU sections; smaller only to smoke-test the script.
BIG = int(os.environ.get("ROUTELAB_BENCH_BIG", 2_000_000))


def child_json(script: Path, *args: str, timeout: float = 3600) -> dict:
    """Run ``script args`` in a fresh Python process (its peak RSS is its own); the JSON
    object on its last line of output. RuntimeError with its error output otherwise."""
    import json
    import subprocess
    kept = os.environ.get("PYTHONPATH")          # e.g. a folder of carried wheels
    env = dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + kept if kept else ""))
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timed_routes(query, pairs, after=None) -> tuple[list[float], int]:
    """Route every (s, t) of ``pairs`` with ``query.route``: the milliseconds of each and
    the number unreachable; ``after(query)`` runs after each route, untimed."""
    from engine.core.paths import Unreachable
    times, unreachable = [], 0
    for s, t in pairs:
        t0 = time.perf_counter()
        try:
            query.route(int(s), int(t))
        except Unreachable:
            unreachable += 1
        times.append((time.perf_counter() - t0) * 1000)
        if after is not None:
            after(query)
    return times, unreachable


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t0


def wait_until(app, condition, timeout_s: float, what: str, poll_s: float = 0.001) -> None:
    """Run the Qt event loop until ``condition()``; TimeoutError naming ``what``."""
    end = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError(f"the window did not {what} in time")
        app.processEvents()
        time.sleep(poll_s)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    try:
        from engine.core.backend import gpu_backend
        text += f", GPU {gpu_backend().describe()}"
    except Exception:
        pass
    return text


def best_of(runs: int, fn, *args, **kwargs):
    best = None
    for _ in range(runs):
        result, seconds = timed(fn, *args, **kwargs)
        best = seconds if best is None else min(best, seconds)
    return result, best
