"""DIMACS text parsed block by block in worker threads (engine.io.dimacs_text) reads the
same graph as one block does, and a file with several faults names the first one in the
file, whichever block a thread finished first: tiny blocks make every few lines a block."""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from engine.io import LoadError, dimacs_text
from engine.io.dimacs import parse_co, parse_gr
from engine.io.limits import read_chunks


@pytest.fixture(params=[48, 4096])
def tiny_blocks(monkeypatch, request):
    monkeypatch.setattr(dimacs_text, "read_chunks",
                        lambda path, cancel=None: read_chunks(path, cancel, chunk=request.param))


def gr_text(n=300, seed=1) -> tuple[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    arcs = np.stack([rng.integers(1, n + 1, 3 * n), rng.integers(1, n + 1, 3 * n),
                     rng.integers(0, 10**6, 3 * n)], axis=1)
    lines = ["c a comment", f"p sp {n} {arcs.shape[0]}"]
    for k, (u, v, w) in enumerate(arcs.tolist()):
        lines.append(f"a {u} {v} {w}")
        if k % 97 == 0:
            lines.append("c between arcs")
    return "\n".join(lines) + "\n", arcs


def test_small_blocks_give_the_same_arrays(tmp_path, tiny_blocks):
    text, arcs = gr_text()
    (tmp_path / "g.gr").write_text(text)
    n, tail, head, w = parse_gr(tmp_path / "g.gr")
    assert n == 300 and np.array_equal(tail, arcs[:, 0] - 1) and np.array_equal(head, arcs[:, 1] - 1)
    assert np.array_equal(w, arcs[:, 2]) and tail.dtype == np.int32
    co = "p aux sp co 300\n" + "".join(f"v {v} {v * 1000} {-v * 500}\n" for v in range(300, 0, -1))
    (tmp_path / "g.co").write_text(co)
    lon, lat = parse_co(tmp_path / "g.co", 300)
    assert np.allclose(lon, np.arange(1, 301) * 1e-3) and np.allclose(lat, -np.arange(1, 301) * 5e-4)


def _faulty(lines: list[str], at: dict) -> str:
    for k, bad in sorted(at.items(), reverse=True):
        lines[k] = bad
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("faults, says, line", [
    ({50: "a 1 2", 700: "a 1 x 3"}, "expected 3 numbers", 51),
    ({60: "a 1 x 3", 500: "a 1 2"}, "non-numeric value", 61),
    ({70: "a 1 99999 3", 800: "q"}, "node id out of range", 71),
    ({80: "p sp 300 900"}, "second problem line", 81),
    ({90: "a 1 2 -5", 850: "a 1 2"}, "negative weight", 91),
])
def test_the_first_fault_in_the_file_is_named(tmp_path, tiny_blocks, faults, says, line):
    text, _ = gr_text()
    (tmp_path / "g.gr").write_text(_faulty(text.splitlines(), faults))
    with pytest.raises(LoadError, match=says) as e:
        parse_gr(tmp_path / "g.gr")
    assert e.value.line == line


def test_records_before_the_problem_line_are_named_even_if_malformed(tmp_path, tiny_blocks):
    text, _ = gr_text()
    lines = text.splitlines()
    lines = lines[:1] + ["a 1 x 3"] + lines[2:200] + [lines[1]] + lines[200:]
    (tmp_path / "g.gr").write_text("\n".join(lines) + "\n")
    with pytest.raises(LoadError, match="'a' line before the problem line") as e:
        parse_gr(tmp_path / "g.gr")
    assert e.value.line == 2


def test_a_fault_comes_before_a_truncated_end(tmp_path, tiny_blocks):
    text, _ = gr_text()
    data = gzip.compress(_faulty(text.splitlines(), {40: "a 1 2"}).encode())
    (tmp_path / "g.gr.gz").write_bytes(data[:-40])
    with pytest.raises(LoadError, match="expected 3 numbers") as e:
        parse_gr(tmp_path / "g.gr.gz")
    assert e.value.line == 41
