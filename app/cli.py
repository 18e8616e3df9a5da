"""Headless commands, built from the capability registry (engine/capabilities): one
subcommand per registered capability, its parameters as arguments.

Node ids on the command line and in the output are the input file's own ids.
``main`` is the one error boundary: any failure is one line on stderr with exit
status 1 (2 for bad usage: an unknown flag, a missing argument), a JSON object
``{"error": ...}`` under --json, a traceback only with --debug.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from contextlib import contextmanager

import numpy as np

from engine import capabilities
from engine.core.jobs import JobContext

from app import errors

BACKENDS = ("auto", "cpu", "gpu")
INT64 = (-2**63, 2**63 - 1)


class UsageError(Exception):
    """The command line does not parse (argparse's complaint, as one line)."""


class BadValue(ValueError):
    """A parameter's value is not of its type: bad input (status 1), not bad usage."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(message)


def command_names() -> list[str]:
    return [c.name for c in capabilities.all_capabilities()]


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; with ``only``, that command's arguments alone (the others'
    choices can need heavy imports: the tree methods load Numba)."""
    p = _Parser(prog="routelab", description="RouteLab headless commands")
    sub = p.add_subparsers(dest="command", required=True)
    for cap in capabilities.all_capabilities():
        sp = sub.add_parser(cap.name, help=cap.help, description=cap.help)
        if only is not None and cap.name != only:
            continue
        sp.add_argument("files", nargs="*" if cap.opens_files else "+",
                        help="the files it opens (see above)" if cap.opens_files
                        else "graph files (DIMACS .gr/.co, OSM, cache)")
        for param in cap.params:
            if param.cli:
                sp.add_argument(param.cli_flag, **_argument(param))
        sp.add_argument("--backend", choices=BACKENDS, default="auto")
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
        sp.add_argument("--no-siblings", action="store_true",
                        help="load only the files named (no -t.gr/.co found beside them)")
        sp.add_argument("--debug", action="store_true", help="print the traceback of an error")
    return p


def _argument(param: capabilities.Param) -> dict:
    kwargs = {"dest": param.name, "default": param.default, "help": param.help}
    if param.type is bool:
        return {**kwargs, "action": "store_true"}
    kwargs.update(required=param.required)
    if param.type is not str:        # numbers are checked after parsing: a bad one is status 1
        kwargs["metavar"] = param.type.__name__.upper()
    if param.choices is not None:
        kwargs["choices"] = param.choice_values()
    if param.node:
        kwargs["metavar"] = "NODE_ID"
    return kwargs


def _checked_value(param: capabilities.Param, value):
    """A number parameter's text as its type; "1e9" is a whole number too."""
    if param.type not in (int, float) or not isinstance(value, str):
        return value
    try:
        number = float(value) if param.type is float else int(value)
    except ValueError:
        number = _whole_number(value)
    if param.type is int and param.node and not INT64[0] <= number <= INT64[1]:
        raise KeyError(f"unknown node id {number} (node ids are 64-bit integers)")
    if param.type is float and not np.isfinite(number):
        raise BadValue(f"{value!r} is not a finite number")
    return number


def _whole_number(text: str) -> int:
    try:
        number = float(text)
    except ValueError:
        raise BadValue(f"{text!r} is not a number") from None
    if not np.isfinite(number) or not number.is_integer():
        raise BadValue(f"{text!r} is not a whole number")
    return int(number)


def parameters(cap, args) -> dict:
    """The capability's parameters from the parsed arguments, numbers checked."""
    params = {}
    for p in cap.params:
        if not p.cli:
            params[p.name] = p.default
            continue
        try:
            params[p.name] = _checked_value(p, getattr(args, p.name))
        except BadValue as e:
            raise BadValue(f"{p.cli_flag}: {e}") from None
    return params


def load_files(files: list[str], siblings: bool):
    """engine.io.load; a sibling file that was skipped because it does not match is
    announced on stderr (one line each), never an error."""
    import warnings
    from engine.io import load
    from engine.io.dimacs import SiblingWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SiblingWarning)
        graph = load(files, siblings=siblings)
    for w in caught:
        if issubclass(w.category, SiblingWarning):
            print(f"routelab: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return graph


def run_capability(cap, args) -> dict:
    """Check every output first (``Capability.check_outputs``: none is an input, a
    device or a FIFO; its folder is writable), then load the graph, run ``cap`` on a
    fresh workspace, return its JSON dict."""
    from engine.capabilities.load import input_files
    from engine.core import backend as backends
    from engine.workspace import Workspace
    params = parameters(cap, args)
    siblings = not getattr(args, "no_siblings", False)
    if cap.opens_files:              # it reads its files itself (engine/capabilities/check.py)
        cap.check_outputs(params, input_files(args.files, siblings))
        params.update(files=list(args.files), siblings=siblings)
        return cap.to_json(None, params, cap.run(None, params, JobContext()))
    inputs = input_files(args.files, siblings)
    cap.check_outputs(params, inputs)     # before any work: no output is an input, a device...
    t0 = time.perf_counter()
    graph = load_files(args.files, siblings=siblings)
    load_seconds = time.perf_counter() - t0
    backend = backends.select(args.backend) if cap.needs_backend else backends.cpu_backend()
    for p in cap.params:
        if p.node and params[p.name] is not None:
            params[p.name] = int(graph.index_of(params[p.name])[0])
    ctx = JobContext(record=_record_printer(cap, args))
    workspace = Workspace(graph, backend)
    workspace.input_files = inputs
    workspace.one_shot = True             # one command, then exit: no warm-ups, no Numba for plain routes
    result = cap.run(workspace, params, ctx)
    return {**cap.to_json(workspace, params, result), "load_seconds": round(load_seconds, 4)}


@contextmanager
def compile_notices():
    """A command that compiles (its first run after an install or an edit) says so on
    stderr, once per kind of code, and how long it took; runs from the cache say nothing
    (engine.core.compilation)."""
    from engine.core.compilation import first_time, watching
    said = set()

    def on_compile(family: str, done: int, name: str) -> None:
        if family not in said:
            said.add(family)
            print(f"routelab: {first_time(family)}…", file=sys.stderr, flush=True)

    with watching(on_compile) as watch:
        yield watch
    if watch.compiled:
        print(f"routelab: compiled {watch.compiled} functions in {watch.seconds:.1f} s; "
              f"later runs load them from the cache", file=sys.stderr, flush=True)


def _record_printer(cap, args):
    if args.json or cap.record_text is None:
        return lambda record: None
    return lambda record: print(cap.record_text(record), flush=True)


def main(argv: list[str]) -> int:
    """Run one command; the error boundary of the command line: any exception becomes one
    line on stderr (``{"error": ...}`` on stdout under --json) and status 1 (2 for bad
    usage), with the traceback only under --debug."""
    command = argv[0] if argv else "routelab"
    as_json, debug = "--json" in argv, "--debug" in argv
    try:
        return _run(argv)
    except BrokenPipeError:          # `routelab ... | head`: the reader stopped reading
        _quiet_stdout()
        return 0
    except UsageError as e:
        return _fail(command, str(e), as_json, status=2)
    except KeyboardInterrupt:
        return _fail(command, "interrupted", as_json, status=130)
    except Exception as e:  # noqa: BLE001 - the boundary: nothing escapes as a traceback
        if debug:
            traceback.print_exc()
        message = errors.describe(e)
        if not errors.is_input_error(e):
            message = f"internal error: {message}" + ("" if debug else " (run with --debug for the traceback)")
        return _fail(command, message, as_json)


def _run(argv: list[str]) -> int:
    args = parser(only=argv[0] if argv and argv[0] in command_names() else None).parse_args(argv)
    cap = capabilities.get(args.command)
    with compile_notices():
        result = run_capability(cap, args)
    if args.json:
        json.dump(result, sys.stdout, default=_json_default)
        print()
    else:
        print(cap.to_text(result))
    sys.stdout.flush()               # a closed pipe shows here, inside the boundary
    return 0


def _fail(command: str, message: str, as_json: bool, status: int = 1) -> int:
    try:
        if as_json:
            print(json.dumps({"error": message}), flush=True)
        else:
            print(f"routelab {command}: {message}", file=sys.stderr, flush=True)
    except BrokenPipeError:
        _quiet_stdout()
    return status


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
