"""The ``routelab`` entry point: headless sub-commands, or the window.

``routelab [FILE...] [--backend B]`` opens the window; ``routelab info|route ...``
runs headless (see app/cli.py) and never imports Qt.
"""
from __future__ import annotations

import argparse
import sys

from app import cli


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in cli.command_names():
        return cli.main(argv)
    parser = argparse.ArgumentParser(
        prog="routelab", description="Route planning on road networks. Opens the window; "
        f"sub-commands {', '.join(cli.command_names())} run headless (routelab COMMAND -h).")
    parser.add_argument("files", nargs="*", help="graph files to open (DIMACS .gr/.co, OSM, cache)")
    parser.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    args = parser.parse_args(argv)
    from app.window import problem, run_window  # Qt is imported only by run_window
    why_not = problem()
    if why_not:
        print(f"routelab: {why_not}", file=sys.stderr)
        return 1
    return run_window(args.files, backend=args.backend)


if __name__ == "__main__":
    sys.exit(main())
