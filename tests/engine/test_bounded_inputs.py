"""Bounded inputs (issue 35): every input class the second audit found unbounded is
refused by RouteLab itself with one clear line naming the file at fault, never by
Python's recursion limit, a library's TypeError or the machine running out of memory.

Each class is tested with generated inputs: decoder expressions nested by every
construct that opens a level, TOML nested by arrays, inline tables and dotted keys,
METIS seeds around the C int's range, every array of a ``.rlg`` with a wrong shape,
dtype, NaN or range, and the memory budget in front of the CRP cell matrices and of
compressed text. (Isochrone bounds: tests/engine/test_isochrone_geometry.py.)
"""
from __future__ import annotations

import gzip
import inspect
import sys
import time

import numpy as np
import pytest

from engine.crp.metric.decoder import (MAX_TOML_BYTES, MAX_TOML_DEPTH, DecoderError,
                                       load_decoder, parse_decoder)
from engine.crp.metric.expression import MAX_CODE, MAX_DEPTH, MAX_LENGTH, ExpressionError, parse
from engine.generate.network import generate_road_network
from engine.io import LoadError, load
from engine.io.cache import check_graph, save_cache
from engine.io.limits import OverBudget, gib
from tests.conftest import NY_D, need


def parse_with_headroom(text: str, frames: int = 500):
    """parse(text) with only ``frames`` Python frames left before the recursion limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        return parse(text)
    finally:
        sys.setrecursionlimit(old)


# ------------------------------------------------------------ expression depth
# name: (the text that opens one level, the text that closes it); the innermost is "cost"
OPENERS = {
    "parentheses": ("(", ")"),
    "unary minus": ("-", ""),
    "unary plus": ("+", ""),
    "spaced parentheses": ("( ", " )"),
    "not": ("not ", ""),
    "where()": ("where(", ", 1, 2)"),
    "min()": ("min(1, ", ")"),
    "clamp()": ("clamp(", ", 0, 9)"),
    "mixed": None,
}
MIXED = [("(", ")"), ("-", ""), ("max(", ", 1)"), ("not ", ""), ("where(1, ", ", 0)")]


def nested(kind: str, depth: int) -> tuple[str, int]:
    """(text nested ``depth`` levels, the column of the level-(MAX_DEPTH + 1) opener)."""
    pairs = [MIXED[i % len(MIXED)] for i in range(depth)] if kind == "mixed" else \
        [OPENERS[kind]] * depth
    column = sum(len(o) for o, _ in pairs[:MAX_DEPTH])
    return "".join(o for o, _ in pairs) + "cost" + "".join(c for _, c in reversed(pairs)), column


@pytest.mark.parametrize("kind", OPENERS)
def test_nesting_up_to_the_limit_parses(kind):
    text, _ = nested(kind, MAX_DEPTH)
    assert len(text) <= MAX_LENGTH
    parse_with_headroom(text)


@pytest.mark.parametrize("kind", OPENERS)
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 120, 400])
def test_nesting_past_the_limit_is_refused_at_its_column(kind, depth):
    text, column = nested(kind, depth)
    text = text[:MAX_LENGTH]                     # the audit's inputs are under the length limit
    with pytest.raises(ExpressionError) as e:
        parse_with_headroom(text)
    assert e.value.column == column, str(e.value)
    assert f"nested more than {MAX_DEPTH} deep" in e.value.reason


@pytest.mark.parametrize("text,column", [
    ("(" * 990 + "1" + ")" * 990, MAX_DEPTH),
    ("-" * 1990 + "1", MAX_DEPTH),
    ("where(" * 120 + "1" + ", 1, 1)" * 120, 6 * MAX_DEPTH),
    ("not " * 450 + "1", 4 * MAX_DEPTH),
])
def test_the_audit_expressions(text, column):
    assert len(text) <= MAX_LENGTH
    with pytest.raises(ExpressionError) as e:
        parse(text)
    assert e.value.column == column


@pytest.mark.parametrize("op", ["+", "*", "-", " and ", " or ", "/"])
def test_long_flat_chains_are_refused_as_too_large(op):
    """A left-nested tree of 1,000 terms would take as many frames to compile: the parser
    stops at MAX_CODE steps, at the operator that passes it."""
    text = op.join(["1"] * (MAX_LENGTH // (len(op) + 1)))
    with pytest.raises(ExpressionError) as e:
        parse_with_headroom(text)
    assert f"more than {MAX_CODE} steps" in e.value.reason
    k = MAX_CODE // 2                  # steps: 1, 1, op, 1, op, ...: operator k is step 2k + 1
    assert e.value.column == (k - 1) * (len(op) + 1) + 1 + (len(op) - len(op.strip())) // 2


def test_a_chain_within_the_step_limit_compiles():
    from engine.crp.metric.expression import compile_program
    text = "+".join(["cost"] * 40)
    program = compile_program(parse_with_headroom(text), [])
    assert program.code.size == 79


@pytest.mark.parametrize("kind", ["parentheses", "unary minus", "where()", "mixed"])
def test_a_decoder_with_a_deep_expression_names_file_line_and_column(kind, tmp_path):
    text, column = nested(kind, 300)
    toml = tmp_path / "deep.toml"
    toml.write_text(f'name = "deep"\nkind = "distance"\nexpression = "{text[:MAX_LENGTH]}"\n')
    with pytest.raises(DecoderError) as e:
        load_decoder(toml)
    assert str(e.value).startswith(f"{toml}:3: expression: column {column}: nested more than")


# ------------------------------------------------------------ TOML depth
HEAD = 'name = "t"\nkind = "distance"\n'
TOML_NESTING = {
    "arrays": lambda d: "forbid = " + "[" * d + "]" * d,
    "inline tables": lambda d: "speeds = " + "{a = " * d + "1" + "}" * d,
    "arrays of inline tables": lambda d: "forbid = " + "[{a = " * (d // 2) + "1" + "}]" * (d // 2),
    "dotted key": lambda d: "turns" + ".a" * (d - 1) + " = 1",
    "quoted dotted key": lambda d: "turns" + '."a b"' * (d - 1) + " = 1",
    "dotted header": lambda d: "[" + ".".join(["a"] * d) + "]\nx = 1",
    "array of tables header": lambda d: "[[" + " . ".join(["a"] * d) + "]]\nx = 1",
}


@pytest.mark.parametrize("kind", TOML_NESTING)
@pytest.mark.parametrize("depth", [MAX_TOML_DEPTH + 2, 1_000, 20_000])
def test_deep_toml_is_refused_before_tomllib_reads_it(kind, depth):
    text = HEAD + TOML_NESTING[kind](depth)
    started = time.perf_counter()
    with pytest.raises(DecoderError) as e:
        parse_decoder(text, source="deep.toml")
    assert time.perf_counter() - started < 2
    assert str(e.value).startswith("deep.toml:3: syntax: ")
    assert f"more than {MAX_TOML_DEPTH}" in str(e.value), str(e.value)


@pytest.mark.parametrize("kind", TOML_NESTING)
def test_toml_nested_within_the_bound_reaches_the_decoder_checks(kind):
    """At the bound, tomllib reads it and the decoder's own checks answer (an unknown key
    or a wrong type), not the depth bound."""
    with pytest.raises(DecoderError) as e:
        parse_decoder(HEAD + TOML_NESTING[kind](MAX_TOML_DEPTH // 2), source="ok.toml")
    assert "more than" not in str(e.value) and "syntax" not in str(e.value), str(e.value)


@pytest.mark.parametrize("quiet", [
    'description = "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r"',
    "description = '" + "{" * 40 + "'",
    'description = """\n' + "[" * 40 + "\n" + ".x" * 40 + '\n"""',
    "description = '''" + "[" * 40 + "'''",
    "# " + "[" * 40 + " a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t",
    "forbid = [" + ", ".join(['"ferry"'] * 40) + "]",
])
def test_brackets_and_dots_in_strings_and_comments_do_not_count(quiet):
    decoder = parse_decoder(HEAD + quiet + "\n", source="quiet.toml")
    assert decoder.name == "t"


@pytest.mark.parametrize("closing", ["'''a''''", "'''a'''''", '"""a""""', '"""a"""""'])
def test_brackets_after_a_string_closed_by_extra_quotes_count(closing):
    """TOML lets up to two quotes end a multi-line string's content; what follows is
    outside it, so the brackets there count."""
    with pytest.raises(DecoderError, match=r"^x.toml:3: syntax: arrays and inline tables nested"):
        parse_decoder(HEAD + f"forbid = [{closing}, " + "[" * 3000, source="x.toml")


OPEN_QUOTES = {                    # a quote left open must not be rescanned per later quote
    "quotes": '"' * 200_000,
    "single quotes": "'" * 200_000,
    "open triple": 'x = """' + "a" * 200_000,
    "escaped quotes in an open triple": 'x = """' + '\\"' * 100_000,
    "escaped quotes on one line": 'x = "' + '\\"' * 100_000 + "\\\n",
    "backslashes": 'x = "' + "\\" * 200_000,
    "open literal triple": "x = '''" + "''a" * 60_000,
    "short string lines": '"a\n' * 70_000,
}


@pytest.mark.parametrize("name", OPEN_QUOTES)
def test_the_bound_check_is_linear_on_open_strings(name):
    started = time.perf_counter()
    with pytest.raises(DecoderError, match=r"^x.toml:[0-9]+: syntax: "):
        parse_decoder(HEAD + OPEN_QUOTES[name], source="x.toml")
    assert time.perf_counter() - started < 2


def test_tomllib_recursion_never_surfaces(monkeypatch):
    """The bound is the guard; should anything slip past it, tomllib's RecursionError is
    still a DecoderError naming the file."""
    import engine.crp.metric.decoder as decoder
    monkeypatch.setattr(decoder, "_check_bounds", lambda text, source: None)
    with pytest.raises(DecoderError, match=r"^x.toml:1: syntax: nested too deeply"):
        decoder.parse_decoder(HEAD + "forbid = " + "[" * 20_000, source="x.toml")


def test_the_deep_line_is_named_after_a_multiline_string():
    text = HEAD + 'description = """\nline\nline\n"""\nforbid = ' + "[" * 50
    with pytest.raises(DecoderError, match=r"^x.toml:7: syntax: arrays and inline tables"):
        parse_decoder(text, source="x.toml")


def test_a_decoder_file_too_large_or_not_a_file_is_named(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text(HEAD + "# " + "x" * MAX_TOML_BYTES + "\n")
    with pytest.raises(DecoderError, match=rf"^{big}: file too large \([0-9,]+ bytes; a decoder "
                                           rf"is at most {MAX_TOML_BYTES:,}\)"):
        load_decoder(big)
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(DecoderError, match=rf"^{folder}: not a regular file"):
        load_decoder(folder)
    with pytest.raises(DecoderError, match=r"longer than"):
        parse_decoder(HEAD + "#" * MAX_TOML_BYTES)


# ------------------------------------------------------------ METIS seeds
@pytest.fixture(scope="module")
def small():
    return generate_road_network(600, seed=2)


@pytest.mark.parametrize("seed", [-1, 2**31, 2**32, 2**40, 2**63, 10**30, 1e30, 1.5,
                                  float("nan"), float("inf"), "7", True, None])
def test_seeds_outside_metis_range_are_refused(small, seed):
    from engine.crp.partition.nested import partition_graph
    with pytest.raises(ValueError, match=r"^the seed must be a whole number in "
                                         r"0\.\.2,147,483,647 \(METIS's range\), got "):
        partition_graph(small, seed=seed)


def test_seeds_at_the_ends_of_the_range_work(small):
    from engine.crp.partition.nested import MAX_SEED, partition_graph
    cells = [partition_graph(small, seed=s, levels=(4, 7)).cell_of for s in (0, MAX_SEED, 7.0)]
    assert all(c.shape == cells[0].shape for c in cells)


# ------------------------------------------------------------ .rlg arrays
@pytest.fixture(scope="module")
def rlg(tmp_path_factory):
    g = generate_road_network(500, seed=4)
    path = tmp_path_factory.mktemp("rlg") / "g.rlg"
    save_cache(g, path)
    with np.load(path) as z:
        arrays = dict(z)
    assert "geometry_lonlat" in arrays and "turn_from_arc" in arrays and "attr/road_class" in arrays
    return arrays


def _corruptions(arrays: dict):
    """(name, array, how, the corrupt array) for every array of the file."""
    for name, a in arrays.items():
        if name == "meta":
            continue
        yield name, "2-D", np.stack([a, a], axis=-1)
        yield name, "strings", a.astype("U6")
        if a.dtype.kind in "iub":
            yield name, "float64", a.astype(np.float64) + 0.5
        if a.dtype.kind == "f":
            for bad in (np.nan, np.inf, -np.inf):
                b = a.copy()
                b.flat[min(3, b.size - 1)] = bad
                yield name, f"holds {bad}", b
        if name in ("lon", "geometry_lonlat"):
            b = a.copy()
            b.flat[0] = 200.0
            yield name, "200 degrees", b
        if name == "lat":
            b = a.copy()
            b[0] = -91.0
            yield name, "-91 degrees", b
    for name, value in (("attr/road_class", 10), ("attr/road_class", -1), ("attr/lanes", -1),
                        ("attr/length_m", -1.0), ("attr/speed_kmh", -1.0),
                        ("attr/speed_kmh", 1e5), ("attr/oneway", 2), ("attr/toll", 2)):
        b = arrays[name].astype(np.int16 if arrays[name].dtype == bool else arrays[name].dtype)
        b[5] = value
        yield name, f"holds {value}", b


def test_every_array_of_a_cache_is_validated(rlg, tmp_path):
    """Each corruption is a LoadError that names the .rlg (never its source .pbf or a
    decoder) and the array."""
    refused = 0
    for i, (name, how, bad) in enumerate(_corruptions(rlg)):
        path = tmp_path / f"bad{i}.rlg"
        with open(path, "wb") as f:
            np.savez(f, **{**rlg, name: bad})
        with pytest.raises(LoadError) as e:
            load([path])
        message = str(e.value)
        assert message.startswith(f"{path}: "), (name, how, message)
        assert name.split("/")[-1] in message, (name, how, message)
        assert "\n" not in message and len(message) < 300
        refused += 1
    assert refused > 60


def test_check_graph_refuses_nan_geometry_in_a_built_graph():
    import dataclasses
    g = generate_road_network(300, seed=6)
    points = g.geometry_lonlat.copy()
    points[0, 1] = np.nan
    with pytest.raises(LoadError, match="geometry_lonlat's latitude holds nan at index 0"):
        check_graph(dataclasses.replace(g, geometry_lonlat=points), "g.rlg")


# ------------------------------------------------------------ memory budget
def _random_partition(graph, sizes):
    """A valid nested partition with random cells (rank >> k): the worst cell matrices."""
    from engine.crp.partition.nested import _frozen
    from engine.io.partition_file import graph_key
    rank = np.random.default_rng(0).permutation(graph.num_nodes)
    cell_of = np.stack([rank >> k for k in sizes]).astype(np.int32)
    return _frozen(sizes, [True] * len(sizes), cell_of, 0, graph_key(graph), 0.0)


@pytest.mark.parametrize("sizes", [(3, 6), (4, 7, 9), (2, 5, 8)])
def test_the_estimate_counts_every_shortcut_the_overlay_builds(small, sizes):
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.overlay import Overlay, matrix_bytes
    for p in (_random_partition(small, sizes), partition_graph(small, levels=sizes)):
        _, shortcuts = matrix_bytes(small, p)
        assert shortcuts == sum(Overlay(small, p).summary()["shortcuts"])


def test_cell_matrices_over_the_budget_are_refused_naming_the_partition(small, tmp_path,
                                                                        monkeypatch):
    from engine.core.backend import cpu_backend
    from engine.crp.partition.overlay import matrix_bytes
    from engine.workspace import Workspace
    p = _random_partition(small, (3, 6, 8))
    rlp = p.save(tmp_path / "random.rlp")
    nbytes, shortcuts = matrix_bytes(small, p)
    budget = nbytes // 3
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", str(budget))
    ws = Workspace(small, cpu_backend())
    ws.load_partition(rlp)
    with pytest.raises(OverBudget) as e:
        ws.customize(load_decoder("car-fastest"), timed=False)
    assert str(e.value) == (f"{rlp}: the CRP overlay of this partition ({shortcuts:,} shortcuts "
                            f"in its cell matrices) needs {gib(nbytes)} GiB, budget {gib(budget)} "
                            "GiB (the memory budget; set ROUTELAB_MEMORY_BUDGET to change it)")
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", str(nbytes + 1))
    ws.customize(load_decoder("car-fastest"), timed=False)


def test_compressed_text_past_the_budget_says_budget_not_bomb(tmp_path, monkeypatch):
    """Ordinary gzip text that expands past a small budget (well within the ratio
    limit): the budget is named, with "needs ... GiB, budget ... GiB"."""
    lines = ["p sp 50000 100000"] + [f"a {i % 50000 + 1} {(i * 7) % 50000 + 1} {i % 97 + 1}"
                                     for i in range(100_000)]
    path = tmp_path / "g.gr.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode() + b"\n"))
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")
    with pytest.raises(OverBudget) as e:
        load([path])
    message = str(e.value)
    assert message.startswith(f"{path}: ") and "budget 0.00098 GiB" in message, message
    assert "needs" in message and "bomb" not in message


def test_ny_under_a_1m_budget_says_budget(monkeypatch):
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "1M")
    with pytest.raises(OverBudget, match=r"needs more than [0-9.]+ GiB, budget 0\.00098 GiB"):
        load([need(NY_D)], siblings=False)
