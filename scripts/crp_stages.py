"""The CRP pipeline stage by stage on the generated network: seconds, resident memory
after each stage and its peak during the stage (VmHWM, reset between stages), and the
bytes the overlay, the level-0 microcode and the CellMetric keep (docs/memory.md, "CRP").

    python scripts/crp_stages.py --nodes 1000000 [--graph G.rlg --partition P.rlp]
                                 [--stop overlay|microcode|customize|query]

Numba is warmed on a 5,000-node network first, so no stage times its compilation. With
--graph/--partition the graph and partition are loaded instead of made (the partition
must be of that graph). To measure another tree's code (an older commit), run this
file with PYTHONPATH pointing at that tree's root: it calls only public functions.
Linux only (reads /proc/self/status).
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np

# the repository root, after PYTHONPATH: a tree named there (older code) comes first
sys.path.append(str(Path(__file__).resolve().parents[1]))

STAGES = ("overlay", "microcode", "customize", "query")


def _status(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1e6
    return float("nan")


def _reset_peak() -> None:
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:     # 5: reset the peak (VmHWM) to now
        f.write("5")


class Stages:
    def __init__(self) -> None:
        self.rows: dict = {}

    def run(self, name: str, fn):
        _reset_peak()
        t0 = time.perf_counter()
        value = fn()
        self.rows[name] = {"s": round(time.perf_counter() - t0, 2),
                           "rss_gb": round(_status("VmRSS"), 3),
                           "peak_gb": round(_status("VmHWM"), 3)}
        print(f"{name:<16} {self.rows[name]}", flush=True)
        return value


def _warm() -> None:
    from engine.crp.customization.customize import Customizer
    from engine.crp.customization.microcode import compile_microcode
    from engine.crp.metric.decoder import load_decoder
    from engine.crp.partition.nested import partition_graph
    from engine.crp.partition.overlay import Overlay
    from engine.generate.network import generate_road_network
    g = generate_road_network(5000, 3)
    o = Overlay(g, partition_graph(g))
    compile_microcode(o, 0)
    Customizer(o).customize(load_decoder("car-fastest"))


def _bytes(obj, names=None) -> int:
    items = vars(obj).items() if names is None else ((k, getattr(obj, k)) for k in names)
    return sum(v.nbytes for k, v in items if isinstance(v, np.ndarray))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--graph"), ap.add_argument("--partition")
    ap.add_argument("--stop", choices=STAGES, default="query")
    args = ap.parse_args(argv)
    from engine.core.turns import turn_graph
    from engine.crp.customization.customize import Customizer
    from engine.crp.customization.microcode import compile_microcode
    from engine.crp.metric.decoder import load_decoder
    from engine.crp.partition.nested import Partition, partition_graph
    from engine.crp.partition.overlay import Overlay
    _warm()
    st = Stages()
    if args.graph:
        from engine.io.cache import load_cache
        g = st.run("graph", lambda: load_cache(args.graph))
        p = st.run("partition", lambda: Partition.load(args.partition, g))
    else:
        from engine.generate.network import generate_road_network
        g = st.run("graph", lambda: generate_road_network(args.nodes, 1))
        p = st.run("partition", lambda: partition_graph(g))
    turns = st.run("turns", lambda: turn_graph(g))
    o = st.run("overlay", lambda: Overlay(g, p, turns))
    out = {"nodes": g.num_nodes, "arcs": g.num_arcs, "turns": turns.num_turns,
           "overlay_bytes": _bytes(o, ("arc_level", "boundary_arc", "arc_to_boundary"))
           + sum(_bytes(t) for t in o.levels)}
    if args.stop != "overlay":
        mc = st.run("microcode", lambda: compile_microcode(o, 0))
        out["instructions"] = mc.num_instructions
        out["microcode_bytes"] = _bytes(mc) - mc.edge_weight.nbytes - mc.clique_first.nbytes
    if args.stop not in ("overlay", "microcode"):
        cz = Customizer(o)
        cz.__dict__["microcode"] = mc                 # the one compiled above
        m = st.run("customize", lambda: cz.customize(load_decoder("car-fastest")))
        out["metric_bytes"] = _bytes(m) + (0 if m.flat_shortcuts is not None else
                                           sum(s.nbytes for s in m.shortcuts))
    if args.stop == "query":
        from engine.crp.query.router import CrpQuery
        pairs = np.random.default_rng(1).integers(0, g.num_nodes, (20, 2))
        q = st.run("query setup", lambda: CrpQuery(o, m, cz.query_space))
        st.run("query x20", lambda: [q.route(int(s), int(t)) for s, t in pairs])
    out["stages"] = st.rows
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
