"""check: run every check of RouteLab's files in full and say what was checked and how
long it took: ``routelab check FILE... [graph files]``.

A hierarchy (``.rlh``) gets its validator and its witness check (engine.ch.proof: no
shortcut missing), a bi-criteria hierarchy (``.rlb``) the same (engine.csp.hierarchy.
proof), a partition (``.rlp``) its validator against its graph, and a graph (a cache
``.rlg``, DIMACS or OpenStreetMap files) its reader's checks; with graph files, each
hierarchy and partition must also belong to that graph. A file that fails ends the
command with its name and the reason (exit status 1). In the window (Tools ▸ Check
loaded files) it checks what the workspace holds: the graph, the hierarchies (the
witness checks run again on the arrays in memory) and the partition.
"""
from __future__ import annotations

import time
from pathlib import Path

from engine.capabilities import Capability, register
from engine.io import LoadError

HIERARCHY, PARETO, PARTITION = ".rlh", ".rlb", ".rlp"
WHAT = {HIERARCHY: "contraction hierarchy", PARETO: "bi-criteria hierarchy",
        PARTITION: "CRP partition"}
CHECKS = {
    HIERARCHY: "arrays, shortcuts = their children, levels, up/down lists, core matrix "
               "certified; witness check: no shortcut missing",
    PARETO: "arrays, shortcuts = their children, independent levels, search arcs, left-out "
            "arcs dominated; witness check: no shortcut missing",
    PARTITION: "arrays, nested dense cells, the graph's key",
    "graph": "parsed and validated: CSR offsets, ids, metrics, attributes, geometry, turns"}


def check(workspace, params: dict, ctx) -> dict:
    """The files of ``params["files"]`` (the command line), else what ``workspace`` holds."""
    files = [Path(f) for f in params.get("files") or ()]
    if not files and workspace is None:       # the command line with no file named
        raise LoadError(None, "no file given: routelab check FILE...")
    if not files:
        return {"checked": _loaded(workspace)}
    own = [f for f in files if f.suffix.lower() in WHAT]
    graph_files = [f for f in files if f not in own]
    if not own and not graph_files:
        raise LoadError(None, "no file given")
    checked, ws = [], None
    if graph_files:
        ws, entry = _graph(graph_files, params.get("siblings", True))
        checked.append(entry)
    for f in own:
        ctx.cancel.check()
        checked.append(_file(f, ws))
    return {"checked": checked}


def _graph(paths, siblings: bool):
    from engine.core.backend import cpu_backend
    from engine.io import load
    from engine.workspace import Workspace
    started = time.perf_counter()
    graph = load(paths, siblings=siblings)
    entry = {"file": graph.source, "kind": "graph", "checks": CHECKS["graph"],
             "summary": f"{graph.num_nodes:,} nodes, {graph.num_arcs:,} arcs",
             "seconds": time.perf_counter() - started}
    return Workspace(graph, cpu_backend()), entry


def _file(path: Path, ws) -> dict:
    """Load ``path`` with every check (and, given ``ws``, against its graph), the
    witness checks too where the file passed them before (engine.io.proven)."""
    from engine.io.proven import always_prove
    with always_prove():
        return _checked(path, ws)


def _checked(path: Path, ws) -> dict:
    kind = path.suffix.lower()
    started = time.perf_counter()
    if kind == PARTITION:
        if ws is None:
            raise LoadError(path, "a partition is checked against its graph: give the graph's "
                                  "files too")
        summary = f"{ws.load_partition(path).num_levels} levels"
    elif kind == HIERARCHY:
        from engine.ch import Hierarchy
        h = ws.load_hierarchy(path) if ws is not None else Hierarchy.load(path)
        summary = f"{h.num_levels} levels, {h.num_shortcuts:,} shortcuts; {h.proof.text()}"
    else:
        from engine.csp.hierarchy.file import load_pareto_hierarchy
        h = ws.load_csp_hierarchy(path) if ws is not None else load_pareto_hierarchy(path)
        summary = f"{h.num_levels} levels, {h.num_shortcuts:,} shortcuts; {h.proof.text()}"
    return {"file": str(path), "kind": WHAT[kind], "checks": CHECKS[kind],
            "against_graph": ws is not None, "summary": summary,
            "seconds": time.perf_counter() - started}


def _loaded(workspace) -> list[dict]:
    """The window's workspace: its graph, hierarchies and partition, checked in memory."""
    from engine.ch.proof import prove
    from engine.csp.hierarchy.proof import prove_pareto
    from engine.io.cache import check_graph
    out = []
    started = time.perf_counter()
    check_graph(workspace.graph)
    out.append({"file": workspace.graph.source, "kind": "graph", "checks": CHECKS["graph"],
                "summary": "in memory", "seconds": time.perf_counter() - started})
    h = workspace.hierarchy
    if h is not None:
        out.append({"file": "(loaded)", "kind": WHAT[HIERARCHY],
                    "checks": "witness check: no shortcut missing", "summary": prove(h).text(),
                    "seconds": 0.0})
    for p in getattr(workspace, "_csp_hierarchies", {}).values():
        out.append({"file": "(loaded)", "kind": WHAT[PARETO],
                    "checks": "witness check: no shortcut missing",
                    "summary": prove_pareto(p).text(), "seconds": 0.0})
    return out


def to_json(workspace, params: dict, result: dict) -> dict:
    return {"checked": [{**e, "seconds": round(e["seconds"], 4)} for e in result["checked"]],
            "ok": True}


def text(r: dict) -> str:
    lines = []
    for e in r["checked"]:
        where = " (against the graph)" if e.get("against_graph") else ""
        lines += [f"{e['file']}: {e['kind']}, ok in {e['seconds']:.3f} s{where}",
                  f"  checked: {e['checks']}", f"  {e['summary']}"]
    return "\n".join(lines)


CHECK = register(Capability(
    name="check", label="Check files",
    help="check RouteLab files in full (.rlh, .rlb: validator and witness check; .rlp; "
         ".rlg and graph files) and say what was checked and the time",
    params=(), run=check, to_json=to_json, to_text=text, needs_backend=False,
    opens_files=True, order=95, menu="&Tools", menu_text="Check loaded &files"))
