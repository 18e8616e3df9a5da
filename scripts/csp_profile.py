"""Where a GPU cost-budgeted query's time goes outside the labeling kernel (development
aid), NY on the bi-criteria hierarchy, after one warm-up round:
    python scripts/csp_profile.py [set]            cProfile of the host side
    PHASES=1 python scripts/csp_profile.py [set]   each step's median ms, the device
                                                   synchronised around it (inclusive:
                                                   nested steps count in their callers)"""
import cProfile
import json
import os
import pstats
import sys
import time
from collections import defaultdict

import numpy as np

sys.path[:0] = ["."]
from engine.core.backend import gpu_backend  # noqa: E402
from engine.csp import CspQuery  # noqa: E402
from engine.csp.hierarchy.file import load_pareto_hierarchy  # noqa: E402
from engine.csp.hierarchy.build import build_pareto_hierarchy  # noqa: E402
from engine.csp.query_sets import internal_queries  # noqa: E402
from engine.io import load  # noqa: E402

STEPS = [("engine.csp.bounds.gpu", "GpuBounds", "run"),
         ("engine.csp.query.gpu", "GpuSearch", "solve"),
         ("engine.csp.query.gpu", "GpuSearch", "_down_set"),
         ("engine.csp.query.gpu", "GpuSearch", "_lift"),
         ("engine.csp.query.gpu", "GpuSearch", "_labeling"),
         ("engine.csp.query.gpu", "GpuSearch", "_references"),
         ("engine.csp.query.gpu", "GpuSearch", "_answer"),
         ("engine.csp.labeling.gpu", "GpuLabeling", "solve"),
         ("engine.csp.labeling.gpu", "GpuLabeling", "_outcome"),
         ("engine.csp.query.budgeted", "CspQuery", "label_path"),
         ("engine.csp.query.budgeted", "CspQuery", "result"),
         ("engine.csp.query.budgeted", "CspQuery", "base")]


def time_steps(backend, spent):
    """Wraps each step to add its synchronised wall time (ms) to spent[name]."""
    import importlib
    for module, cls, name in STEPS:
        owner = getattr(importlib.import_module(module), cls)
        plain = getattr(owner, name)

        def timed(*a, _plain=plain, _key=f"{cls}.{name}", **k):
            backend.synchronize()
            t0 = time.perf_counter()
            try:
                return _plain(*a, **k)
            finally:
                backend.synchronize()
                spent[_key][-1] += (time.perf_counter() - t0) * 1000
        setattr(owner, name, timed)


data = os.environ.get("ROUTELAB_DATA", "../shared/data")
g = load([f"{data}/dimacs/USA-road-d.NY.gr.gz"])
sets = json.load(open("tests/data/csp_ny_queries.json"))
if os.path.exists(os.environ.get("HIERARCHY_FILE", "")):     # a saved .rlb, else built
    h = load_pareto_hierarchy(os.environ["HIERARCHY_FILE"], g, "distance", "travel_time")
else:
    h = build_pareto_hierarchy(g, g.metrics["distance"], g.metrics["travel_time"])
backend = gpu_backend()
q = CspQuery(g, backend=backend, hierarchy=h)
queries = internal_queries(g, sets, sys.argv[1] if len(sys.argv) > 1 else "Q1")
for s, t, b in queries:
    q.solve(s, t, b)
if os.environ.get("PHASES"):
    spent = defaultdict(list)
    time_steps(backend, spent)
    for s, t, b in queries:
        for key in [f"{c}.{n}" for _, c, n in STEPS]:
            spent[key].append(0.0)
        q.solve(s, t, b)
    for key, ms in spent.items():
        print(f"{key:28s} median {np.median(ms):7.3f} ms  mean {np.mean(ms):7.3f} ms")
    sys.exit()
profile = cProfile.Profile()
profile.enable()
for s, t, b in queries:
    q.solve(s, t, b)
profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(25)
