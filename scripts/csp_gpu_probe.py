"""Quick GPU probe for cost-budgeted paths (development aid): NY query sets, GPU vs CPU
twin, times, iterations and labels per query, for one or more option sets.
    python scripts/csp_gpu_probe.py [per_set] ['{"max_labels": 3000000}' ...]
(each JSON object goes to CspQuery; SETS=Q3 limits the sets, CPU=1 runs the twin too).
The sets are tests/data/csp_ny_queries.json (the first per_set of each), whose stored
answers check every GPU length; per iteration: the labeling kernels' time over the
iterations (passes), the figure that decides the GPU's speed on NY."""
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
stored = "tests/data/csp_ny_queries.json"
if os.path.exists(stored):                  # Vine's sets as the tests and bench read them
    sets = json.load(open(stored))
    sets["sets"] = {k: v[:per] for k, v in sets["sets"].items()}
else:
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
        refs = [x.get("reference", {}).get("length") for x in sets["sets"][name]]
        for (s, t, b), ref in zip(internal_queries(g, sets, name), refs):
            try:
                r = q.solve(s, t, b)
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                print(name, "error", e)
                continue
            c = cpu.solve(s, t, b) if cpu else r
            ok = r.length == (c.length if cpu or ref is None else ref) and r.cost <= b
            ctl = q.gpu.labeling.ctl_host
            iters = max(1, r.stats.get("iterations", 0))
            rows.append((r.ms["total"], c.ms["total"], ok, q.gpu.labeling.kernel_ms * 1000 / iters,
                         r.stats["created"], iters))
            print(f"{name} gpu {r.ms['total']:.2f} ms (bounds {r.ms['bounds']:.2f}, kernel "
                  f"{q.gpu.labeling.kernel_ms:.2f}) cpu {c.ms['total']:.1f} it "
                  f"{r.stats.get('iterations', 0)} splits {int(ctl[AT['splits']])} created "
                  f"{r.stats['created']} expanded {r.stats['settled']} cpu_created "
                  f"{c.stats['created']} ok {ok} {r.answered_by}", flush=True)
        if not rows:
            continue
        med = np.median(np.array([x[:2] + x[3:] for x in rows]), axis=0)
        twin = f", cpu {med[1]:.1f} ms" if cpu else ""
        print(f"{opts} {name} median gpu {med[0]:.2f} ms{twin}, per iteration "
              f"{med[2]:.1f} us, created {med[3]:.0f}, iterations {med[4]:.0f}; "
              f"p90 gpu {np.percentile([x[0] for x in rows], 90):.2f}; "
              f"all ok {all(x[2] for x in rows)}", flush=True)
