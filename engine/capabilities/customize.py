"""customize: cost every CRP cell for a metric decoder; each level is reported with
its phases as it finishes. Writes nothing unless --out is given (a JSON report).

The window sends the editor's Decoder itself (parsed once, in the editor) and, when
its routes follow the metric, the endpoints (``source``, ``target``): the answer then
carries the route on the new metric too, so one edit is one job."""
from __future__ import annotations

import json
from dataclasses import dataclass

from engine.capabilities import QUEUE, Capability, Param, register
from engine.capabilities.common import DECODER, PARTITION, decoder_for, text_lines, use_partition_file
from engine.io.atomic import atomic_write


@dataclass(frozen=True)
class Customized:
    """A customization, and the route asked with it (None when none was asked)."""
    metric: object                  # engine.crp.CellMetric, now the workspace's current one
    route: object = None            # engine.capabilities.route.RouteAnswer on it
    route_error: str = ""           # why there is no route although one was asked


def run(workspace, params: dict, ctx) -> Customized:
    use_devices(workspace, params.get("devices"))
    use_partition_file(workspace, params)
    decoder = decoder_for(workspace, params)
    metric = workspace.customize(decoder, cancel=ctx.cancel, on_level=ctx.record)
    metric.device_bytes = workspace.backend.memory_in_use()
    if params.get("out"):
        with atomic_write(params["out"], "w") as f:
            json.dump(to_json(workspace, params, Customized(metric)), f, indent=1)
    if params.get("source") is None or params.get("target") is None:
        return Customized(metric)
    from engine.capabilities.route import crp_route
    from engine.core.paths import Unreachable
    try:
        return Customized(metric, crp_route(workspace, params))
    except (Unreachable, ValueError) as e:
        return Customized(metric, route_error=str(e).strip("'\""))


def use_devices(workspace, spec) -> None:
    """The --devices parameter: CUDA ids such as "0,1" (engine.crp.customization.multi_gpu
    splits customization over them); empty: every visible GPU. Refused on the CPU, or
    naming a device this machine lacks, before any work."""
    from engine.core.backend import device_count, parse_devices
    if spec and not workspace.backend.is_gpu:
        raise ValueError(f"--devices {spec}: this run customizes on the CPU "
                         f"({workspace.backend.describe()}); --devices needs the GPU backend")
    workspace.use_devices(parse_devices(spec, device_count() if spec else 0))


def to_json(workspace, params: dict, answer: Customized) -> dict:
    metric = answer.metric
    overlay = metric.overlay
    gpus = max((r.get("gpus", 1) for r in metric.timings), default=1)    # multi-GPU levels
    backend = workspace.backend.describe() + (f" x {gpus} GPUs" if gpus > 1 else "")
    return {"decoder": metric.name, "unit": metric.unit, "backend": backend,
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
    params=(PARTITION, DECODER, Param("out", str, None, "write the timing report here (JSON)",
                                      file=True, output=True),
            Param("devices", str, "", "GPUs to customize on: CUDA device ids such as 0,1 "
                  "(the work is split over them; default: every visible GPU)")),
    run=run, to_json=to_json, to_text=text, record_text=level_text,
    order=70, menu="&Metric", menu_text="Show the metric &editor", shortcut="M", policy=QUEUE))
