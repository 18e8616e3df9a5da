"""Writers that never destroy (issue 35, part 1), on the command line: for EVERY file a
command writes (found in the capability registry: ``Param.output``, so a new writer is
covered here at once), an output that is an input (the same path, ./ and ../
spellings, a symlink, a hard link, a DIMACS sibling, a --hierarchy/--partition/
--decoder file), a character device, a FIFO, a socket, a folder or a symlink to a
device is refused with exit status 1 and a message naming the target; nothing is
written, the input's bytes and the device stay as they were. A missing folder is
said before the graph is even read."""
from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys

import pytest

from app.cli import main
from engine import capabilities
from engine.generate.network import generate_road_network
from engine.io.cache import save_cache
from tests.conftest import ROOT

WRITERS = [(cap, p) for cap in capabilities.all_capabilities() for p in cap.params
           if p.output and p.cli]
IDS = [f"{cap.name} {p.cli_flag}" for cap, p in WRITERS]
GRAPH = "g.rlg"
DIMACS = "r-d.NY.gr"                    # the DIMACS USA naming: r-t.NY.gr and r-d.NY.co are siblings
SIBLINGS = ("r-t.NY.gr", "r-d.NY.co")
GR = "p sp 3 2\na 1 2 5\na 2 3 7\n"
CO = "p aux sp co 3\nv 1 8680000 49400000\nv 2 8681000 49400000\nv 3 8682000 49400000\n"


def test_every_writer_is_found():
    names = {i.split()[0] for i in IDS}
    assert {"contract", "partition", "customize", "tree", "route", "isochrone", "csp"} <= names
    assert len(WRITERS) >= 12


@pytest.fixture(scope="module")
def graph_bytes(tmp_path_factory) -> tuple[bytes, int]:
    g = generate_road_network(200, seed=1)
    path = tmp_path_factory.mktemp("writes") / GRAPH
    save_cache(g, path)
    return path.read_bytes(), int(g.node_id[0])


@pytest.fixture
def folder(tmp_path, monkeypatch, graph_bytes):
    """A folder (the current one) with the graph cache and DIMACS files and siblings."""
    (tmp_path / GRAPH).write_bytes(graph_bytes[0])
    for name, text in ((DIMACS, GR), (SIBLINGS[0], GR), (SIBLINGS[1], CO)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def argv(cap, param, graph: str, target: str, node: int, extra=()) -> list[str]:
    """The command writing ``target`` through ``param``; every required parameter given
    (a node id of the graph, else "1"): the refusal must come before any of them is used."""
    args = [cap.name, graph]
    for p in cap.params:
        if p.required and p.cli:
            args += [p.cli_flag, str(node) if p.node else "1"]
    return args + list(extra) + [param.cli_flag, target, "--backend", "cpu"]


def snapshot(folder) -> dict:
    """Every entry of the folder: its kind and, for a regular file, its bytes."""
    out = {}
    for entry in os.scandir(folder):
        st = entry.stat(follow_symlinks=False)
        out[entry.name] = (stat.S_IFMT(st.st_mode),
                           open(entry.path, "rb").read() if stat.S_ISREG(st.st_mode) else
                           os.readlink(entry.path) if stat.S_ISLNK(st.st_mode) else st.st_rdev)
    return out


def refused(capsys, args, folder, target: str, reason: str, param) -> str:
    before = snapshot(folder)
    status = main(args)
    err = capsys.readouterr().err
    assert status == 1, err
    assert snapshot(folder) == before                  # nothing written, renamed or left behind
    if param.output is True:                           # csp --hierarchy-file: read when it exists
        assert f": {target}: " in err and reason in err, err
        assert ".tmp" not in err and "internal error" not in err, err
    assert err.count("\n") == 1, err
    return err


# ------------------------------------------------------------ an output that is an input
SPELLINGS = {"same path": lambda f: GRAPH, "absolute": lambda f: str(f / GRAPH),
             "./": lambda f: f"./{GRAPH}", "../": lambda f: f"../{f.name}/{GRAPH}",
             "symlink": lambda f: (os.symlink(GRAPH, "link.out"), "link.out")[1],
             "hard link": lambda f: (os.link(GRAPH, "hard.out"), "hard.out")[1]}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("cap, param", WRITERS, ids=IDS)
def test_an_output_that_is_the_graph_file_is_refused(capsys, folder, graph_bytes, cap, param, spelling):
    target = SPELLINGS[spelling](folder)
    err = refused(capsys, argv(cap, param, GRAPH, target, graph_bytes[1]), folder, target,
                  "an input (inputs are never written)", param)
    if param.output is True:
        assert f"the graph file {GRAPH}" in err
    assert (folder / GRAPH).read_bytes() == graph_bytes[0]


@pytest.mark.parametrize("sibling", SIBLINGS)
@pytest.mark.parametrize("cap, param", WRITERS, ids=IDS)
def test_an_output_that_is_a_dimacs_sibling_is_refused(capsys, folder, cap, param, sibling):
    err = refused(capsys, argv(cap, param, DIMACS, sibling, 1), folder, sibling,
                  "an input (inputs are never written)", param)
    if param.output is True:
        assert "the graph's sibling file" in err


def other_inputs(cap, param) -> list:
    """The parameters of ``cap`` that name a file it reads (a hierarchy, a partition,
    a decoder .toml), except ``param``."""
    return [p for p in cap.params if p.cli and p.type is str and p is not param and
            (p.file and p.output is not True or p.name == "decoder")]


CASES = [(cap, param, other) for cap, param in WRITERS for other in other_inputs(cap, param)]


@pytest.mark.parametrize("cap, param, other", CASES,
                         ids=[f"{c.name} {p.cli_flag} = {o.cli_flag}" for c, p, o in CASES])
def test_an_output_that_another_input_names_is_refused(capsys, folder, graph_bytes, cap, param, other):
    name = f"input-{other.name}.toml" if other.name == "decoder" else f"input-{other.name}"
    (folder / name).write_bytes(b"an input")
    args = argv(cap, param, GRAPH, f"./{name}", graph_bytes[1], extra=[other.cli_flag, name])
    err = refused(capsys, args, folder, f"./{name}", "an input (inputs are never written)", param)
    assert f"the {other.cli_flag} file {name}" in err
    assert (folder / name).read_bytes() == b"an input"


# ----------------------------------------------------- only regular files or new paths
def special(folder, kind: str) -> str:
    if kind in ("character device", "symlink to a device"):
        try:
            os.mknod(folder / "dev", stat.S_IFCHR | 0o666, os.makedev(1, 7))   # as /dev/full
        except OSError as e:
            pytest.skip(f"cannot make a character device here: {e}")
        if kind == "character device":
            return "dev"
        os.symlink("dev", "dev-link")
        return "dev-link"
    if kind == "FIFO":
        os.mkfifo("fifo")
        return "fifo"
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind("sock")
        s.close()
        return "sock"
    os.mkdir("dir")
    return "dir"


@pytest.mark.parametrize("kind", ["character device", "symlink to a device", "FIFO", "socket",
                                  "folder"])
@pytest.mark.parametrize("cap, param", WRITERS, ids=IDS)
def test_a_device_fifo_socket_or_folder_is_refused(capsys, folder, graph_bytes, cap, param, kind):
    target = special(folder, kind)
    refused(capsys, argv(cap, param, GRAPH, target, graph_bytes[1]), folder, target,
            "only a regular file or a new path", param)


def test_dev_null_is_never_replaced(capsys, folder, graph_bytes):
    before = os.stat("/dev/null")
    assert main(["tree", GRAPH, "--from", str(graph_bytes[1]), "--out", "/dev/null"]) == 1
    assert "/dev/null: it is a character device" in capsys.readouterr().err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_standard_output_redirected_to_a_file_is_never_replaced(folder, graph_bytes):
    """``--out /dev/stdout >> log`` would replace the whole log by a rename."""
    log = folder / "log.txt"
    log.write_text("earlier lines\n")
    with open(log, "a") as out:
        proc = subprocess.run([sys.executable, "-m", "app.main", "tree", str(folder / GRAPH),
                               "--from", str(graph_bytes[1]), "--out", "/dev/stdout"],
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=120,
                              cwd=ROOT)
    assert proc.returncode == 1 and "/dev/stdout: it is this program's standard output" in proc.stderr
    assert log.read_text() == "earlier lines\n"


# ------------------------------------------------------ the folder, before any work
@pytest.mark.parametrize("cap, param", WRITERS, ids=IDS)
def test_a_missing_folder_is_said_before_the_graph_is_read(capsys, folder, cap, param):
    target = str(folder / "no-folder" / "out")
    shutil.rmtree(folder / "no-folder", ignore_errors=True)
    assert main(argv(cap, param, "no-such-graph.gr", target, 1)) == 1
    err = capsys.readouterr().err
    assert f"{target}: no folder {folder / 'no-folder'}" in err, err     # not "no such file"


@pytest.mark.parametrize("cap, param", WRITERS, ids=IDS)
def test_two_outputs_naming_one_file_are_refused(capsys, folder, graph_bytes, cap, param):
    others = [p for p in cap.params if p.output is True and p.cli and p is not param]
    if not others or param.output is not True:
        pytest.skip("one output")
    args = argv(cap, param, GRAPH, "out", graph_bytes[1], extra=[others[0].cli_flag, "./out"])
    before = snapshot(folder)
    assert main(args) == 1
    err = capsys.readouterr().err
    assert snapshot(folder) == before and "out: " in err and "names it too" in err, err


def test_a_write_error_names_the_target(capsys, folder, graph_bytes):
    assert main(["tree", GRAPH, "--from", str(graph_bytes[1]), "--out", "/proc/t.npz"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("routelab tree: /proc/t.npz: cannot make a file in /proc") and ".tmp" not in err
