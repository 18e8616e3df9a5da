"""The continental run of issue #37: the acceptance table's compute figures on one
generated network of ROUTELAB_CONTINENTAL nodes (default 1 M; 24 M on the GPU host).

    ROUTELAB_CONTINENTAL=24000000 ROUTELAB_CONTINENTAL_STAGES=reference,crp \\
        python scripts/bench.py --only continental

The network is generated once into ROUTELAB_CONTINENTAL_DIR (default
/tmp/routelab-continental) as a .rlg. Each stage runs in a fresh process that loads it,
so each peak RSS is the stage's own, and the stages fit the device tool's 10-minute
calls one or two at a time (the folder survives while the machine stays warm):

- reference: SciPy's Dijkstra by travel time from 3 sources, kept as .npy;
- crp: partition, overlay + level-0 microcode, customization on one GPU and on every
  GPU (median of 5, equal results), CRP queries on the CPU (median of 600 pairs, then
  again with the path unpacked on one thread);
  exactness on the network without its turn bans under a decoder with free turns;
- ch: CU-CH contraction (first call, then warm), PHAST compute and the window's result
  (compute + colour bins on the host), exact against the reference;
- sssp: near-far on the device, exact against the reference;
- pipeline: the CRP pipeline as the program runs it (partition, overlay, one
  customizer on the first GPU or the CPU, the query and its first route), with the
  peak RSS after each step: the crp stage keeps level 0's microcode, a reference copy
  of the shortcuts and every configuration's buffers for its comparisons, which the
  program does not.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

NODES = int(float(os.environ.get("ROUTELAB_CONTINENTAL", 1_000_000)))
FOLDER = Path(os.environ.get("ROUTELAB_CONTINENTAL_DIR", "/tmp/routelab-continental"))
STAGES = ("reference", "crp", "ch", "sssp", "pipeline")
SOURCES = 3
QUERY_PAIRS = 600
RUNS = 5
HEADER = ["what", "figure", "target (24 M)", "notes"]
FREE_TURNS = 'name = "free-turns"\nkind = "metric"\nmetric = "travel_time"\nscale = 1\n'


class Emitted(dict):
    """A stage's results, each printed as a JSON line the moment it is known, so that a
    stage cut off by a time limit still reports what it measured."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        print(json.dumps({key: value}, default=float), flush=True)


def _peak_gb() -> float:
    """This process's high-water mark since exec (VmHWM; ru_maxrss would count the pages
    shared with the parent between fork and exec)."""
    return _status_gb("VmHWM:")


def _held_gb() -> float:
    """This process's resident memory now (VmRSS)."""
    return _status_gb("VmRSS:")


def _huge_pages_gb() -> float:
    """This process's memory on transparent 2 MB pages (engine/core/arrays.py huge_zeros)."""
    with open("/proc/self/smaps_rollup") as f:
        return next((int(line.split()[1]) for line in f if line.startswith("AnonHugePages:")),
                    0) / 2**20


def _status_gb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 2**20


def _network():
    from engine.io.cache import load_cache
    t0 = time.perf_counter()
    g = load_cache(_rlg())
    return g, time.perf_counter() - t0


def _rlg() -> Path:
    return FOLDER / f"generated-{NODES}.rlg"


def _sources(g) -> list[int]:
    import numpy as np
    return [int(s) for s in np.random.default_rng(37).integers(0, g.num_nodes, SOURCES)]


def _reference_path(i: int) -> Path:
    return FOLDER / f"generated-{NODES}-reference-{i}.npy"


def _wrong(got, i: int) -> int:
    import numpy as np
    want = np.load(_reference_path(i))
    return int(np.count_nonzero(np.asarray(got) != want))


# ------------------------------------------------------------------ stages (child processes)
def stage_reference() -> dict:
    import numpy as np
    from engine.routing.reference import scipy_matrix, sssp
    g, load_s = _network()
    matrix = scipy_matrix(g, "travel_time")
    times = []
    for i, s in enumerate(_sources(g)):
        t0 = time.perf_counter()
        np.save(_reference_path(i), sssp(g, s, "travel_time", matrix).distance)
        times.append(time.perf_counter() - t0)
    return {"load_s": load_s, "scipy_s": statistics.median(times), "rss_gb": _peak_gb()}


def stage_crp() -> dict:
    import dataclasses

    import numpy as np
    from engine.core.backend import device_count, gpu_backend
    from engine.crp.customization.customize import Customizer
    from engine.crp.customization.microcode import compile_microcode
    from engine.crp.metric.decoder import parse_decoder
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.crp.query.router import CrpQuery

    from benchmarks import gpu_scaling
    from benchmarks.common import timed_routes
    g, load_s = _network()
    g = dataclasses.replace(g, turn_restrictions=None)      # free turns: SciPy is the oracle
    out = Emitted()
    out["load_s"] = load_s
    t0 = time.perf_counter()
    partition = partition_graph(g, seed=0)
    out["partition_s"] = time.perf_counter() - t0
    out["boundary_arcs"] = partition.boundary_arcs(g)
    t0 = time.perf_counter()
    overlay = Overlay(g, partition)
    out["overlay_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    microcode = compile_microcode(overlay, 0)               # once, shared by every customizer
    out["microcode_s"] = time.perf_counter() - t0
    decoder = parse_decoder(FREE_TURNS)
    if device_count():
        counts = gpu_scaling.counts_for(device_count())
        def emit(key, value):
            out[key] = value
            if key.startswith("setup_s"):          # the pipeline's peak with k customizers
                out[f"rss_gb after {key}"] = _peak_gb()
        results = gpu_scaling.measure(overlay, decoder, microcode, counts, emit=emit)
        for k, r in results.items():
            out[f"records {k}"] = r["records"]
        out["scaling"] = gpu_scaling.scaling_rows(overlay, f"{NODES:,} nodes", results)
        metric, space = results[1]["metric"], results[1]["query_space"]
        if os.environ.get("ROUTELAB_CONTINENTAL_BASELINE"):
            _baseline(out, overlay, decoder, microcode, metric, space)
    else:
        c = Customizer(overlay, microcode=microcode)
        c.customize(decoder)                                  # untimed: compilation
        runs = [c.customize(decoder) for _ in range(RUNS)]
        out["customize_ms CPU"] = statistics.median(m.total_ms for m in runs)
        out["decode_ms CPU"] = statistics.median(m.decode_ms for m in runs)
        metric, space = runs[-1], c.query_space
    del microcode
    out["rss_before_query_gb"] = _peak_gb()
    t0 = time.perf_counter()
    query = CrpQuery(overlay, metric, space, backend=gpu_backend(0) if device_count() else None)
    out["query_setup_s"] = time.perf_counter() - t0
    pairs = np.random.default_rng(5).integers(0, g.num_nodes, (QUERY_PAIRS, 2))
    t0 = time.perf_counter()
    query.route(int(pairs[0, 0]), int(pairs[0, 1]))          # compilation, the bound tables
    out["first_query_s"] = time.perf_counter() - t0
    out["bound_tables_s"] = query._bounds.build_ms / 1000
    split = []
    times, _ = timed_routes(query, pairs, after=lambda q: split.append(dict(q.last_ms)))
    out["query_ms"] = statistics.median(times)
    out["query_split_ms"] = {k: statistics.median(s[k] for s in split) for k in split[0]}
    lanes = query._lanes.count
    for count in sorted({1, lanes}):           # the unpacking on one thread, the same pairs
        query._lanes.count = count
        split = []
        times, _ = timed_routes(query, pairs, after=lambda q: split.append(q.last_ms["unpack"]))
        out[f"query_ms {count} lanes"] = [statistics.median(times), statistics.median(split)]
    query._lanes.count = lanes
    out["wrong_routes"], out["checked_routes"] = _check_crp(g, query)
    out["rss_gb"] = _peak_gb()
    out["huge_pages_gb"] = _huge_pages_gb()
    return out


def stage_pipeline() -> dict:
    from engine.core.backend import device_count, gpu_backend
    from engine.crp.customization.customize import Customizer
    from engine.crp.metric.decoder import load_decoder
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.crp.query.router import CrpQuery
    out = Emitted()

    def step(name: str) -> None:         # the peak so far, and what is held now
        out[f"rss_gb after {name}"] = _peak_gb()
        out[f"held_gb after {name}"] = _held_gb()

    g, out["load_s"] = _network()
    step("load")
    overlay = Overlay(g, partition_graph(g, seed=0))
    step("partition + overlay")
    customizer = Customizer(overlay, gpu_backend(0) if device_count() else None)
    t0 = time.perf_counter()
    metric = customizer.customize(load_decoder("car-fastest"))
    out["first_customize_s"] = time.perf_counter() - t0
    step("customization")
    query = CrpQuery(overlay, metric, customizer.query_space, backend=customizer.backend)
    step("query setup")
    query.route(0, g.num_nodes - 1)
    step("first route")
    out["rss_gb"] = _peak_gb()
    return out


# one GPU under another setting, its shortcuts checked equal (ROUTELAB_CONTINENTAL_BASELINE)
BASELINES = {
    # the min-plus levels multiplying every row of a changed subcell each round
    "every row": {"skip_rows": False},
    # the block shape before layout.minplus_shape: 256 threads, rows one at a time,
    # blocks as large as 96 KB allow
    "one shape": {"minplus_threads": 256, "minplus_unroll": 1, "minplus_shared_ints": 24576},
}


def _baseline(out, overlay, decoder, microcode, metric, space) -> None:
    import numpy as np
    from engine.core.backend import gpu_backend
    from engine.crp.customization.customize import Customizer
    name = os.environ["ROUTELAB_CONTINENTAL_BASELINE"]
    c = Customizer(overlay, gpu_backend(0), microcode=microcode, query_space=space,
                   **BASELINES[name])
    c.customize(decoder)                                      # untimed: first touch
    runs = [c.customize(decoder) for _ in range(RUNS)]
    if not all(np.array_equal(np.asarray(a), np.asarray(b))
               for m in runs for a, b in zip(m.shortcuts, metric.shortcuts)):
        raise AssertionError(f"{name} customization differs")
    runs.sort(key=lambda m: m.total_ms)
    out[f"customize_ms {name}"] = runs[len(runs) // 2].total_ms
    out[f"levels_ms {name}"] = [round(sum(r["ms"].values()), 2)
                                for r in runs[len(runs) // 2].timings]
    del c


def _check_crp(g, query) -> tuple[int, int]:
    """CRP distances from the reference sources to 100 targets each, against SciPy."""
    import numpy as np
    from engine.core.paths import Unreachable
    wrong = checked = 0
    for i, s in enumerate(_sources(g)):
        want = np.load(_reference_path(i))
        for t in np.random.default_rng(i).integers(0, g.num_nodes, 100).tolist():
            try:
                got = query.route(s, t).distance
            except Unreachable:
                got = -1
            wrong += int(got != int(want[t]))
            checked += 1
    return wrong, checked


def stage_ch() -> dict:
    from engine.ch import contract, phast
    from engine.core import backend as backends
    from engine.core.units import unit_of
    g, load_s = _network()
    backend = backends.select("auto")
    t0 = time.perf_counter()
    h = contract(g, "travel_time", backend=backend)
    first = time.perf_counter() - t0
    del h
    t0 = time.perf_counter()
    h = contract(g, "travel_time", backend=backend)
    warm = time.perf_counter() - t0
    query = phast.PhastQuery(h, backend)
    factor = unit_of(g.metric_units, "travel_time").axis()[0]
    sources = _sources(g)
    query.device_tree(sources[0]).bins(factor)              # untimed: compilation
    compute, window, steps, wrong = [], [], [], 0
    for i, s in enumerate(sources):
        t0 = time.perf_counter()
        tree = query.device_tree(s)
        tree.bins(factor)
        window.append((time.perf_counter() - t0) * 1000)
        compute.append(tree.compute_ms)
        steps.append(tree.step_ms)
        wrong += _wrong(tree.to_host().distance, i)
    by_level = query.device_tree(sources[0], per_level=True).level_ms
    down = sorted(by_level["down"], reverse=True)
    sweep = {"init": by_level.get("init", 0.0), "up": sum(by_level["up"]),
             "core": by_level.get("core", 0.0), "down": sum(down), "down levels": len(down),
             "slowest down levels": [round(x, 3) for x in down[:5]]}
    contraction_ms: dict = {}                 # the warm run's device ms by step, all levels
    for record in h.iterations:
        for step, ms in record["ms"].items():
            contraction_ms[step] = round(contraction_ms.get(step, 0.0) + ms, 1)
    return {"load_s": load_s, "contract_first_s": first, "contract_warm_s": warm,
            "levels": h.num_levels, "contraction_ms": contraction_ms,
            "contraction_params": {k: h.params.get(k) for k in ("levels_ms", "apsp_ms", "built_ms")},
            "phast_compute_ms": statistics.median(compute),
            "phast_steps_ms": {k: round(statistics.median(x.get(k, 0.0) for x in steps), 3)
                               for k in steps[0]},
            "phast_window_ms": statistics.median(window), "phast_wrong": wrong,
            "phast_sweep_ms": {k: round(v, 3) if isinstance(v, float) else v
                               for k, v in sweep.items()},
            "rss_gb": _peak_gb()}


def stage_sssp() -> dict:
    """near-far with the default bucket width, then with each delta factor of
    ROUTELAB_NEAR_FAR_FACTORS (say "32,128"), every tree checked against the reference."""
    from engine.core import backend as backends
    from engine.sssp import TreeQuery
    g, load_s = _network()
    query = TreeQuery(g, "travel_time", backends.select("auto"))
    sources = _sources(g)
    out = Emitted(load_s=load_s)
    settings = [{}] + [{"delta_factor": float(f)}
                       for f in os.environ.get("ROUTELAB_NEAR_FAR_FACTORS", "").split(",") if f]
    wrong = 0
    for options in settings:
        query.tree(sources[0], "near_far", **options)       # untimed: compilation, tuning
        compute, steps = [], []
        for i, s in enumerate(sources):
            tree = query.tree(s, "near_far", **options)
            compute.append(tree.compute_ms)
            steps.append(tree.stats["steps"])
            wrong += _wrong(tree.tree.distance, i)
        key = "near_far_ms" + (f" delta factor {options['delta_factor']:g}" if options else "")
        out[key] = statistics.median(compute)
        out[key.replace("_ms", "_steps_ms")] = {
            step: round(statistics.median(x[step] for x in steps), 2) for step in steps[0]}
    out["near_far_wrong"] = wrong
    out["rss_gb"] = _peak_gb()
    return out


# ------------------------------------------------------------------ the section
def _make_network() -> float:
    """Generate the network into FOLDER unless it is there; seconds taken (0: reused)."""
    if _rlg().exists():
        return 0.0
    FOLDER.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app.main", "generate", "--nodes", str(NODES),
                    "--out", str(_rlg())], check=True, cwd=Path(__file__).resolve().parents[2])
    return time.perf_counter() - t0


def _child(stage: str) -> dict:
    """Run one stage in a fresh process, its lines echoed as they come and its JSON lines
    merged (a stage that fails or is stopped by ROUTELAB_CONTINENTAL_LIMIT seconds keeps
    what it reported)."""
    import threading
    limit = float(os.environ.get("ROUTELAB_CONTINENTAL_LIMIT", 3600))
    result: dict = {}
    lines: list[str] = []
    with subprocess.Popen([sys.executable, __file__, stage], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          cwd=Path(__file__).resolve().parents[2]) as child:
        timer = threading.Timer(limit, child.kill)
        timer.start()
        for line in child.stdout:
            print(f"  [{stage}] {line.rstrip()[:400]}", flush=True)
            lines.append(line)
        child.wait()
        stopped = not timer.is_alive() and child.returncode != 0
        timer.cancel()
    for line in lines:
        if line.startswith("{"):
            result.update(json.loads(line))
    if stopped:
        result["error"] = [f"stopped after {limit:.0f} s"]
    elif child.returncode:
        result["error"] = [lines[-1].strip() if lines else f"exit status {child.returncode}"]
    return result


def bench_continental() -> tuple[list[str], list[list[str]]]:
    wanted = [s.strip() for s in os.environ.get("ROUTELAB_CONTINENTAL_STAGES", ",".join(STAGES)).split(",")]
    rows = [[f"generate {NODES:,} nodes to .rlg", f"{_make_network():.0f} s", "",
             "0 s: the file was there"]]
    for stage in wanted:
        result = _child(stage)
        print(stage, json.dumps(result), flush=True)          # progress, in case of a time limit
        rows += _rows(stage, result)
    return HEADER, rows


def _rows(stage: str, r: dict) -> list[list[str]]:
    if "error" in r:
        known = {k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()
                 if k != "error" and not k.startswith("records")}
        return [[stage, "failed", "", f"{' '.join(r['error'])}; measured before: {json.dumps(known)}"]]
    rss = f"peak RSS {r['rss_gb']:.1f} GB; .rlg load {r['load_s']:.1f} s"
    if stage == "reference":
        return [["SciPy Dijkstra (travel time)", f"{r['scipy_s']:.1f} s", "", rss]]
    if stage == "ch":
        return [["CU-CH contraction, warm", f"{r['contract_warm_s']:.2f} s", "≤ 3 s",
                 f"first call {r['contract_first_s']:.1f} s; {r['levels']} levels; {rss}"],
                ["CU-CH contraction, warm: where it went", "", "",
                 f"device ms by step {json.dumps(r['contraction_ms'])}; wall ms "
                 f"{json.dumps(r['contraction_params'])} (levels, the core's APSP, until the "
                 "hierarchy is complete on the device)"],
                ["PHAST tree compute / window's result on the host",
                 f"{r['phast_compute_ms']:.2f} / {r['phast_window_ms']:.2f} ms", "≤ 2 / ≤ 20 ms",
                 f"{r['phast_wrong']} wrong nodes over {SOURCES} sources; compute: the "
                 "distances (the window's colours need no parents; a path or the whole tree "
                 f"makes them when first read); ms by step {json.dumps(r['phast_steps_ms'])}; "
                 f"launched one kernel at a time {json.dumps(r.get('phast_sweep_ms', {}))}"]]
    if stage == "pipeline":
        steps = "; ".join(f"{k.split(' ', 1)[1]} {v:.1f} GB (held {r.get('held_gb ' + k.split(' ', 1)[1], 0):.1f})"
                          for k, v in r.items() if k.startswith("rss_gb "))
        return [["CRP pipeline peak RSS (as the program runs it)", f"{r['rss_gb']:.1f} GB",
                 "≤ 40 GB", f"{steps}; first customization {r['first_customize_s']:.1f} s"]]
    if stage == "sssp":
        tried = "; ".join(f"{k[len('near_far_ms '):]}: {v:.1f} ms" for k, v in r.items()
                          if k.startswith("near_far_ms "))
        return [["near-far SSSP compute", f"{r['near_far_ms']:.1f} ms", "≤ 60 ms",
                 f"{r['near_far_wrong']} wrong nodes over all trees; ms by step "
                 f"{json.dumps(r['near_far_steps_ms'])}; {rss}"
                 + (f"; tried {tried}" if tried else "")]]
    rows = [["CRP partition + overlay + microcode",
             f"{r['partition_s']:.0f} + {r['overlay_s']:.0f} + {r.get('microcode_s', 0):.0f} s",
             "≤ 120 s (partition + overlay)", f"boundary arcs {r['boundary_arcs']}; {rss}"]]
    for key, ms in r.items():
        if not key.startswith("customize_ms ") or key == "customize_ms every row":
            continue
        count = key.split(" ", 1)[1]
        name = "CPU twin" if count == "CPU" else f"{count} GPU" + ("s" if count != "1" else "")
        levels = ", ".join(f"L{x['level']} {sum(x['ms'].values()):.2f}"
                           for x in r.get(f"records {count}", []))
        same = "" if count == "CPU" else ", every run equal to one GPU's"
        rows.append([f"CRP customization, {name}", f"{ms:.2f} ms",
                     {"1": "≤ 60 ms", "2": "≤ 35 ms"}.get(count, ""),
                     f"levels [{levels}] ms; decode {r.get(f'decode_ms {count}', 0):.2f} ms apart; "
                     f"median of {RUNS}{same}"])
    if "customize_ms every row" in r:
        levels = ", ".join(f"L{i} {ms:.2f}" for i, ms in enumerate(r["levels_ms every row"]))
        rows.append(["CRP customization, 1 GPU, min-plus multiplying every row (before)",
                     f"{r['customize_ms every row']:.2f} ms", "",
                     f"levels [{levels}] ms; the same run, equal shortcuts"])
    rows += [[f"CRP customization scaling: {k} GPU(s)", figure, "",
              f"{speedup}, efficiency {eff}; {device}; {notes}"]
             for _, k, figure, speedup, eff, device, notes in r.get("scaling", [])]
    split = ", ".join(f"{k} {v:.1f}" for k, v in r.get("query_split_ms", {}).items())
    rows.append(["CRP query (CPU)", f"{r['query_ms']:.2f} ms median ({split} ms)", "≤ 10 ms",
                 f"{QUERY_PAIRS} pairs after a first query ({r.get('first_query_s', 0):.1f} s, "
                 f"of which the top level's bound tables {r.get('bound_tables_s', 0):.1f} s); "
                 f"{r['wrong_routes']} wrong of {r['checked_routes']} "
                 f"against SciPy (free turns); peak RSS before queries {r['rss_before_query_gb']:.1f} GB"
                 + "".join(f"; unpacking on {k.split()[1]} thread(s) again: {v[0]:.2f} ms (unpack "
                           f"{v[1]:.2f})" for k, v in r.items()
                           if k.startswith("query_ms ") and k.endswith("lanes"))])
    return rows


SECTIONS = {"continental": (f"Continental scale: a generated network of {NODES:,} nodes",
                            bench_continental)}

if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]
    print(json.dumps(globals()[f"stage_{sys.argv[1]}"](), default=float))
