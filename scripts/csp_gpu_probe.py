"""Quick GPU probe for cost-budgeted paths (development aid): NY query sets, GPU vs CPU
twin, times, iterations and labels per query, for one or more option sets.
    python scripts/csp_gpu_probe.py [per_set] ['{"max_labels": 3000000}' ...]
(each JSON object goes to CspQuery; SETS=Q3 limits the sets, CPU=1 runs the twin too)."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from engine.backend import cpu_backend, gpu_backend  # noqa: E402
from engine.csp import CspQuery  # noqa: E402
from engine.csp.label_gpu import AT  # noqa: E402
from engine.csp.query_sets import build_query_sets, internal_queries  # noqa: E402
from engine.io import load  # noqa: E402

data = os.environ.get("ROUTELAB_DATA", "../shared/data")
per = int(sys.argv[1]) if len(sys.argv) > 1 else 5
variants = [json.loads(a) for a in sys.argv[2:]] or [{}]
names = os.environ.get("SETS", "Q1,Q2,Q3").split(",")
g = load([f"{data}/dimacs/USA-road-d.NY.gr.gz"])
t0 = time.perf_counter()
sets = build_query_sets(g, "distance", "travel_time", seed=0, per_set=per)
print(f"sets {time.perf_counter() - t0:.1f}s", flush=True)
gpu = gpu_backend()
cpu = CspQuery(g, backend=cpu_backend()) if os.environ.get("CPU") else None
for opts in variants:
    q = CspQuery(g, backend=gpu, **opts)
    s, t, b = internal_queries(g, sets, "Q1")[0]
    q.solve(s, t, b)
    q.solve(s, t, b, pareto=True)
    for name in names:
        rows = []
        for s, t, b in internal_queries(g, sets, name):
            try:
                r = q.solve(s, t, b)
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                print(name, "error", e)
                continue
            c = cpu.solve(s, t, b) if cpu else r
            ok = r.length == c.length and r.cost <= b
            ctl = q.gpu.labeling.ctl_host
            rows.append((r.ms["total"], c.ms["total"], ok))
            print(f"{name} gpu {r.ms['total']:.2f} ms (bounds {r.ms['bounds']:.2f}, kernel "
                  f"{q.gpu.labeling.kernel_ms:.2f}) cpu {c.ms['total']:.1f} it "
                  f"{r.stats.get('iterations', 0)} splits {int(ctl[AT['splits']])} created "
                  f"{r.stats['created']} expanded {r.stats['settled']} cpu_created "
                  f"{c.stats['created']} ok {ok} {r.answered_by}", flush=True)
        print(opts, name, "median gpu", np.median([x[0] for x in rows]), "cpu",
              np.median([x[1] for x in rows]), "all ok", all(x[2] for x in rows), flush=True)
