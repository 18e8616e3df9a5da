"""Headless commands, built from the capability registry (engine/capabilities): one
subcommand per registered capability, its parameters as arguments.

Node ids on the command line and in the output are the input file's own ids.
Errors go to stderr with exit status 1 (bad input) or 2 (bad usage).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from engine import capabilities
from engine.jobs import JobContext

BACKENDS = ("auto", "cpu", "gpu")


def command_names() -> list[str]:
    return [c.name for c in capabilities.all_capabilities()]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="routelab", description="RouteLab headless commands")
    sub = p.add_subparsers(dest="command", required=True)
    for cap in capabilities.all_capabilities():
        sp = sub.add_parser(cap.name, help=cap.help, description=cap.help)
        sp.add_argument("files", nargs="+", help="graph files (DIMACS .gr/.co, OSM, cache)")
        for param in cap.params:
            sp.add_argument(param.cli_flag, **_argument(param))
        sp.add_argument("--backend", choices=BACKENDS, default="auto")
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def _argument(param: capabilities.Param) -> dict:
    kwargs = {"dest": param.name, "default": param.default, "help": param.help}
    if param.type is bool:
        return {**kwargs, "action": "store_true"}
    kwargs.update(type=param.type, required=param.required)
    if param.choices is not None:
        kwargs["choices"] = param.choice_values()
    if param.node:
        kwargs["metavar"] = "NODE_ID"
    return kwargs


def run_capability(cap, args) -> dict:
    """Load the graph, run ``cap`` on a fresh workspace, return its JSON dict."""
    from engine import backend as backends
    from engine.io import load
    from engine.workspace import Workspace
    t0 = time.perf_counter()
    graph = load(args.files)
    load_seconds = time.perf_counter() - t0
    backend = backends.select(args.backend) if cap.needs_backend else backends.cpu_backend()
    params = {p.name: getattr(args, p.name) for p in cap.params}
    for p in cap.params:
        if p.node and params[p.name] is not None:
            params[p.name] = int(graph.index_of(params[p.name])[0])
    ctx = JobContext(record=_record_printer(cap, args))
    workspace = Workspace(graph, backend)
    result = cap.run(workspace, params, ctx)
    return {**cap.to_json(workspace, params, result), "load_seconds": round(load_seconds, 4)}


def _record_printer(cap, args):
    if args.json or cap.record_text is None:
        return lambda record: None
    return lambda record: print(cap.record_text(record), flush=True)


def main(argv: list[str]) -> int:
    from engine.backend import BackendError
    from engine.io import LoadError
    from engine.paths import Unreachable

    args = parser().parse_args(argv)
    cap = capabilities.get(args.command)
    try:
        result = run_capability(cap, args)
    except (LoadError, BackendError, Unreachable, ValueError) as e:
        print(f"routelab {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyError as e:  # unknown node id or metric
        print(f"routelab {args.command}: {e.args[0]}", file=sys.stderr)
        return 1
    except OSError as e:   # e.g. --out in a folder that does not exist
        print(f"routelab {args.command}: {e}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(result, sys.stdout, default=_json_default)
        print()
    else:
        print(cap.to_text(result))
    return 0


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
