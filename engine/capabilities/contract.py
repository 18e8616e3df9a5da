"""contract: build a CU-CH contraction hierarchy; every level is reported as it finishes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.capabilities import Capability, Param, register
from engine.capabilities.common import METRIC, NODE_BASED, text_lines
from engine.ch.parameters import DEFAULT_C, DEFAULT_K, MIN_C, check_parameters

if TYPE_CHECKING:
    from engine.ch import Hierarchy

WARM_UP_NODES = 400    # a generated network this small runs every step in a few ms


def build(workspace, params: dict, ctx) -> Hierarchy:
    K, C = params.get("K", DEFAULT_K), params.get("C", DEFAULT_C)
    check_parameters(workspace.graph.num_nodes, K, C)     # before the warm-up: a bad K says so at once
    workspace.warm_once(("contract", workspace.backend.name), lambda: _warm_up(workspace.backend))
    metric = workspace.graph.metric_of(params.get("metric")).name
    model = None if params.get("node_based") else \
        workspace.turn_model((metric,), force=bool(params.get("turn_aware")))

    def on_level(record: dict) -> None:
        ctx.record(record)
        ctx.pause()                  # routes clicked meanwhile answer between levels
    kwargs = dict(K=K, C=C, backend=workspace.backend, progress=ctx.progress,
                  cancel=ctx.cancel, on_iteration=on_level)
    h = contract(workspace.graph if model is None else model.expanded, metric, **kwargs)
    if model is not None:
        from engine.model.hierarchy import mark_turn_aware
        mark_turn_aware(h, workspace.graph)
    workspace.set_hierarchy(h)
    workspace.warm_up_hierarchy()      # its first route compiles here, not on a click
    if params.get("out"):
        h.save(params["out"])
    return h


def contract(graph, metric, **kwargs):
    """engine.ch.contract, imported only when a contraction runs (it loads Numba)."""
    from engine.ch import contract as run
    return run(graph, metric, **kwargs)


def _warm_up(backend) -> None:
    """Contract a tiny network first, so kernel and Numba compilation are not part of
    the times the person sees."""
    from engine import ch
    from engine.generate.network import generate_road_network
    ch.contract(generate_road_network(WARM_UP_NODES, seed=1), K=8, backend=backend)


def to_json(workspace, params: dict, h: Hierarchy) -> dict:
    from engine.model.hierarchy import bytes_per_arc
    return {"summary": h.summary(), "iterations": h.iterations, "out": params.get("out"),
            "backend": workspace.backend.describe(), "turn_aware": h.turn_aware,
            "nodes": h.num_nodes, "bytes_per_road_arc": round(bytes_per_arc(
                h, workspace.graph.num_arcs), 1)}


def level_text(record: dict) -> str:
    steps = "  ".join(f"{k} {v:.1f}" for k, v in record["ms"].items())
    return (f"  level {record['level']:3d}: |V| {record['nodes']:>9,}  |U| {record['contracted']:>8,}"
            f"  MIS {record['mis_fraction']:.2f}  deg {record['avg_degree']:6.2f}/{record['max_degree']:<4d}"
            f"  shortcuts {record['shortcuts']:>8,}  {steps} ms")


def text(r: dict) -> str:
    s = r["summary"]
    model = (f"turn-aware ({r['nodes']:,} nodes: one per arc, a start and an end per road node)"
             if r["turn_aware"] else "node-based (ignores turn restrictions and turn costs)")
    return text_lines([f"{model} hierarchy, {r['bytes_per_road_arc']:,} bytes per road arc",
                       f"contracted in {s['contract_ms']:.0f} ms on {r['backend']}: {s['levels']} "
                       f"levels, core {s['core_nodes']:,} nodes, {s['shortcuts']:,} shortcuts, "
                       f"edge growth {s['edge_growth']}"], r["out"], "hierarchy")


CONTRACT = register(Capability(
    name="contract", label="Contract (CU-CH)", help="build a CU-CH contraction hierarchy",
    params=(METRIC, NODE_BASED,
            Param("turn_aware", bool, False, flag="--turn-aware",
                  help="contract the turn-aware model even where turns change nothing "
                  "(DIMACS; for comparison)"),
            Param("K", int, DEFAULT_K, "core size at which contraction stops: 2 or more; "
                  "more than the node count means no levels (the whole graph is the core)"),
            Param("C", float, DEFAULT_C, f"share of live nodes that are candidates, {MIN_C}..1"),
            Param("out", str, None, "write the hierarchy here (.rlh)", file=True,
                  output=True)),
    run=build, to_json=to_json, to_text=text, record_text=level_text,
    order=50, menu="&Hierarchy", shortcut="Ctrl+K"))
