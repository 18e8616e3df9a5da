"""Build Vine's query sets (Q1, Q2, Q3) for cost-budgeted paths and write them as JSON.

    python scripts/csp_queries.py FILE... --out Q.json [--length distance]
        [--cost travel_time|synthetic] [--seed 0] [--per-set 20] [--reference [--compiled]]
        [--reference-sets Q1,Q2,Q3]

With --reference every query also gets its answer by the pure-Python reference
(engine/csp/reference.py), computed once here: slow on large graphs (NY Q1: about
20 s per query, up to minutes); --compiled runs the same plain search in Numba
(NY Q1: about 1 s per query).

The logic is engine/csp/query_sets.py; tests and scripts/bench.py read the file.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.csp.query_sets import add_reference_answers, build_query_sets  # noqa: E402
from engine.io import load  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path, help="graph file(s), as `routelab` loads them")
    p.add_argument("--out", type=Path, required=True, help="JSON file to write")
    p.add_argument("--length", default=None,
                   help="metric to minimize (default: distance, else the graph's first)")
    p.add_argument("--cost", default="travel_time",
                   help="budget metric, or 'synthetic' for a deterministic made-up travel time")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-set", type=int, default=20)
    p.add_argument("--reference", action="store_true",
                   help="add each query's answer by the pure-Python reference search")
    p.add_argument("--compiled", action="store_true",
                   help="with --reference: the compiled twin of the reference search")
    p.add_argument("--reference-sets", default="Q1,Q2,Q3", help="the sets to answer")
    args = p.parse_args(argv)
    graph = load(args.files)
    sets = build_query_sets(graph, args.length, args.cost, args.seed, args.per_set)
    if args.reference:
        add_reference_answers(graph, sets, lambda name, q: print(
            f"{name} {q['source']}->{q['target']}: {q['reference']}", flush=True),
            names=args.reference_sets.split(","), compiled=args.compiled)
    args.out.write_text(json.dumps(sets, indent=1) + "\n")
    sizes = ", ".join(f"{k}: {len(v)}" for k, v in sets["sets"].items())
    print(f"{args.out}: {sizes} (diameter estimate {sets['diameter']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
