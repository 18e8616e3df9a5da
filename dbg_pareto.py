import sys, json; sys.path.insert(0,'.')
from engine.backend import gpu_backend, cpu_backend
from engine.csp import CspQuery
from engine.csp.query_sets import internal_queries
from engine.io import load
g = load([".data/dimacs/USA-road-d.NY.gr.gz"])
stored = json.load(open("tests/data/csp_ny_queries.json"))
gpu = gpu_backend()
qs = [q for q in internal_queries(g, stored, "Q1") if q[0] == 251155 and q[1] == 19283]
s, t, b = qs[0]
print("query", s, t, b, "reference", [x["reference"] for x in stored["sets"]["Q1"] if x["source"] == 251156 and x["target"] == 19284])
cpu = CspQuery(g, backend=cpu_backend())
p = cpu.solve(s, t, b, pareto=True); print("cpu pareto", [(x.length, x.cost) for x in p.pareto][:6], len(p.pareto))
for opts in ({}, {"max_labels": 3_000_000}, {"chain": 0}, {"blocks": 1}, {"blocks": 1, "chain": 0, "threads": 32}):
    q = CspQuery(g, backend=gpu, **opts)
    for rep in range(2):
        try:
            r = q.solve(s, t, b, pareto=True)
            print(opts, rep, [(x.length, x.cost) for x in r.pareto][:6], len(r.pareto), r.stats["created"])
        except Exception as e:
            print(opts, "error", e)
