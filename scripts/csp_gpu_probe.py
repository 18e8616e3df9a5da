"""Quick GPU probe for cost-budgeted paths (development aid): NY query sets, GPU vs CPU
twin, times, iterations and labels per query, for one or more option sets.
    python scripts/csp_gpu_probe.py [per_set] ['{"max_labels": 3000000}' ...]
(each JSON object goes to CspQuery, e.g. '{"lagrangian": "always"}', and
'{"hierarchy": true}' builds the bi-criteria hierarchy once for it, or loads the .rlb
file HIERARCHY_FILE names when it exists, '{"hierarchy": {"core_fraction": 0.005}}'
builds one with those options; SETS=Q3 limits the
sets, CPU=1 runs the twin too, GRAPH=2m takes the generated 2 M graph and its sets,
which store no answers, PASSES=1 prints the passes' durations by kind and size).
The sets are tests/data/csp_ny_queries.json (the first per_set of each), whose stored
answers check every GPU length; per iteration: the labeling kernels' time over the
iterations (passes), the figure that decides the GPU's speed on NY."""
import json
import os
import sys

import numpy as np

sys.path[:0] = [".", "scripts"]
from benchmarks.csp import GENERATED_SETS, NY_SETS, stored_query_sets  # noqa: E402
from engine.core.backend import cpu_backend, gpu_backend  # noqa: E402
from engine.csp import CspQuery  # noqa: E402
from engine.csp.labeling.gpu import AT  # noqa: E402
from engine.csp.query_sets import internal_queries  # noqa: E402
from engine.io import load  # noqa: E402

data = os.environ.get("ROUTELAB_DATA", "../shared/data")
per = int(sys.argv[1]) if len(sys.argv) > 1 else 5
variants = [json.loads(a) for a in sys.argv[2:]] or [{}]
names = os.environ.get("SETS", "Q1,Q2,Q3").split(",")
if os.environ.get("GRAPH") == "2m":
    from engine.generate.network import generate_road_network
    g = generate_road_network(2_000_000, seed=1)
    sets = stored_query_sets(g, GENERATED_SETS)
else:
    g = load([f"{data}/dimacs/USA-road-d.NY.gr.gz"])
    sets = stored_query_sets(g, NY_SETS)      # as the tests and the bench read them
sets["sets"] = {k: v[:per] for k, v in sets["sets"].items()}
gpu = gpu_backend()
cpu = CspQuery(g, backend=cpu_backend()) if os.environ.get("CPU") else None
if cpu:                                       # compiled once, untimed
    cpu.solve(*internal_queries(g, sets, "Q1")[0])
EDGES = (0, 8, 64, 512, 4096, 1 << 62)


def pass_profile(history, columns, into):
    """Adds each pass's duration (from the end times in the history) to its bucket:
    split passes by themselves (sized by the frontier), expand passes by labels expanded.
    A restart's LARAC lies between two passes and lands in the first pass after it."""
    h = np.asarray(history)
    if len(h) < 2:
        return
    col = {c: h[1:, columns.index(c)] for c in ("expanded", "split", "frontier", "created")}
    took = np.diff(h[:, columns.index("ns")]) / 1000.0
    splits = col["split"] == 1
    for kind, pick, size in [("split", splits, col["frontier"])] + [
            (lo, ~splits & (col["expanded"] >= lo) & (col["expanded"] < hi), col["expanded"])
            for lo, hi in zip(EDGES, EDGES[1:])]:
        into.setdefault(kind, []).extend(zip(took[pick], size[pick], col["created"][pick]))


def print_profile(passes):
    for kind, rows in passes.items():
        if not rows:
            continue
        took, size, created = np.array(rows, dtype=np.float64).T
        what = "split passes" if kind == "split" else f"expand passes >= {kind} labels"
        print(f"  {what}: {len(rows)}, mean {took.mean():.1f} us, sum {took.sum() / 1000:.1f} "
              f"ms, mean size {size.mean():.0f}, created per pass {created.mean():.0f}")


hierarchies = {}
for opts in variants:
    shown = dict(opts)
    build = opts.pop("hierarchy", False)          # true, or the builder's options: built once
    if build:
        key = json.dumps(build, sort_keys=True)
        saved = os.environ.get("HIERARCHY_FILE", "")
        if build is True and key not in hierarchies and os.path.exists(saved):
            from engine.csp.hierarchy.file import load_pareto_hierarchy
            hierarchies[key] = load_pareto_hierarchy(saved, g, "distance", "travel_time")
        if key not in hierarchies:
            from engine.csp.hierarchy.build import pareto_hierarchy_for
            options = build if isinstance(build, dict) else {}
            h = hierarchies[key] = pareto_hierarchy_for(g, "distance", "travel_time", **options)
            print(f"bi-criteria hierarchy {key}: {h.build_ms:.0f} ms, core "
                  f"{int(h.core.sum())} nodes, {h.num_levels} levels, "
                  f"{h.num_shortcuts} shortcuts", flush=True)
        opts["hierarchy"] = hierarchies[key]
    q = CspQuery(g, backend=gpu, **opts)
    s, t, b = internal_queries(g, sets, "Q1")[0]
    q.solve(s, t, b)
    q.solve(s, t, b, pareto=True)
    for name in names:
        rows, passes = [], {}
        refs = [x.get("reference", {}).get("length") for x in sets["sets"][name]]
        for (s, t, b), ref in zip(internal_queries(g, sets, name), refs):
            try:
                r = q.solve(s, t, b)
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                print(name, "error", e)
                continue
            if r.history is not None and os.environ.get("PASSES"):
                pass_profile(r.history, r.history_columns, passes)
            c = cpu.solve(s, t, b) if cpu else None
            expected = c.length if c else ref           # None: nothing to check against
            ok = None if expected is None else r.length == expected and r.cost <= b
            iters = r.stats.get("iterations", 0)
            # the kernels' time is the last labeling's: none ran for an answer by the bounds
            kernel_ms = q.gpu.labeling.kernel_ms if r.answered_by != "bounds" else 0.0
            rows.append(dict(gpu=r.ms["total"], bounds=r.ms["bounds"],
                             cpu=c.ms["total"] if c else np.nan, ok=ok,
                             per_iteration=kernel_ms * 1000 / iters if iters else np.nan,
                             created=r.stats["created"], iterations=iters))
            twin = f" cpu {c.ms['total']:.1f} cpu_created {c.stats['created']}" if c else ""
            splits = int(q.gpu.labeling.ctl_host[AT["splits"]])
            print(f"{name} gpu {r.ms['total']:.2f} ms (bounds {r.ms['bounds']:.2f}, kernel "
                  f"{kernel_ms:.2f}) it {iters} splits {splits} created {r.stats['created']} "
                  f"expanded {r.stats['settled']}{twin} ok {ok} {r.answered_by} lagrangian "
                  f"{r.lagrangian}", flush=True)
        if not rows:
            continue
        print_profile(passes)
        keys = ["gpu", "bounds", "per_iteration", "created", "iterations"] + \
            (["cpu"] if cpu else [])
        med = {k: np.nanmedian([row[k] for row in rows]) for k in keys}
        checked = [row["ok"] for row in rows if row["ok"] is not None]
        twin = f", cpu {med['cpu']:.1f} ms" if cpu else ""
        print(f"{shown} {name} median gpu {med['gpu']:.2f} ms (bounds {med['bounds']:.2f})"
              f"{twin}, per iteration "
              f"{med['per_iteration']:.1f} us, created {med['created']:.0f}, iterations "
              f"{med['iterations']:.0f}; "
              f"p90 gpu {np.percentile([row['gpu'] for row in rows], 90):.2f}; "
              f"{len(checked)} checked, all ok {all(checked)}", flush=True)
