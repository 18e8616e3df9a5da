"""CRP customization on several GPUs (Delling, Kobitzsch, Werneck, "Customizing Driving
Directions with GPUs": each level is a list of independent (cell, entry batch)
blocks, so split them over the GPUs and gather the top levels on one).

The split follows the nesting (engine.crp.customization.cell_ranges): every GPU takes a
contiguous range of the cells of the *split level*, balanced by estimated work, and
costs levels 0..split of its range alone, with the same level variants as one GPU
(engine.crp.customization.gpu) on its range's slice of the topology, microcode and
min-plus layout. Nothing crosses GPUs below the split. Then the first GPU, the *main*
one, waits (on the device) for each GPU's last level, copies their parts of S_split
into one array (peer copies) and costs the levels above, whole. The results are the
one-GPU ones bit for bit: the same kernels cost the same cells from the same inputs.

One thread owns everything: the engine thread that calls ``run`` issues each GPU's
levels in turn on that GPU's stream (CuPy launches do not wait), so the GPUs work at
the same time with no thread of their own. Each GPU decodes the metric itself
(engine.crp.customization.customize), so no turn weights cross GPUs.
"""
from __future__ import annotations

from engine.crp.customization.cell_ranges import RangeView, plan_split, slice_microcode
from engine.crp.customization.gpu import build_levels
from engine.crp.customization.issue import check_overflow, issue_levels


class MultiGpuCustomizer:
    """Device state for customizing ``overlay`` split over ``backends`` (one Backend per
    GPU, engine.core.backend.gpu_backend(i); the first is the main GPU). The same
    Backend may come twice (tests split over one GPU so). ``split_level``: None
    chooses it (cell_ranges.plan_split); ``microcode``: level 0's instructions, sliced
    per GPU; other options as GpuCustomizer's."""

    def __init__(self, overlay, backends, level_variants=None, split_level: int | None = None,
                 microcode=None, **options) -> None:
        if not backends:
            raise ValueError("multi-GPU customization needs at least one GPU")
        if any(not b.is_gpu for b in backends):
            raise ValueError("multi-GPU customization runs on GPU backends only")
        self.overlay, self.backends = overlay, list(backends)
        self.main = self.backends[0]
        self.num_turns = overlay.turns.num_turns
        self.plan = plan_split(overlay, len(self.backends), split_level)
        split, layouts = self.plan.split_level, {}
        self.views, self.parts = [], []
        for d, b in enumerate(self.backends):
            view = RangeView(overlay, self.plan, d, layouts)
            opts = dict(options)
            if microcode is not None:
                opts["microcode"] = slice_microcode(microcode, *self.plan.cells(0, d))
            with b.active():
                self.parts.append(build_levels(b, view.levels, level_variants, opts, view))
            self.views.append(view)
        with self.main.active():
            self.top = build_levels(self.main, overlay.levels[split + 1:], level_variants,
                                    dict(options), overlay)
        self._issued: list = []
        self._top_issued = None

    @property
    def split_level(self) -> int:
        return self.plan.split_level

    @property
    def variants(self) -> list[str]:
        return [lv.name for lv in self.parts[0]] + [lv.name for lv in self.top]

    def run(self, turn_weights):
        """Per-level records; CostOverflow names the lowest level with a path cost of
        2^31 or more, as on one GPU. ``turn_weights``: one int32 array per GPU, on that
        GPU (each decodes), or one array (host or main GPU) copied to every GPU."""
        weights = self._weights(turn_weights)
        self._issued, done = [], []
        for b, levels, w in zip(self.backends, self.parts, weights):
            with b.active():                  # queued, not waited for: the GPUs overlap
                self._issued.append(issue_levels(b, levels, w))
                done.append(b.mark())
        gather_ms = None
        if self.top:
            m0, whole = self._gather(done)
            m1 = self.main.mark()
            with self.main.active():
                self._top_issued = issue_levels(self.main, self.top, whole)
            gather_ms = (m0, m1)
        return self._records(gather_ms)

    def _weights(self, turn_weights) -> list:
        if isinstance(turn_weights, (list, tuple)):
            if len(turn_weights) != len(self.backends):
                raise ValueError(f"{len(turn_weights)} turn-weight arrays for "
                                 f"{len(self.backends)} GPUs")
            given = list(turn_weights)
        else:
            given = [turn_weights] * len(self.backends)
        out = []
        for b, w in zip(self.backends, given):
            with b.active():
                if hasattr(w, "get") and w.device.id != b.device_id:     # on another GPU
                    copy = b.xp.empty(w.shape, dtype=w.dtype)
                    b.copy_into(copy, w)
                    w = copy
                w = b.xp.ascontiguousarray(b.xp.asarray(w, dtype=b.xp.int32))
                if w.shape != (self.num_turns,):
                    raise ValueError(f"turn weights: {w.shape} for {self.num_turns} turns")
                out.append(w)
        return out

    def _gather(self, done):
        """The whole S_split on the main GPU: each GPU's part copied in once its levels
        are done (a wait on the device, not the host)."""
        main, split = self.main, self.plan.split_level
        with main.active():
            start = main.mark()
            whole = main.xp.empty(self.overlay.levels[split].num_shortcuts, dtype=main.xp.int32)
            for view, issued, event in zip(self.views, self._issued, done):
                part = issued.shortcuts[split]
                first = view.shortcut_first[split]
                main.wait(event)
                main.copy_into(whole[first:first + part.size], part)
        return start, whole

    def _records(self, gather_ms) -> list[dict]:
        """One record per level, as on one GPU: a split level's phases take the
        slowest GPU's time, its rounds the most, its cells and shortcuts the whole
        level's, and ``gpu_ms`` lists each GPU's own time; the first level above the
        split adds the gather as a phase."""
        flags = []
        for b, issued in zip(self.backends, self._issued):
            with b.active():
                flags.append(b.to_host(issued.stats))
        top_flags = None
        if self._top_issued is not None:
            with self.main.active():
                top_flags = self.main.to_host(self._top_issued.stats)
        per_gpu = [issued.records(f) for issued, f in zip(self._issued, flags)]
        records = [_merged(self.overlay.levels[i], [r[i] for r in per_gpu])
                   for i in range(self.plan.split_level + 1)]
        if top_flags is not None:
            top = self._top_issued.records(top_flags)
            if top and gather_ms is not None:
                top[0]["ms"] = {"gather": self.main.elapsed_ms(*gather_ms), **top[0]["ms"]}
            records += top
        _raise_lowest(self.parts, flags, self.top, top_flags)
        return records

    def copy_to_host(self, out) -> None:
        """Every level's S of the last run into ``out`` (the levels one after the
        other, each whole; pinned host memory), each GPU copying its parts at once."""
        offsets, total = [], 0
        for topo in self.overlay.levels:
            offsets.append(total)
            total += topo.num_shortcuts
        if out.size != total:
            raise ValueError(f"{out.size} host entries for {total} shortcuts")
        for b, view, issued in zip(self.backends, self.views, self._issued):
            for level, part in enumerate(issued.shortcuts):
                first = offsets[level] + view.shortcut_first[level]
                b.to_host_async(part, out[first:first + part.size])
        if self._top_issued is not None:
            for level, S in zip(range(self.plan.split_level + 1, len(offsets)),
                                self._top_issued.shortcuts):
                self.main.to_host_async(S, out[offsets[level]:offsets[level] + S.size])
        self.synchronize()

    def synchronize(self) -> None:
        for b in self.backends:
            b.synchronize()


def _merged(topo, records: list[dict]) -> dict:
    phases = records[0]["ms"].keys()
    return {**records[0], "cells": topo.num_cells, "shortcuts": topo.num_shortcuts,
            "rounds": max(r["rounds"] for r in records), "gpus": len(records),
            "gpu_ms": [sum(r["ms"].values()) for r in records],
            "ms": {k: max(r["ms"][k] for r in records) for k in phases}}


def _raise_lowest(parts, flags, top, top_flags) -> None:
    """CostOverflow at the lowest level that overflowed on any GPU."""
    for i in range(len(parts[0])):
        for levels, f in zip(parts, flags):
            check_overflow(levels[i:i + 1], f[i:i + 1])
    if top_flags is not None:
        check_overflow(top, top_flags)
