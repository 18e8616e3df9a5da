"""How long a hierarchy file takes to open, four times in one process (the first load
of a file runs its witness check; a later one of the untouched file skips it:
engine/io/proven.py):

    python scripts/hierarchy_load.py HIERARCHY.rlh GRAPH_FILE...
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root

from engine.ch.hierarchy import Hierarchy  # noqa: E402
from engine.io import load  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    graph = load(argv[1:])
    times = []
    for _ in range(4):
        t0 = time.perf_counter()
        h = Hierarchy.load(argv[0], graph)
        times.append(time.perf_counter() - t0)
    print(f"{argv[0]}: " + ", ".join(f"{t:.2f} s" for t in times) + f" ({h.proof.text()})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
