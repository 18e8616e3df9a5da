"""customize: cost every CRP cell for a metric decoder; each level is reported with
its phases as it finishes. Writes nothing unless --out is given (a JSON report)."""
from __future__ import annotations

import json

from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import (DECODER, DECODER_TEXT, PARTITION, decoder_for, text_lines,
                                        use_partition_file)
from engine.io.atomic import atomic_write


def run(workspace, params: dict, ctx):
    use_partition_file(workspace, params)
    decoder = decoder_for(workspace, params)
    metric = workspace.customize(decoder, cancel=ctx.cancel, on_level=ctx.record)
    metric.device_bytes = workspace.backend.memory_in_use()
    if params.get("out"):
        with atomic_write(params["out"], "w") as f:
            json.dump(to_json(workspace, params, metric), f, indent=1)
    return metric


def to_json(workspace, params: dict, metric) -> dict:
    overlay = metric.overlay
    return {"decoder": metric.name, "unit": metric.unit, "backend": workspace.backend.describe(),
            "decode_ms": round(metric.decode_ms, 3), "total_ms": round(metric.total_ms, 3),
            "levels": [dict(r, ms={k: round(v, 3) for k, v in r["ms"].items()})
                       for r in metric.timings],
            "overlay": overlay.summary(), "notes": list(metric.notes), "out": params.get("out"),
            "device_bytes": metric.device_bytes}


def level_text(record: dict) -> str:
    phases = "  ".join(f"{k} {v:.2f}" for k, v in record["ms"].items())
    return (f"  level {record['level']}: {record['cells']:>7,} cells  "
            f"{record['shortcuts']:>10,} shortcuts  {phases} ms")


def text(r: dict) -> str:
    lines = [f"customized {r['decoder']} ({r['unit'] or 'units'}) on {r['backend']}: "
             f"decode {r['decode_ms']:.2f} ms + cells {r['total_ms']:.2f} ms"]
    # the levels were printed as they finished (record_text)
    lines += [f"  note: {n}" for n in r["notes"]]
    return text_lines(lines, r["out"], "report")


CUSTOMIZE = register(Capability(
    name="customize", label="Customize (CRP)", help="cost the CRP overlay for a metric decoder",
    params=(PARTITION, DECODER, DECODER_TEXT, Param("out", str, None, "write the timing report here (JSON)",
                                      file=True)),
    run=run, to_json=to_json, to_text=text, record_text=level_text,
    order=70, menu="&Metric", menu_text="Show the metric &editor", shortcut="M", policy=QUEUE))
