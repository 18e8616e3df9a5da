#!/usr/bin/env python3
"""RouteLab benchmarks: every speed figure the project claims comes from here.

    python scripts/bench.py                      # all sections, print the tables
    python scripts/bench.py --only load --write  # one section, also into docs/benchmarks.md

Each section prints a Markdown table; ``--write`` replaces that section in
docs/benchmarks.md (between ``<!-- bench:NAME -->`` markers) with the table, the
command, the machine and the date, so figures from different machines coexist.
Targets are listed beside each figure; they are goals, not test assertions.
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks import SECTIONS  # noqa: E402
from benchmarks.common import DOC, machine  # noqa: E402


# ----------------------------------------------------------------- output
def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def write_section(doc: Path, name: str, body: str) -> None:
    doc.parent.mkdir(exist_ok=True)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\nEvery figure here was produced by `scripts/bench.py`; each section says how, where and when.\n"
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    parser.add_argument("--write", action="store_true", help="also write the sections into docs/benchmarks.md")
    parser.add_argument("--doc", type=Path, default=DOC, help="the Markdown file --write updates")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    command = "python scripts/bench.py --only " + ",".join(names) + (" --write" if args.write else "")
    for name in names:
        title, run = SECTIONS[name]
        header, rows = run()
        body = (f"## {title}\n\n{table(header, rows)}\n\n"
                f"Command: `{command}` · machine: {machine()} · "
                f"date: {dt.date.today().isoformat()}\n")
        print(body)
        if args.write:
            write_section(args.doc, name, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
