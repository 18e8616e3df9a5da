"""Bytes per node and per arc of the large structures (issue #37, "memory is designed"):
every array each structure holds, summed, on the generated network of
ROUTELAB_MEMORY_NODES nodes (default 1 M), on the CPU backend (the device holds the
same arrays where a structure is uploaded). docs/memory.md gives the formulas.

    ROUTELAB_MEMORY_NODES=1000000 python scripts/bench.py --only memory
"""
from __future__ import annotations

import os

import numpy as np

from benchmarks.common import timed


def arrays(obj, seen=None, prefix: str = "") -> dict[str, np.ndarray]:
    """Every NumPy array ``obj`` holds (fields, cached properties, dicts, nested
    objects), by dotted name, each array once."""
    seen = set() if seen is None else seen
    out = {}
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return {prefix or "array": obj}
    items = obj.items() if isinstance(obj, dict) else \
        getattr(obj, "__dict__", {}).items() if not isinstance(obj, (str, bytes, int, float)) else ()
    for name, value in items:
        key = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, np.ndarray):
            if id(value) not in seen:
                seen.add(id(value))
                out[key] = value
        elif isinstance(value, dict) or (hasattr(value, "__dict__") and not callable(value)
                                          and type(value).__module__.startswith("engine")):
            out.update(arrays(value, seen, key))
    return out


def row(what: str, held: dict, n: int, m: int, formula: str) -> list[str]:
    total = sum(a.nbytes for a in held.values())
    return [what, f"{total / 2**20:,.1f}", f"{total / n:,.1f}", f"{total / m:,.1f}", formula]


def bench_memory() -> tuple[list[str], list[list[str]]]:
    """One row per structure: MiB, bytes per node, bytes per road arc, the formula."""
    from engine.ch import contract, phast
    from engine.core.backend import cpu_backend
    from engine.core.turns import turn_graph
    from engine.generate.network import generate_road_network

    n = int(os.environ.get("ROUTELAB_MEMORY_NODES", 1_000_000))
    cpu = cpu_backend()
    g, _ = timed(generate_road_network, n, seed=1)
    n, m = g.num_nodes, g.num_arcs
    rows = [row("graph: CSR, metrics, ids, coordinates, arc attributes", arrays(g), n, m,
                "first_out 4n + head 4m + 4m per metric + node_id 8n + lon/lat 16n + attributes")]
    g.tail, g.backward, g.xy                                        # noqa: B018 (cached on use)
    derived = {k: v for k, v in arrays(g).items() if k.split(".")[0] in ("tail", "backward", "xy")}
    rows.append(row("graph, derived on use: tail, backward CSR, projected xy", derived, n, m,
                    "tail 4m + (first_in 4n + tail 4m + order 4m) + xy 16n"))
    turns = turn_graph(g)
    rows.append(row(f"turn graph: {turns.num_turns:,} turns ({turns.num_turns / m:.2f} per arc)",
                    arrays(turns), n, m, "first_turn 4m + first_turn_in 4m + (to, from, turn_in 12 "
                    "+ type 1) per turn"))
    h = contract(g, "travel_time", backend=cpu)
    held = arrays(h)
    held.pop("graph", None)
    rows.append(row(f"hierarchy (CH): {h.arc_tail.size:,} arcs ({h.arc_tail.size / m:.2f} per "
                    f"arc), {h.num_levels} levels", {k: v for k, v in held.items()
                                                      if not k.startswith("graph.")}, n, m,
                    "node_level 4n + per hierarchy arc: tail, head, weight, child1, child2 40 "
                    "+ up/down id 8 + core k^2 12"))
    query = phast.PhastQuery(h, cpu)
    shared = [*arrays(g).values(), *held.values()]       # the graph's and the hierarchy's own
    index = {f"index.{k}": v for k, v in arrays(query.index).items()
             if not any(v is a for a in shared)}
    own = {f"prepared.{k}": v for k, v in arrays(query.prepared).items()
           if not any(v is a for a in shared)}
    rows.append(row("PHAST index: sweep arrays by level + the graph prepared for parents",
                    {**index, **own}, n, m, "per hierarchy arc (up or down): tail, head, weight 24; "
                    "+ uint32 weight 4m (GPU: + up_begin/up_end 16n, level 4n, core_index 4n)"))
    kept = query.device_tree(0)
    rows.append(row("PHAST tree kept on the backend", {"dist": kept.dist, "parent_arc": kept.parent_arc},
                    n, m, "dist 8n + parent_arc 4n (GPU query buffers: d 8n + scratch 4n per source)"))
    rows.append(row("  read back: whole tree / colour bins", {"tree": np.empty(16 * n, np.uint8)},
                    n, m, "16n (distance, parent, parent_arc) / bins n"))
    rows += _drawing_rows(g, n, m)
    return ["structure", "MiB", "B/node", "B/arc", "formula"], rows


def _drawing_rows(g, n: int, m: int) -> list[list[str]]:
    """The window's geometry (app.network_geometry: segments and their levels of detail,
    the node picker), where the window's modules import (PySide6 and pyqtgraph)."""
    try:
        from app.network_geometry import build_drawing
    except ImportError as e:
        return [["window geometry", "n/a", "", "", f"app does not import here: {e}"]]
    drawing = build_drawing(g)
    held = {"points": drawing.points, "arc_group": drawing.arc_group,
            "node_groups": drawing.node_groups}
    held = {k: v for k, v in held.items() if v is not None}
    segments = sum(level.a.size for level in drawing.levels)
    exact = drawing.levels[-1].a.size
    for i, level in enumerate(drawing.levels):
        held.update({f"level{i}.{k}": v for k, v in arrays(level).items()
                     if k != "points" or level.cell > 0})
    rows = [row(f"window geometry: {drawing.points.shape[0]:,} points, {len(drawing.levels)} "
                f"levels of detail ({segments:,} segments, {exact:,} exact)", held, n, m,
                "points 16 per point + per segment a, b, end_a, end_b, tile 20 (+ group "
                "offsets, reach); coarse levels add their segments and centres")]
    t = drawing.tree
    rows.append(row("  node picker (cKDTree on xy)", {"data": t.data, "indices": t.indices},
                    n, m, "xy 16n + indices 8n (+ scipy's tree nodes)"))
    return rows


SECTIONS = {"memory": ("Bytes per node and per arc of the large structures (generated, "
                       "ROUTELAB_MEMORY_NODES)", bench_memory)}
