"""csp: the least-length path whose cost stays within a budget (engine.csp), with the
shortest and the least-cost paths as references and, on request, the Pareto set."""
from __future__ import annotations

from engine.capabilities import Capability, Param, register
from engine.capabilities.common import SOURCE, TARGET, file_ids


def run(workspace, params: dict, ctx):
    query = workspace.csp_query(params.get("minimize") or "distance",
                                params.get("budget_metric") or "travel_time",
                                bounds=not params.get("no_bounds"))
    if params.get("budget") is None:
        raise ValueError("a budget is required (--budget)")
    return query.solve(int(params["source"]), int(params["target"]), int(params["budget"]),
                       pareto=bool(params.get("pareto")))


def to_json(workspace, params: dict, r) -> dict:
    g = workspace.graph
    return {
        "from": int(g.node_id[r.source]), "to": int(g.node_id[r.target]),
        "minimize": r.path.metric, "budget_metric": params.get("budget_metric") or "travel_time",
        "budget": r.budget, "length": r.length, "cost": r.cost, "arcs": r.path.num_arcs,
        "path": file_ids(g, r.path.nodes), "least_cost": r.least_cost,
        "shortest_length": r.shortest_length, "shortest_cost": r.shortest_cost,
        "answered_by": r.answered_by, "labels": r.stats,
        "ms": {k: round(v, 3) for k, v in r.ms.items()},
        "method": ("Vine's parallel labeling" if r.backend == "gpu" else "label-setting") +
                  ("" if params.get("no_bounds") else " with bounds"),
        "backend": r.backend, "iterations": r.stats.get("iterations"),
        "k_t": _k_history(r),
        "pareto": None if r.pareto is None else [[p.length, p.cost] for p in r.pareto],
    }


def _k_history(r) -> list[int] | None:
    """K_t per iteration (GPU runs), else None."""
    if r.history is None or "k_t" not in r.history_columns:
        return None
    return r.history[:, r.history_columns.index("k_t")].tolist()


def text(r: dict) -> str:
    lines = [f"{r['minimize']} {r['length']:,} within {r['budget_metric']} budget {r['budget']:,}: "
             f"cost {r['cost']:,}, {r['arcs']} arcs",
             f"  path: {' '.join(map(str, r['path']))}",
             f"  bounds: the least cost is {r['least_cost']:,}; the shortest path has "
             f"{r['minimize']} {r['shortest_length']:,} at cost {r['shortest_cost']:,}",
             f"  answered by the {r['answered_by']}; labels: " +
             ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r["labels"].items()),
             f"  time: bounds {r['ms']['bounds']:.2f} ms + labeling {r['ms']['labeling']:.2f} ms "
             f"= {r['ms']['total']:.2f} ms ({r['method']}, {r['backend'].upper()})"]
    if r["k_t"]:
        ks = r["k_t"]
        changes = [k for i, k in enumerate(ks) if i == 0 or k != ks[i - 1]]
        shown = " ".join(f"{k:,}" for k in changes[:12]) + (" ..." if len(changes) > 12 else "")
        lines.append(f"  iterations {r['iterations']:,}; K_t (as it changed): {shown}")
    if r["pareto"] is not None:
        lines.append(f"  Pareto set ({len(r['pareto'])} points, {r['minimize']} / cost): " +
                     "  ".join(f"{a:,}/{b:,}" for a, b in r["pareto"]))
    return "\n".join(lines)


CSP = register(Capability(
    name="csp", label="Cost-budgeted path",
    help="least-length path whose cost stays within a budget (exact)",
    params=(SOURCE, TARGET,
            Param("budget", int, None, "the most the path may cost, in the budget metric's units",
                  required=True),
            Param("minimize", str, "distance", "the metric to minimize"),
            Param("budget_metric", str, "travel_time", "the metric the budget limits",
                  flag="--budget-metric"),
            Param("pareto", bool, False, "also every non-dominated (length, cost) path"),
            Param("no_bounds", bool, False, "search without the reverse-search bounds "
                  "(Vine-style, for comparison)", flag="--no-bounds")),
    run=run, result_kind="csp", to_json=to_json, to_text=text))
