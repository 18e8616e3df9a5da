"""Where a GPU cost-budgeted query's time goes outside the labeling kernel (development
aid): cProfile over NY's Q1 set on the bi-criteria hierarchy, after one warm-up round.
    python scripts/csp_profile.py [set]"""
import cProfile
import json
import os
import pstats
import sys

sys.path[:0] = ["."]
from engine.backend import gpu_backend  # noqa: E402
from engine.csp import CspQuery  # noqa: E402
from engine.csp.pareto_hierarchy import build_pareto_hierarchy  # noqa: E402
from engine.csp.query_sets import internal_queries  # noqa: E402
from engine.io import load  # noqa: E402

data = os.environ.get("ROUTELAB_DATA", "../shared/data")
g = load([f"{data}/dimacs/USA-road-d.NY.gr.gz"])
sets = json.load(open("tests/data/csp_ny_queries.json"))
h = build_pareto_hierarchy(g, g.metrics["distance"], g.metrics["travel_time"])
q = CspQuery(g, backend=gpu_backend(), hierarchy=h)
queries = internal_queries(g, sets, sys.argv[1] if len(sys.argv) > 1 else "Q1")
for s, t, b in queries:
    q.solve(s, t, b)
profile = cProfile.Profile()
profile.enable()
for s, t, b in queries:
    q.solve(s, t, b)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(25)
