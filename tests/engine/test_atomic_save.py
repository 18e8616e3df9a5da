"""Acceptance 3 of issue 11: a save interrupted by a failing write (here a file-size
limit) leaves the previous file intact and no temporary file behind."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from engine.io.atomic import atomic_write
from tests.conftest import ROOT

# Writes small good files, then (with the file-size limit below the size of the new
# ones and SIGXFSZ ignored, so the write raises) tries to overwrite them.
CHILD = textwrap.dedent("""
    import resource, signal, sys
    from pathlib import Path
    from engine.core.backend import cpu_backend
    from engine.capabilities.tree import _save_tree
    from engine.ch import contract
    from engine.generate.network import generate_road_network
    from engine.io.cache import save_cache
    from engine.routing.reference import sssp
    folder, phase = Path(sys.argv[1]), sys.argv[2]
    g = generate_road_network(200 if phase == "good" else 5000, seed=3)
    h = contract(g, K=32, backend=cpu_backend())
    tree = sssp(g, 0)
    if phase == "bad":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
    for name, save in (("g.rlg", lambda p: save_cache(g, p)), ("g.rlh", h.save),
                       ("tree.npz", lambda p: _save_tree(g, tree, str(p)))):
        try:
            save(folder / name)
            print(name, "saved")
        except OSError as e:
            print(name, "failed:", e.strerror)
""")


def _run(folder, phase: str) -> str:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(folder), phase], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_an_interrupted_save_keeps_the_previous_file(tmp_path):
    assert _run(tmp_path, "good").count("saved") == 3
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"g.rlg", "g.rlh", "tree.npz"}
    out = _run(tmp_path, "bad")
    assert out.count("failed") == 3, out
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before       # same names (no temp file left) and same bytes


def test_atomic_write_replaces_only_on_success(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write(b"new, half written")
            raise RuntimeError("serialising failed")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]
    with atomic_write(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["f.bin"]
