"""The capability registry: every engine capability the program offers is one entry.

An entry names the capability, its label, its parameters (which become the command
line's arguments and the window's inputs), what it returns, and how it runs on a
``Workspace``. ``app/cli.py`` builds its subcommands from this registry, and the
window builds its menus and dispatches its engine jobs from it; a new capability is
engine modules + ``register(Capability(...))`` + (optionally) one app controller.
"""
from __future__ import annotations

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

    @property
    def cli_flag(self) -> str:
        return self.flag or f"--{self.name}"

    def choice_values(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else (self.choices or ()))


@dataclass(frozen=True)
class Capability:
    name: str                      # command-line subcommand and engine job kind
    label: str                     # menu text, e.g. "Shortest-path tree"
    help: str                      # one line for --help
    params: tuple[Param, ...]
    run: Callable                  # run(workspace, params: dict, ctx: JobContext) -> result
    result_kind: str               # "route", "tree", "hierarchy", "comparison", "report"
    to_json: Callable              # to_json(workspace, params, result) -> dict (file ids, raw integers)
    to_text: Callable              # to_text(json_dict) -> str, what the command line prints
    menu: str = ""                 # window menu it appears in; "" keeps it off the menus
    shortcut: str = ""             # window shortcut of its menu action
    needs_backend: bool = True     # False: runs on the CPU alone (no device is chosen)
    record_text: Callable | None = None   # record_text(record) -> str: progress lines on the command line

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}


_registry: dict[str, Capability] = {}


def register(capability: Capability) -> Capability:
    """Add (or replace) a capability; returns it so modules can keep a handle."""
    for p in capability.params:
        if p.type not in PARAM_TYPES:
            raise TypeError(f"{capability.name}.{p.name}: parameter type {p.type!r} "
                            f"is not one of int, float, str, bool")
    _registry[capability.name] = capability
    return capability


def unregister(name: str) -> None:
    _registry.pop(name, None)


def get(name: str) -> Capability:
    _load_builtins()
    try:
        return _registry[name]
    except KeyError:
        raise KeyError(f"unknown capability {name!r}; known: {', '.join(_registry)}") from None


BUILTINS = ("info", "route", "tree", "compare", "contract", "partition", "customize", "csp",
            "isochrone")


def all_capabilities() -> list[Capability]:
    """Every registered capability: the built-ins in a fixed order, then the others in
    registration order (whichever module happened to be imported first)."""
    _load_builtins()
    rank = {name: i for i, name in enumerate(BUILTINS)}
    return sorted(_registry.values(), key=lambda c: rank.get(c.name, len(rank)))


_builtins_loaded = False


def _load_builtins() -> None:
    """Import the built-in entries once (each module registers itself)."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        from engine.capabilities import (info, route, tree, compare, contract,  # noqa: F401
                                         partition, customize, csp, isochrone)  # (BUILTINS)
