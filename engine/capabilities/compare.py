"""compare: every SSSP method and the CPU reference from one node, timed and checked."""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.capabilities import Capability, register
from engine.capabilities.common import METRIC, SOURCE

if TYPE_CHECKING:
    from engine.sssp.compare import Comparison


def compare(workspace, params: dict, ctx) -> Comparison:
    from engine.sssp.compare import compare_methods
    return compare_methods(workspace, int(params["source"]), params.get("metric"), ctx)


def to_json(workspace, params: dict, c: Comparison) -> dict:
    return {"from": int(workspace.graph.node_id[c.source]), "metric": c.metric,
            "backend": c.backend, "exact": c.exact, "verdict": c.verdict,
            "timings": [{"name": t.name, "label": t.label, "ms": round(t.ms, 4), "runs": t.runs,
                         "mismatches": t.mismatches} for t in c.timings]}


def text(r: dict) -> str:
    lines = [f"{r['metric']} trees from {r['from']} on {r['backend']}: {r['verdict']}"]
    lines += [f"  {t['label']:<40} {t['ms']:10.2f} ms  (best of {t['runs']})" for t in r["timings"]]
    return "\n".join(lines)


COMPARE = register(Capability(
    name="compare", label="Compare SSSP methods", help="time every SSSP method against the reference",
    params=(SOURCE, METRIC), run=compare, to_json=to_json, to_text=text,
    order=40, menu="&Tree", shortcut="C"))
