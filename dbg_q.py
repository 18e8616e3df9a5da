import sys, json; sys.path.insert(0,'.')
from engine.backend import gpu_backend
from engine.csp import CspQuery
from engine.csp.query_sets import internal_queries
from engine.io import load
g = load([".data/dimacs/USA-road-d.NY.gr.gz"])
stored = json.load(open("tests/data/csp_ny_queries.json"))
gpu = gpu_backend()
q = CspQuery(g, backend=gpu)
bad = 0
for name in ("Q1", "Q2", "Q3"):
    for item, (s, t, b) in zip(stored["sets"][name], internal_queries(g, stored, name)):
        for rep in range(3):
            r = q.solve(s, t, b)
            if r.length != item["reference"]["length"]:
                bad += 1; print("WRONG", name, s, t, b, rep, r.length, item["reference"], r.answered_by, r.stats)
print("bad", bad)
