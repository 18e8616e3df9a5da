"""Quick GPU probe for cost-budgeted paths (development aid): NY query sets, GPU vs CPU
twin, times and iteration counts per query.
    python scripts/csp_gpu_probe.py [per_set] ['{"max_labels": 3000000, "adaptive": false}']
(the options, as JSON, go to CspQuery)."""
import json, sys, time
import numpy as np
sys.path.insert(0, ".")
from engine.backend import cpu_backend, gpu_backend
from engine.csp import CspQuery
from engine.csp.query_sets import build_query_sets, internal_queries
from engine.io import load
import os
data = os.environ.get("ROUTELAB_DATA", "../shared/data")
per = int(sys.argv[1]) if len(sys.argv) > 1 else 5
opts = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
g = load([f"{data}/dimacs/USA-road-d.NY.gr.gz"])
t0 = time.perf_counter(); sets = build_query_sets(g, "distance", "travel_time", seed=0, per_set=per)
print(f"sets {time.perf_counter()-t0:.1f}s", flush=True)
gpu = gpu_backend()
t0 = time.perf_counter(); q = CspQuery(g, backend=gpu, **opts); print(f"prep {time.perf_counter()-t0:.2f}s", flush=True)
cpu = CspQuery(g, backend=cpu_backend())
s, t, b = internal_queries(g, sets, "Q1")[0]; q.solve(s, t, b); q.solve(s, t, b, pareto=True)
for name in ("Q1", "Q2", "Q3"):
    rows = []
    for s, t, b in internal_queries(g, sets, name):
        try:
            r = q.solve(s, t, b)
        except Exception as e:
            print(name, "error", e); continue
        c = cpu.solve(s, t, b) if os.environ.get("CPU") else r
        ok = r.length == c.length and r.cost <= b
        rows.append((r.ms["total"], r.ms["bounds"], c.ms["total"], r.stats.get("iterations", 0), r.stats["created"], c.stats["created"], ok, r.answered_by))
        print(name, f"kernel {q.gpu.labeling.kernel_ms:.2f} us/it {1000*q.gpu.labeling.kernel_ms/max(1,r.stats.get('iterations',1)):.1f} gpu {r.ms['total']:.2f} (bounds {r.ms['bounds']:.2f}) cpu {c.ms['total']:.1f} it {r.stats.get('iterations',0)} created {r.stats['created']} cpu_created {c.stats['created']} ok {ok} {r.answered_by}", flush=True)
    a = np.array([x[0] for x in rows]); print(name, "median gpu", np.median(a), "cpu", np.median([x[2] for x in rows]), "all ok", all(x[6] for x in rows), flush=True)
