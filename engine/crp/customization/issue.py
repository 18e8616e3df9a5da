"""Queueing CRP levels on one device (engine.crp.customization.gpu's level variants):
every phase launched on the device's current stream with no host wait, events around
each phase, the overflow flags read later. One GPU queues every level so; several
GPUs (engine.crp.customization.multi_gpu) each queue their range's levels, one after
the other from the one engine thread, and run them at the same time."""
from __future__ import annotations

from engine.crp.customization.cell_metric import CostOverflow


class Issued:
    """Levels queued on one device with no host wait: their S_l, the device's stats
    (per level: overflow, rounds, the variant's scratch) and the events around each
    phase; ``records(flags)`` reads them once the stats are on the host."""

    def __init__(self, backend, levels, shortcuts, stats, marks, infos) -> None:
        self.backend, self.levels, self.shortcuts = backend, levels, shortcuts
        self.stats, self.marks, self.infos = stats, marks, infos

    def records(self, flags) -> list[dict]:
        with self.backend.active():          # the events are this device's
            return [_record(lv, self.backend, m, info, int(flags[i, 1]))
                    for i, (lv, m, info) in enumerate(zip(self.levels, self.marks, self.infos))]


def issue_levels(backend, levels, weights) -> Issued:
    """Queue ``levels`` bottom-up on ``backend``'s current stream (its device current),
    level 0 reading ``weights`` and each level the S of the one before."""
    xp = backend.xp
    stats = xp.zeros((len(levels), 3), dtype=xp.int32)
    shortcuts, marks, infos = [], [], []
    for i, lv in enumerate(levels):
        S = xp.empty(lv.topo.num_shortcuts, dtype=xp.int32)
        m0 = backend.mark()
        lv.map_costs(weights)
        m1 = backend.mark()
        infos.append(lv.search(S, stats[i]))
        m2 = backend.mark()
        lv.collect(S)
        marks.append((m0, m1, m2, backend.mark()))
        shortcuts.append(S)
        weights = S
    return Issued(backend, levels, shortcuts, stats, marks, infos)


def check_overflow(levels, flags) -> None:
    """CostOverflow at the lowest of ``levels`` whose stats row says it overflowed."""
    for i, lv in enumerate(levels):
        if flags[i, 0]:
            raise CostOverflow.at_level(lv.topo.level)


def _record(lv, b, marks, info, rounds) -> dict:
    m0, m1, m2, m3 = marks
    t, extra = lv.topo, {k: v for k, v in info.items() if k != "rounds"}
    return {"level": t.level, "cells": t.num_cells, "shortcuts": t.num_shortcuts,
            "variant": lv.name, "rounds": rounds, **extra,
            "ms": {"mapping": b.elapsed_ms(m0, m1), "search": b.elapsed_ms(m1, m2),
                   "collection": b.elapsed_ms(m2, m3)}}
