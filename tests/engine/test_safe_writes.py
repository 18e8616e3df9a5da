"""Writers that never destroy (issue 35, part 1), at the engine's level: every save goes
through engine.io.atomic, which refuses a target that is an input (by any spelling,
symlink or hard link), or a device, FIFO, socket or folder (or a symlink to one),
writes through a symlink to a regular file, names the target in every error, and
removes the temporary files a killed save left once their process is gone."""
from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from engine import capabilities
from engine.io import atomic
from engine.io.atomic import UnsafeTarget, atomic_write, check_writable, leftover_temp_files
from tests.conftest import ROOT

OLD = b"the input's bytes"


def write(path, data: bytes = b"new", **kwargs) -> None:
    with atomic_write(path, **kwargs) as f:
        f.write(data)


def listing(folder) -> set[str]:
    return set(os.listdir(folder))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.gr").write_bytes(OLD)
    return tmp_path


# ------------------------------------------------------------ an output that is an input
def spellings(folder) -> dict[str, str]:
    """Other names of folder/in.gr: the same text, ./, ../folder/, a symlink, a hard link."""
    os.symlink("in.gr", folder / "link.gr")
    os.link(folder / "in.gr", folder / "hard.gr")
    return {"same": str(folder / "in.gr"), "relative": "in.gr", "dot": "./in.gr",
            "dotdot": f"../{folder.name}/in.gr", "symlink": str(folder / "link.gr"),
            "hard link": str(folder / "hard.gr")}


def test_an_input_is_never_written_by_any_spelling(folder):
    for how, target in spellings(folder).items():
        before = listing(folder)
        with pytest.raises(UnsafeTarget) as caught:
            write(target, inputs=[("the graph file", str(folder / "in.gr"))])
        message = str(caught.value)
        assert target in message and "the graph file" in message and "in.gr" in message, how
        assert caught.value.errno == errno.EEXIST
        assert (folder / "in.gr").read_bytes() == OLD and listing(folder) == before, how
    assert os.path.islink(folder / "link.gr")


def test_a_new_path_or_another_file_is_written(folder):
    write(folder / "out.gr", inputs=[folder / "in.gr"])
    assert (folder / "out.gr").read_bytes() == b"new" and (folder / "in.gr").read_bytes() == OLD


# ----------------------------------------------------- only regular files or new paths
def make_special(folder, kind: str):
    """A ``kind`` file in ``folder``: chr (a copy of /dev/null's numbers), fifo, socket,
    folder, or a symlink to a chr device; pytest skips what this user may not make."""
    path = folder / f"special-{kind}"
    if kind in ("chr", "link to chr"):
        device = folder / "special-chr" if kind == "link to chr" else path
        try:
            os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except (PermissionError, OSError) as e:
            pytest.skip(f"cannot make a character device here: {e}")
        if kind == "link to chr":
            os.symlink(device, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "folder":
        path.mkdir()
    elif kind == "link to folder":
        (folder / "a-folder").mkdir()
        os.symlink(folder / "a-folder", path)
    elif kind == "link to fifo":
        os.mkfifo(folder / "a-fifo")
        os.symlink(folder / "a-fifo", path)
    return path


SPECIAL = ("chr", "link to chr", "fifo", "link to fifo", "socket", "folder", "link to folder")
KIND_TEST = {"chr": stat.S_ISCHR, "fifo": stat.S_ISFIFO, "socket": stat.S_ISSOCK,
             "folder": stat.S_ISDIR}


def kind_of(path) -> str:
    mode = os.stat(path).st_mode
    return next((k for k, test in KIND_TEST.items() if test(mode)), "regular")


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_device_fifo_socket_or_folder_is_refused(folder, kind):
    path = make_special(folder, kind)
    was, before = kind_of(path), listing(folder)
    with pytest.raises(UnsafeTarget) as caught:
        write(path)
    assert str(path) in str(caught.value) and "only a regular file or a new path" in str(caught.value)
    assert kind_of(path) == was and os.path.islink(path) == kind.startswith("link")
    assert listing(folder) == before                    # no temp file, nothing renamed
    with pytest.raises(UnsafeTarget):
        check_writable(path)                            # the preflight says so before any work


def test_a_symlink_to_a_regular_file_is_written_through(folder):
    os.symlink("in.gr", folder / "link.gr")
    write(folder / "link.gr", b"through the link")
    assert os.path.islink(folder / "link.gr")
    assert (folder / "in.gr").read_bytes() == b"through the link"


def test_a_replaced_file_keeps_its_permissions(folder):
    (folder / "in.gr").chmod(0o640)
    write(folder / "in.gr")
    assert stat.S_IMODE(os.stat(folder / "in.gr").st_mode) == 0o640


def test_a_target_that_becomes_a_device_meanwhile_is_not_replaced(folder):
    target = folder / "late"
    with pytest.raises(UnsafeTarget):
        with atomic_write(target) as f:
            f.write(b"x")
            os.mkfifo(target)                           # made while the save was writing
    assert stat.S_ISFIFO(os.stat(target).st_mode) and listing(folder) == {"in.gr", "late"}


# ------------------------------------------------------------ errors name the target
@pytest.mark.parametrize("where, code, cls", [("fsync", errno.ENOSPC, OSError),
                                              ("fsync", errno.EFBIG, OSError),
                                              ("replace", errno.EACCES, PermissionError),
                                              ("replace", errno.EROFS, OSError)])
def test_errors_name_the_target_and_keep_their_class(folder, monkeypatch, where, code, cls):
    def fail(*args):
        raise OSError(code, os.strerror(code), *([str(a) for a in args] if where == "replace" else []))
    monkeypatch.setattr(atomic.os, where, fail)
    target = folder / "out.bin"
    with pytest.raises(OSError) as caught:
        write(target)
    e = caught.value
    assert type(e) is cls and e.errno == code and e.filename == str(target)
    assert ".tmp" not in str(e) and os.strerror(code) in str(e)
    assert listing(folder) == {"in.gr"}


def test_an_error_about_another_file_keeps_its_name(folder):
    with pytest.raises(FileNotFoundError) as caught:
        with atomic_write(folder / "out.bin") as f:
            f.write(open(folder / "no-such-input", "rb").read())
    assert caught.value.filename == str(folder / "no-such-input")


def test_a_folder_that_refuses_files_names_the_target(tmp_path):
    with pytest.raises(OSError) as caught:
        write("/proc/routelab-test.bin")
    assert caught.value.filename == "/proc/routelab-test.bin" and ".tmp" not in str(caught.value)
    with pytest.raises(FileNotFoundError) as caught:
        check_writable(tmp_path / "no-folder" / "x.bin")
    assert caught.value.filename == str(tmp_path / "no-folder" / "x.bin")


FSIZE_CHILD = textwrap.dedent("""
    import resource, sys
    from app.errors import describe
    from engine.io.atomic import atomic_write
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))   # Python ignores SIGXFSZ
    try:
        with atomic_write(sys.argv[1]) as f:
            f.write(b"x" * 100_000)
    except OSError as e:
        print(type(e).__name__, e.errno, "|", describe(e))
""")


def test_file_too_large_names_the_target(tmp_path):
    target = tmp_path / "big.bin"
    out = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(target)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith(f"OSError {errno.EFBIG} | {target}: file too large"), out
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------- temp files of a killed save
KILLED_CHILD = textwrap.dedent("""
    import os, sys
    from engine.io.atomic import atomic_write
    with atomic_write(sys.argv[1]) as f:
        f.write(b"x" * 4_000_000)
        f.flush()
        os.write(1, b"writing\\n")        # the parent kills it now
        sys.stdin.read()                   # blocks
""")


def temp_files(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path):
    target = tmp_path / "tree.npz"
    target.write_bytes(b"previous")
    child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, str(target)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"writing\n"
        [tmp] = temp_files(tmp_path)
        assert tmp.startswith(f".tree.npz.routelab-{child.pid}-")      # recognisable
        write(target, b"saved while the other save runs")
        assert temp_files(tmp_path) == [tmp]           # a live process's temp file stays
    finally:
        child.kill()
        child.wait(timeout=30)
    assert target.read_bytes() == b"saved while the other save runs"
    assert temp_files(tmp_path) == [tmp] and leftover_temp_files(target) == [tmp_path / tmp]
    write(target)
    assert temp_files(tmp_path) == [] and target.read_bytes() == b"new"


def test_leftovers_of_other_hosts_other_targets_and_young_old_style_ones_stay(tmp_path):
    target = tmp_path / "g.rlh"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    hour_ago = time.time() - 2 * atomic.OLD_TEMP_AGE_S
    names = {f".g.rlh.routelab-{dead}-{atomic.HOST}.abc_123x.tmp": "removed",
             f".g.rlh.routelab-{os.getpid()}-{atomic.HOST}.abc_123x.tmp": "kept (alive)",
             f".g.rlh.routelab-{dead}-{atomic.HOST}x.abc_123x.tmp": "kept (another host)",
             f".g.rlh.x.routelab-{dead}-{atomic.HOST}.abc_123x.tmp": "kept (another target)",
             ".g.rlh.k2j3h4x9.tmp": "removed",                    # an earlier version's, old
             ".g.rlh.a1b2c3d4.tmp": "kept (young)"}
    for name in names:
        (tmp_path / name).write_bytes(b"half")
        if name != ".g.rlh.a1b2c3d4.tmp":
            os.utime(tmp_path / name, (hour_ago, hour_ago))
    write(target)
    left = {n for n in names if (tmp_path / n).exists()}
    assert left == {n for n, fate in names.items() if fate.startswith("kept")}


# ----------------------------------------------------------- the capabilities' preflight
def test_every_output_parameter_is_marked():
    """Every path parameter that names a file to write says so (``output``): the
    command line and the window check those before any work."""
    for cap in capabilities.all_capabilities(hidden=True):
        for p in cap.params:
            if p.file and any(w in p.help for w in ("write", "written")):
                assert p.output, f"{cap.name} {p.cli_flag}"


def test_csp_writes_its_hierarchy_file_only_when_absent(tmp_path):
    csp = capabilities.get("csp")
    p = csp.param("hierarchy_file")
    absent, present = str(tmp_path / "h.rlb"), tmp_path / "there.rlb"
    present.write_bytes(b"x")
    assert p.writes({"hierarchy_file": absent})
    assert not p.writes({"hierarchy_file": str(present)})           # read, not written
    assert not p.writes({"hierarchy_file": absent, "no_bounds": True})   # not used at all


def test_check_outputs_names_both_files(tmp_path):
    tree = capabilities.get("tree")
    gr, h = tmp_path / "g.gr", tmp_path / "h.rlh"
    gr.write_bytes(OLD)
    h.write_bytes(OLD)
    inputs = [("the graph file", str(gr))]
    with pytest.raises(UnsafeTarget, match=r"h\.rlh: it is the --hierarchy file .*h\.rlh"):
        tree.check_outputs({"hierarchy": str(h), "out": str(h)}, inputs)
    with pytest.raises(UnsafeTarget, match="--out names it too"):
        tree.check_outputs({"out": str(tmp_path / "t"), "csv": str(tmp_path / "t")}, inputs)
    tree.check_outputs({"hierarchy": str(h), "out": str(tmp_path / "t.npz")}, inputs)


def test_the_windows_save_jobs_never_write_the_graphs_files(tmp_path):
    from engine.core.backend import cpu_backend
    from engine.core.jobs import JobContext
    from engine.generate.network import generate_road_network
    from engine.workspace import Workspace
    gr = tmp_path / "g.gr"
    gr.write_bytes(OLD)
    os.symlink(gr, tmp_path / "link.gr")
    workspace = Workspace(generate_road_network(100, seed=1), cpu_backend())
    workspace.input_files = (("the graph file", str(gr)),)
    for kind, params in (("cache", {}), ("save_hierarchy", {}),
                         ("export", {"write": lambda: pytest.fail("written")}),
                         ("save_csp_hierarchy", {"minimize": "distance", "budget_metric": "travel_time"})):
        key = "out" if kind == "cache" else "path"
        for target in (gr, tmp_path / "link.gr"):
            with pytest.raises(UnsafeTarget, match="the graph file"):
                capabilities.get(kind).run(workspace, {**params, key: str(target)}, JobContext())
    assert gr.read_bytes() == OLD
    capabilities.get("cache").run(workspace, {"out": str(tmp_path / "g.rlg")}, JobContext())
    assert (tmp_path / "g.rlg").stat().st_size > 0


def test_a_graph_the_window_opens_remembers_its_files_and_siblings(tmp_path):
    from functools import partial
    from engine.capabilities.load import open_files
    from engine.core.backend import cpu_backend
    from engine.core.jobs import JobContext
    gr, sibling = tmp_path / "r-d.NY.gr", tmp_path / "r-t.NY.gr"
    for path in (gr, sibling):
        path.write_text("p sp 3 2\na 1 2 5\na 2 3 7\n")
    files = [str(gr)]
    new = capabilities.get("load").run(cpu_backend(), {"make": partial(open_files, files),
                                                       "files": files}, JobContext())
    assert new.workspace.input_files == (("the graph file", str(gr)),
                                         ("the graph's sibling file", str(sibling)))
    with pytest.raises(UnsafeTarget, match="the graph's sibling file"):
        capabilities.get("cache").run(new.workspace, {"out": str(sibling)}, JobContext())
