"""CRP customization over 1, 2, 4 and 8 GPUs on one overlay (issues #37 and #40), shared
by the crp_multi_gpu and continental sections.

``measure`` builds one customizer per GPU count on the same compiled microcode, warms
each up (compilation, first touch), then times RUNS customizations of each, the counts
interleaved so that a drift of the machine hits all alike, and checks every run's
shortcut costs equal to one GPU's, bit for bit. Per count it keeps the median of the
levels' time (``total_ms``: first launch until every GPU is done, the gather
included; the decode, which every GPU does for itself at the same time, apart) and
the median run's records: per level the slowest GPU's time and each GPU's own
(``gpu_ms``), and the gather.

``model`` predicts a count that was not run (8 GPUs where no 8-GPU machine is lent)
from one GPU's measured per-level times and the split plan that count would use
(engine.crp.customization.cell_ranges.plan_split, pure NumPy): a split level takes
its time times the largest part's share of its estimated work, the levels above
take one GPU's time, plus the largest measured gather, plus the host's overhead: the
run's time beyond its levels' (one engine thread launches every GPU's decode and
levels in turn and reads each GPU's flags, so each GPU adds launch time that only
enough work per GPU hides), fitted as a + b x GPUs over the counts that ran. The
same model is given for the counts that did run, so its error is on the table
beside it.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

COUNTS = (1, 2, 4, 8)
RUNS = 5


def counts_for(available: int) -> list[int]:
    return [k for k in COUNTS if k <= available]


def measure(overlay, decoder, microcode, counts, emit=None, level_variants=None) -> dict[int, dict]:
    """Per GPU count: total_ms, decode_ms, copy_ms (medians), records (the median
    run's per-level records), split (level, cells per part, work shares), device;
    the smallest count also keeps its last run's CellMetric as ``metric`` and the
    query's numbering as ``query_space`` (for queries). Emitted as they come: setup_s (build + the untimed first run) and the
    medians."""
    from engine.core.backend import gpu_backend
    from engine.crp.customization.customize import Customizer
    gpus = [gpu_backend(i) for i in range(max(counts))]
    customizers, space = {}, None
    for k in counts:
        t0 = time.perf_counter()
        c = Customizer(overlay, None, level_variants, devices=gpus[:k], microcode=microcode,
                       query_space=space)
        c.customize(decoder)                                  # untimed: compilation, first touch
        customizers[k], space = c, c.query_space
        if emit:
            emit(f"setup_s {k}", time.perf_counter() - t0)
    reference = None
    runs = {k: [] for k in counts}
    for _ in range(RUNS):
        for k, c in customizers.items():
            m = c.customize(decoder)
            if reference is None:
                reference = [np.array(s) for s in m.shortcuts]
            for level, (a, b) in enumerate(zip(reference, m.shortcuts)):
                if not np.array_equal(a, b):
                    raise AssertionError(f"{k} GPUs: level {level}'s shortcut costs differ "
                                         "from one GPU's")
            runs[k].append((m.total_ms, m.decode_ms, m.copy_ms, m.timings))
            if k == counts[0]:
                last = m
    out = {}
    for k, c in customizers.items():
        ordered = sorted(runs[k], key=lambda r: r[0])
        out[k] = {"total_ms": statistics.median(r[0] for r in ordered),
                  "decode_ms": statistics.median(r[1] for r in ordered),
                  "copy_ms": statistics.median(r[2] for r in ordered),
                  "records": ordered[len(ordered) // 2][3], "split": _split(c),
                  "device": c.backend.device_name, "equal_runs": RUNS}
        if k == counts[0]:
            out[k]["metric"], out[k]["query_space"] = last, space
        if emit:
            emit(f"customize_ms {k}", out[k]["total_ms"])
            emit(f"decode_ms {k}", out[k]["decode_ms"])
    return out


def _split(customizer) -> dict | None:
    if not customizer.devices:
        return None
    plan = customizer.gpu.plan
    return {"level": plan.split_level, "cells": np.diff(plan.cuts[-1]).tolist(),
            "work": _shares(plan)}


def _shares(plan) -> list[float]:
    """Each part's share of the estimated work below and at the split level."""
    return (plan.work / max(plan.work.sum(), 1)).round(3).tolist()


def level_ms(record: dict) -> float:
    return sum(v for k, v in record["ms"].items() if k != "gather")


def model(overlay, one_gpu_records, plan, gather_ms: float = 0.0) -> float:
    """Predicted levels' time under ``plan`` (cell_ranges.plan_split for that many GPUs;
    None: one GPU); see the module's docstring."""
    from engine.crp.customization.cell_ranges import ancestors, cell_work, parent_cells
    times = [level_ms(r) for r in one_gpu_records]
    if plan is None:
        return sum(times)
    k = plan.parts
    parents = parent_cells(overlay)
    total = 0.0
    for level, t in enumerate(times):
        if level > plan.split_level:
            total += t
            continue
        work = cell_work(overlay.levels[level])
        owner = np.searchsorted(plan.cuts[-1], ancestors(overlay, parents, level, plan.split_level),
                                side="right") - 1
        share = np.bincount(owner, weights=work, minlength=k) / max(work.sum(), 1)
        total += t * float(share.max())
    return total + (gather_ms if plan.split_level + 1 < len(times) else 0.0)


def scaling_rows(overlay, label: str, results: dict[int, dict]) -> list[list[str]]:
    """One row per GPU count, run or modelled: the time, speed-up, efficiency, the model,
    the device, and per level each GPU's time."""
    one = results[1]
    base = one["total_ms"]
    gathers = [_gather(r["records"]) for r in results.values()]
    gather = max(gathers, default=0.0)
    from engine.crp.customization.cell_ranges import plan_split
    a, b = overhead_fit(results)
    rows = []
    for k in COUNTS:
        plan = plan_split(overlay, k) if k > 1 else None
        predicted = model(overlay, one["records"], plan, gather) + a + b * k
        if k not in results:
            speedup = base / predicted if predicted > 0 else float("nan")
            rows.append([label, f"{k}", f"{predicted:.2f} ms (model)",
                         f"{speedup:.2f}x", f"{speedup / k:.0%}", "not run",
                         f"modelled: no {k}-GPU machine lent; split at level "
                         f"{plan.split_level}, work shares {_shares(plan)}; "
                         f"host overhead {a + b * k:.2f} ms of it (fit {a:.2f} + {b:.2f} x GPUs)"])
            continue
        r = results[k]
        t = r["total_ms"]
        rows.append([label, f"{k}", f"{t:.2f} ms", f"{base / t:.2f}x", f"{base / t / k:.0%}",
                     r["device"], f"model {predicted:.2f} ms; decode {r['decode_ms']:.2f} ms "
                     f"apart; gather {_gather(r['records']):.2f} ms; {_levels_text(r)}; "
                     f"median of {RUNS}, every run equal to one GPU's"])
    return rows


def overhead_fit(results: dict[int, dict]) -> tuple[float, float]:
    """(a, b): the run's time beyond the sum of its levels' (slowest GPU each) as
    a + b x GPUs, least squares over the counts that ran (b = 0 with one count)."""
    k = np.array(sorted(results), dtype=float)
    extra = np.array([results[int(c)]["total_ms"] - sum(sum(r["ms"].values())
                                                        for r in results[int(c)]["records"])
                      for c in k])
    if k.size < 2:
        return (float(extra.mean()) if extra.size else 0.0), 0.0
    b, a = np.polyfit(k, extra, 1)
    return float(a), float(b)


def _gather(records) -> float:
    return sum(r["ms"].get("gather", 0.0) for r in records)


def _levels_text(r: dict) -> str:
    parts = []
    for rec in r["records"]:
        per = rec.get("gpu_ms")
        each = f" (GPUs {'/'.join(f'{x:.2f}' for x in per)})" if per else ""
        parts.append(f"L{rec['level']} {level_ms(rec):.2f}{each}")
    split = r["split"]
    where = (f"; split at level {split['level']}, work shares {split['work']}" if split else "")
    return "levels [" + ", ".join(parts) + "] ms" + where


HEADER = ["graph", "GPUs", "customization", "speed-up", "efficiency", "device", "notes"]
