"""csp: the least-length path whose cost stays within a budget (engine.csp), with the
shortest and the least-cost paths as references and, on request, the Pareto set."""
from __future__ import annotations

import math

from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import GEOJSON, GPX, SOURCE, TARGET, file_ids
from engine.export import write_path, written_lines
from engine.core.units import Unit, parse_amounts, unit_of
from engine.model.defaults import restrictions_in_force

# A path's (length, cost) metrics (csp's parameters); the window's defaults too.
MINIMIZE, BUDGET_METRIC = "distance", "travel_time"


def lagrangian_policies() -> tuple:
    """Asked lazily: engine.csp loads Numba, which `routelab info` never needs."""
    from engine.csp.bounds.lagrangian import POLICIES
    return POLICIES


def run(workspace, params: dict, ctx):
    # CspQuery is compiled and warmed up (a Pareto query labels) when the workspace
    # makes it, so its times exclude compilation.
    minimize = params.get("minimize") or MINIMIZE
    budget_metric = params.get("budget_metric") or BUDGET_METRIC
    on_hierarchy = uses_hierarchy(params)
    if on_hierarchy and params.get("hierarchy_file"):
        _use_hierarchy_file(workspace, params, minimize, budget_metric)
    from engine.csp import NoPathWithinBudget
    query = workspace.csp_query(minimize, budget_metric, bounds=not params.get("no_bounds"),
                                lagrangian=params.get("lagrangian") or "auto",
                                hierarchy=on_hierarchy)
    unit = unit_of(workspace.graph.metric_units, budget_metric)
    budget = budget_in_raw_units(params.get("budget"), unit)
    try:
        result = query.solve(int(params["source"]), int(params["target"]), budget,
                             pareto=bool(params.get("pareto")), cancel=ctx.cancel)
    except NoPathWithinBudget as e:              # said in the budget's unit
        raise NoPathWithinBudget(f"no path within budget {unit.with_raw(budget)} of {budget_metric}: "
                                 f"the least cost is {unit.with_raw(e.least_cost)}", e.least_cost) from None
    if params.get("geojson") or params.get("gpx"):
        _export(workspace, params, result, minimize, budget_metric)
    return result


def uses_hierarchy(params: dict) -> bool:
    """Does this query label on a bi-criteria hierarchy? (Vine-style runs never do.)"""
    return bool(params.get("hierarchy") or params.get("hierarchy_file")) and \
        not params.get("no_bounds")


def _writes_hierarchy_file(params: dict) -> bool:
    """--hierarchy-file is written when a run uses it and it does not exist (else read)."""
    from pathlib import Path
    return uses_hierarchy(params) and not Path(params["hierarchy_file"]).exists()


def _use_hierarchy_file(workspace, params: dict, minimize: str, budget_metric: str) -> None:
    """The ``hierarchy_file``: loaded (and validated) when it exists, else built and
    written there; params["hierarchy_written"] says which."""
    from pathlib import Path
    path = Path(params["hierarchy_file"])
    if path.exists():
        workspace.load_csp_hierarchy(path, minimize, budget_metric)
        params["hierarchy_written"] = False
        return
    from engine.csp.hierarchy.file import save_pareto_hierarchy
    from engine.io.atomic import check_writable
    check_writable(path)                # before a build that may take minutes
    save_pareto_hierarchy(workspace.csp_hierarchy(minimize, budget_metric), path)
    params["hierarchy_written"] = True


def budget_in_raw_units(value, unit: Unit) -> int:
    """The budget as raw units of its metric: a whole number is raw units (as it always
    was); an amount with a unit ("25min", "12km") is converted, rounded down so that a
    path within the raw budget is within the amount."""
    if value is None:
        raise ValueError("a budget is required (--budget)")
    if not isinstance(value, str):
        return int(value)
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if math.isfinite(number) and number.is_integer():
            return int(number)
        raise ValueError(f"--budget: {text!r} is not a whole number (raw units, or an amount "
                         f"with its unit: 25min, 12km)")
    if "," in text:
        raise ValueError(f"--budget: {text!r} is more than one amount")
    try:
        [raw] = parse_amounts(text, unit)
    except ValueError as e:
        raise ValueError(f"--budget: {e}") from None
    return math.floor(raw + 1e-9)


def _export(workspace, params: dict, r, minimize: str, budget_metric: str) -> None:
    write_path(workspace.graph, r.path, params,
               *csp_export(workspace.graph, r, minimize, budget_metric, _method(r, params)))


def csp_export(graph, r, minimize: str, budget_metric: str, method: str) -> tuple[dict, str, str]:
    """(properties, title, description) of a cost-budgeted path for
    engine.export.write_path: its ends, length and cost (raw, units, display form), the
    budget, its length in metres and travel time where known, the method."""
    from engine.core.summary import route_summary
    lu, bu = unit_of(graph.metric_units, minimize), unit_of(graph.metric_units, budget_metric)
    summary = route_summary(graph, r.path)
    seconds = summary.travel_time_s
    properties = {"from": int(graph.node_id[r.source]), "to": int(graph.node_id[r.target]),
                  "minimize": minimize, "length": r.length, "length_unit": lu.name,
                  "length_text": lu.format(r.length), "budget_metric": budget_metric,
                  "budget": r.budget, "cost": r.cost, "cost_unit": bu.name,
                  "cost_text": bu.format(r.cost), "budget_text": bu.format(r.budget),
                  "arcs": r.path.num_arcs,
                  "length_m": None if summary.length_m is None else round(summary.length_m, 1),
                  "travel_time_s": None if seconds is None else round(seconds, 1), "method": method}
    title = f"RouteLab cost-budgeted path from {properties['from']} to {properties['to']}"
    description = (f"least {minimize} {lu.format(r.length)} within {budget_metric} "
                   f"{bu.format(r.budget)}: cost {bu.format(r.cost)} ({method})")
    return properties, title, description


def _method(r, params: dict) -> str:
    return (("Vine's parallel labeling" if r.backend == "gpu" else "label-setting") +
            ("" if params.get("no_bounds") else " with bounds") +
            (" on the bi-criteria hierarchy" if uses_hierarchy(params) else ""))


def to_json(workspace, params: dict, r) -> dict:
    g = workspace.graph
    minimize = r.path.metric
    budget_metric = params.get("budget_metric") or BUDGET_METRIC
    return {
        "from": int(g.node_id[r.source]), "to": int(g.node_id[r.target]),
        "minimize": minimize, "budget_metric": budget_metric,
        "length_unit": unit_of(g.metric_units, minimize).name,
        "budget_unit": unit_of(g.metric_units, budget_metric).name,
        "budget": r.budget, "length": r.length, "cost": r.cost, "arcs": r.path.num_arcs,
        "path": file_ids(g, r.path.nodes), "least_cost": r.least_cost,
        "shortest_length": r.shortest_length, "shortest_cost": r.shortest_cost,
        "answered_by": r.answered_by, "labels": r.stats,
        "ms": {k: round(v, 3) for k, v in r.ms.items()},
        "method": _method(r, params),
        "backend": r.backend, "iterations": r.stats.get("iterations"),
        "k_t": _k_history(r),
        "pareto": None if r.pareto is None else [[p.length, p.cost] for p in r.pareto],
        "turn_aware": True, "restrictions": restrictions_in_force(g),
        "lagrangian": r.lagrangian,
        "hierarchy": _hierarchy_json(workspace, params, minimize, budget_metric),
        **{k: params[k] for k in ("geojson", "gpx") if params.get(k)},     # written by run
    }


def _hierarchy_json(workspace, params: dict, minimize: str, budget_metric: str) -> dict | None:
    """The bi-criteria hierarchy a query ran on (None: none): its summary and file."""
    if not uses_hierarchy(params):
        return None
    h = workspace.csp_hierarchy(minimize, budget_metric, build=False)
    return {"summary": h.summary() if h is not None else "",
            "file": params.get("hierarchy_file"), "written": params.get("hierarchy_written")}


def _k_history(r) -> list[int] | None:
    """K_t per iteration (GPU runs), else None."""
    if r.history is None or "k_t" not in r.history_columns:
        return None
    return r.history[:, r.history_columns.index("k_t")].tolist()


def text(r: dict) -> str:
    lu, bu = Unit(r.get("length_unit", "")), Unit(r.get("budget_unit", ""))
    lines = [f"{r['minimize']} {lu.with_raw(r['length'])} within {r['budget_metric']} budget "
             f"{bu.with_raw(r['budget'])}: cost {bu.with_raw(r['cost'])}, {r['arcs']} arcs",
             f"  path: {' '.join(map(str, r['path']))}",
             f"  bounds: the least cost is {bu.with_raw(r['least_cost'])}; the shortest path has "
             f"{r['minimize']} {lu.with_raw(r['shortest_length'])} at cost "
             f"{bu.with_raw(r['shortest_cost'])}",
             f"  answered by the {r['answered_by']}; labels: " +
             ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r["labels"].items()),
             f"  time: bounds {r['ms']['bounds']:.2f} ms + labeling {r['ms']['labeling']:.2f} ms "
             f"= {r['ms']['total']:.2f} ms ({r['method']}, {r['backend'].upper()})"]
    lag = r.get("lagrangian")
    if lag:
        when = (f"after {lag['labels_before_restart']:,} labels" if lag["labels_before_restart"]
                else "from the start")
        lines.append(f"  Lagrangian bound {when}: {lag['steps']} LARAC steps, {lag['ms']:.2f} ms; "
                     f"lambda {lag['lambda']:.4g}; no path within the budget is shorter than "
                     f"{lu.format(lag['lower'])}, one of {lu.with_raw(lag['upper'])} exists")
    h = r.get("hierarchy")
    if h:
        where = "" if not h["file"] else \
            f"; {'built and written to' if h['written'] else 'loaded from'} {h['file']}"
        lines.append(f"  bi-criteria hierarchy: {h['summary']}{where}")
    if r["k_t"]:
        ks = r["k_t"]
        changes = [k for i, k in enumerate(ks) if i == 0 or k != ks[i - 1]]
        shown = " ".join(f"{k:,}" for k in changes[:12]) + (" ..." if len(changes) > 12 else "")
        lines.append(f"  iterations {r['iterations']:,}; K_t (as it changed): {shown}")
    if r["pareto"] is not None:
        lines.append(f"  Pareto set ({len(r['pareto'])} points, {r['minimize']} / cost): " +
                     "  ".join(f"{a:,}/{b:,}" for a, b in r["pareto"]))
    return "\n".join(lines + written_lines(r))


CSP = register(Capability(
    name="csp", label="Cost-budgeted path",
    help="least-length path whose cost stays within a budget (exact)",
    params=(SOURCE, TARGET,
            Param("budget", str, None, "the most the path may cost: raw units of the budget "
                  "metric (a whole number), or an amount with its unit (25min, 12km)",
                  required=True),
            Param("minimize", str, "distance", "the metric to minimize"),
            Param("budget_metric", str, "travel_time", "the metric the budget limits",
                  flag="--budget-metric"),
            Param("pareto", bool, False, "also every non-dominated (length, cost) path"),
            Param("no_bounds", bool, False, "search without the reverse-search bounds "
                  "(Vine-style, for comparison)", flag="--no-bounds"),
            Param("hierarchy", bool, False, "label on a bi-criteria contraction hierarchy of "
                  "the two metrics, built once per run (NY: about 25 s with 16 threads, 40 s "
                  "with 2); the answers are the same"),
            Param("hierarchy_file", str, None, "label on the bi-criteria hierarchy in this "
                  "file (.rlb): loaded when it exists (refused unless built from this graph "
                  "and these two metrics), else built and written there", file=True,
                  flag="--hierarchy-file", output=_writes_hierarchy_file),
            Param("lagrangian", str, "auto", "the Lagrangian bound (LARAC): auto = a hard "
                  "query restarts with it (after as many labels as the graph has nodes, 4x "
                  "on a GPU), always, or never", choices=lagrangian_policies),
            GEOJSON, GPX),
    run=run, to_json=to_json, to_text=text,
    order=80, menu="&Route", menu_text="&Cost-budgeted path mode", shortcut="B", policy=QUEUE))
