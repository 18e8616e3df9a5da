"""Path unpacking on several threads (issue #37): the search path's steps split into
runs of about equal work, each unpacked by unpack.unpack_steps on its own scratch
(a *lane*), and the arcs joined in order.

A metric without unpacking trees (the GPU customizer's) unpacks a shortcut by a
search of its cell, and a route across a continent has many: at 24 M nodes about a
fifth of the query's time. The steps are independent: a step's arcs depend only on
its two ends. A level-l step's work grows about 8x per level (its cell holds about
8 cells of the level below), so runs are cut by that weight. Each lane has its own
search records, heaps and level-0 scratch, sized by the arcs that cross level 0 (the
only ones an unpacking search reaches), and its own stamp for the shared
column-major copy (search._column says why that needs no lock).
"""
from __future__ import annotations

import numpy as np

from engine.core.arrays import huge
from engine.core.cores import usable_cores, worker_threads
from engine.crp.query.unpack import back_scratch, search_records, unpack_steps

MAX_LANES = 4              # threads that unpack one path, the caller's included
STEP_WEIGHT = 8            # a level-l step weighs STEP_WEIGHT ** l
MIN_PARALLEL = 2 * 8 ** 3  # less work than two level-3 steps stays on one thread


class Lanes:
    def __init__(self, crossing0: int, bottom_scratch: tuple, lanes: int | None = None) -> None:
        """``crossing0``: the arcs crossing level 0 (query ids below it);
        ``bottom_scratch``: level 0's scratch arrays (unpack.bottom_space), copied
        per lane; ``lanes``: at most this many threads (default: one per usable core,
        up to MAX_LANES)."""
        self.count = max(1, min(MAX_LANES, usable_cores()) if lanes is None else lanes)
        self._crossing0 = crossing0
        self._bottom = bottom_scratch
        self._scratch: dict[tuple[int, bool], tuple] = {}    # made on first use

    def scratch(self, i: int, searches: bool = True) -> tuple:
        """Lane i's (urec, touched, heap, brec and its list and heap, level-0
        scratch, stamp); without searches (a walk of the trees) their rows are none."""
        if (i, searches) not in self._scratch:
            n = self._crossing0 if searches else 0
            self._scratch[i, searches] = (
                huge(search_records(max(n, 1), 4)), np.empty(n + 1, np.int32),
                np.empty(max(n, 1), np.int64), back_scratch(n),
                tuple(np.empty_like(a) for a in self._bottom), np.zeros(1, np.int64))
        return self._scratch[i, searches]

    def unpack(self, step_arc, step_level, query: int, searches: bool, space, shortcuts,
               clique_first, hints, back) -> np.ndarray:
        """Arcs (query ids) of the whole step list. ``query``: the search's number (the
        lanes' column stamps); ``searches``: False where the metric's trees make
        unpacking a walk (one lane then); hints and back as unpack_steps takes them,
        less the per-lane parts."""
        runs = split_runs(step_level, self.count if searches else 1)
        jobs = []
        for i, (lo, hi) in enumerate(runs):
            urec, touched, heap, brec, bottom, stamp = self.scratch(i, searches)
            stamp[0] = column_stamp(query, i, unpacking=True)
            columns = (*back[3][:3], stamp)
            args = (step_arc, step_level, lo, hi, back[0], space, shortcuts, clique_first,
                    urec, touched, heap, (*hints[:7], bottom), (*back[:3], columns, *brec))
            jobs.append(args)
        if len(jobs) == 1:
            return unpack_steps(*jobs[0])
        pool = worker_threads(self.count - 1)
        later = [pool.submit(unpack_steps, *args) for args in jobs[1:]]
        first = unpack_steps(*jobs[0])
        return np.concatenate([first] + [f.result() for f in later])


def column_stamp(query: int, lane: int, unpacking: bool) -> int:
    """search._column's stamp: phase x 8 + lane, where query q's search is phase 2q and
    its unpacking phase 2q + 1 (so the lanes read what the search filled as filled in
    an earlier phase)."""
    return (2 * query + int(unpacking)) * 8 + lane


def split_runs(step_level: np.ndarray, lanes: int) -> list[tuple[int, int]]:
    """Step ranges [lo, hi) covering every step, at most ``lanes`` of them, of about
    equal weight (STEP_WEIGHT ** level per shortcut step)."""
    n = step_level.size
    if lanes <= 1 or n < 2:
        return [(0, n)]
    weight = np.where(step_level >= 0, float(STEP_WEIGHT) ** np.maximum(step_level, 0), 0.0)
    weight[0] = 0.0
    total = weight.sum()
    if total < MIN_PARALLEL:
        return [(0, n)]
    cum = np.cumsum(weight)
    cuts = np.searchsorted(cum, total * np.arange(1, lanes) / lanes, side="left") + 1
    edges = sorted({0, n, *(int(c) for c in cuts if 0 < c < n)})
    return list(zip(edges[:-1], edges[1:]))
