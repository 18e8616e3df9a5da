"""The capability registry: every engine capability the program offers is one entry.

An entry names the capability, its label, its parameters (which become the command
line's arguments and the window's inputs), how it runs on a ``Workspace`` and how its
jobs supersede each other (``policy``, ``lane``). ``app/cli.py`` builds its
subcommands from this registry, and the window builds its menus and dispatches its
engine jobs from it. Capabilities are discovered, not listed: every module of this
package (and of any folder appended to its ``__path__``, and of the
``routelab.capabilities`` entry points) is imported, and registers its own. A new
capability is engine modules + one module here with ``register(Capability(...))`` +
(optionally) one feature folder in ``app/features/``. Hidden capabilities are the
window's own jobs (load a graph, open or save a file): the same job channel, no
command line or menu.
"""
from __future__ import annotations

import errno
import importlib
import importlib.metadata
import os
import pkgutil
import sys
from dataclasses import dataclass
from typing import Any, Callable

PARAM_TYPES = (int, float, str, bool)


@dataclass(frozen=True)
class Param:
    name: str                      # key in the params dict the capability's run receives
    type: type = str               # int, float, str or bool
    default: Any = None
    help: str = ""
    choices: tuple | Callable[[], tuple] | None = None   # a callable is asked lazily
    flag: str = ""                 # command-line flag, default --NAME
    required: bool = False
    node: bool = False             # a node: the file's id on the command line, an internal index in the engine
    file: bool = False             # a path (the window asks with a file dialog)
    cli: bool = True               # False: the window's alone (not a command-line argument)
    output: bool | Callable[[dict], bool] = False   # a path written: True, or whether these params write it

    @property
    def cli_flag(self) -> str:
        return self.flag or f"--{self.name}"

    def writes(self, params: dict) -> bool:
        """Does a run with ``params`` write this (path) parameter's file?"""
        if not params.get(self.name) or not self.output:
            return False
        return bool(self.output(params)) if callable(self.output) else True

    def choice_values(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else (self.choices or ()))


QUEUE = "queue"     # interactive: one job in flight, only the newest of the others waits
CANCEL = "cancel"   # long: a newer job cancels the running one, whose answers are dropped
EVERY = "every"     # every job runs and answers (saves)
POLICIES = (QUEUE, CANCEL, EVERY)


@dataclass(frozen=True)
class Capability:
    name: str                      # command-line subcommand and engine job kind
    label: str                     # what people read: menu text, job label ("Shortest-path tree")
    help: str                      # one line for --help
    params: tuple[Param, ...]
    run: Callable                  # run(workspace, params: dict, ctx: JobContext) -> result
    to_json: Callable | None = None    # to_json(workspace, params, result) -> dict (file ids, raw integers)
    to_text: Callable | None = None    # to_text(json_dict) -> str, what the command line prints
    order: int = 100               # place on the command line and in the menus
    menu: str = "&Tools"           # window menu its action appears in
    menu_text: str = ""            # its menu action's text (default: the label)
    shortcut: str = ""             # window shortcut of its menu action
    policy: str = CANCEL           # how a newer job treats the older ones of its lane
    lane: str = ""                 # jobs that supersede each other (default: its own name)
    hidden: bool = False           # the window's own job: not on the command line or the menus
    makes_graph: bool = False      # run(backend, params, ctx) -> NewGraph: the engine adopts its workspace
    needs_backend: bool = True     # False: runs on the CPU alone (no device is chosen)
    record_text: Callable | None = None   # record_text(record) -> str: progress lines on the command line
    opens_files: bool = False      # the command line loads no graph: run(None, params, ctx) opens
                                   # params["files"] itself (the window: its workspace, no files)

    @property
    def job_lane(self) -> str:
        return self.lane or self.name

    @property
    def action_text(self) -> str:
        return self.menu_text or self.label

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def check_outputs(self, params: dict, inputs=()) -> None:
        """Before any work, refuse (naming both files) every file a run with ``params``
        would write that is one it reads: one of ``inputs`` ((label, path) pairs: the
        graph's files) or a file another parameter names (a hierarchy, a partition, a
        decoder); that exists but is not a regular file (a device, FIFO, socket, folder,
        or a symlink to one); that another output names too; or whose folder is missing
        or not writable (engine.io.atomic.check_writable)."""
        from engine.io.atomic import UnsafeTarget, check_writable, same_file
        writes = [p for p in self.params if p.writes(params)]
        reads = list(inputs) + [
            (f"the {p.cli_flag} file", params[p.name]) for p in self.params
            if all(p is not w for w in writes) and isinstance(params.get(p.name), str)
            and (p.file or os.path.isfile(params[p.name]))]
        for k, p in enumerate(writes):
            check_writable(params[p.name], reads)
            for q in writes[:k]:
                if same_file(params[p.name], params[q.name]):
                    raise UnsafeTarget(params[p.name], f"{q.cli_flag} names it too: give each "
                                                       f"output its own file", errno.EEXIST)


_registry: dict[str, Capability] = {}


def register(capability: Capability) -> Capability:
    """Add (or replace) a capability; returns it so modules can keep a handle."""
    for p in capability.params:
        if p.type not in PARAM_TYPES:
            raise TypeError(f"{capability.name}.{p.name}: parameter type {p.type!r} "
                            f"is not one of int, float, str, bool")
    if capability.policy not in POLICIES:
        raise ValueError(f"{capability.name}: policy {capability.policy!r} is not one of "
                         f"{', '.join(POLICIES)}")
    if not capability.hidden and (capability.to_json is None or capability.to_text is None):
        raise ValueError(f"{capability.name}: a capability on the command line needs to_json "
                         f"and to_text")
    _registry[capability.name] = capability
    return capability


def unregister(name: str) -> None:
    _registry.pop(name, None)


def get(name: str) -> Capability:
    discover()
    try:
        return _registry[name]
    except KeyError:
        raise KeyError(f"unknown capability {name!r}; known: {', '.join(_registry)}") from None


def all_capabilities(hidden: bool = False) -> list[Capability]:
    """Every registered capability in the order of their ``order`` (then their names);
    the hidden ones (the window's own jobs) only when asked for."""
    discover()
    return sorted((c for c in _registry.values() if hidden or not c.hidden),
                  key=lambda c: (c.order, c.name))


ENTRY_POINT_GROUP = "routelab.capabilities"
_entry_points_loaded = False


def discover() -> None:
    """Import every module on this package's ``__path__`` not imported yet (each one
    registers its capabilities; a folder appended to ``__path__`` is scanned too), and
    once, the modules named by the ``routelab.capabilities`` entry points of installed
    distributions."""
    global _entry_points_loaded
    for module in pkgutil.iter_modules(__path__, __name__ + "."):
        if module.name not in sys.modules and not module.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(module.name)
    if not _entry_points_loaded:
        _entry_points_loaded = True
        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            entry.load()
