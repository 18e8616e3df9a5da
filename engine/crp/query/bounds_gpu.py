"""The CRP query's top-level bound tables on the GPU (engine/kernels/crp_bounds.cu).

bounds.py's tables are one Dijkstra each over the top level (24 M nodes: 98 k top
arcs, 53.6 M shortcuts; about 2,000 tables with the entry groups), minutes of CPU
time after every customization. Here every table is a column of one matrix
D[top arc][table] and all columns converge together by Bellman-Ford pulls (a round:
each top arc takes the least over its cell's row or column, reading only the arcs
that changed in the round before), so the tables cost a few rounds of the top
level's shortcuts times the tables, on the device. The results are the Dijkstras'
raw distances, bit for bit; bounds.py finishes both the same way (marks, minima per
cell).
"""
from __future__ import annotations

import numpy as np

from engine.crp.metric import FORBIDDEN

MODULE = "crp_bounds"
ROUNDS_PER_CHECK = 8       # rounds launched between two reads of the flags


def raw_tables(backend, space, top: int, base: int, cells: int, group, groups: int,
               shortcuts):
    """(to: [top arcs, cells x groups], from: [top arcs, cells]) as host int32 arrays:
    to[y, c * groups + g] is the top-level distance from top arc y to the arcs entering
    top cell c that lead into its g-th subcell, from[y, c] the distance to y from the
    arcs leaving c (FORBIDDEN: none). ``shortcuts``: every level's matrices in the
    query's layout (CrpQuery.shortcuts), on the host or on ``backend``."""
    q, xp, btop = space, backend.xp, int(group.size)
    with backend.active():
        S = xp.asarray(shortcuts, dtype=xp.int32)
        head_cell = q.head_rec[:btop, top, 0]
        tail_cell = q.tail_rec[:btop, top, 0]
        to = _converge(backend, head_cell, q.head_rec[:btop, top, 1], np.ones(btop, np.int32),
                       q.exit_first, q.exit_q, S, cells * groups,
                       (head_cell - base) * groups + group)
        columns = np.diff(q.exit_first)[tail_cell].astype(np.int32)    # a row's length
        frm = _converge(backend, tail_cell, q.tail_rec[:btop, top, 1], columns,
                        q.entry_first, q.entry_q, S, cells, tail_cell - base)
    return to, frm


def _converge(backend, cell_of, start, step, list_first, list_q, S, cols: int, seed):
    """One matrix of tables: D[y, seed[y]] = 0, rounds until none changes."""
    xp, btop = backend.xp, int(cell_of.size)
    D = xp.full((btop, cols), FORBIDDEN, dtype=xp.int32)
    D[xp.arange(btop), xp.asarray(seed)] = 0
    words = (btop + 31) // 32
    now = xp.full(words, 0xFFFFFFFF, dtype=xp.uint32)          # round 0: every seed
    later = xp.zeros(words, dtype=xp.uint32)
    arrays = [xp.asarray(a, dtype=d) for a, d in ((cell_of, np.int32), (start, np.int64),
                                                   (step, np.int32), (list_first, np.int32),
                                                   (list_q, np.int32))]
    # Bellman-Ford settles within (top arcs) rounds: a shortest path visits each once
    most = btop + 1
    flags = xp.zeros(most + ROUNDS_PER_CHECK, dtype=xp.int32)
    threads = btop * ((cols + 3) // 4)
    done = 0
    while True:
        for r in range(done, done + ROUNDS_PER_CHECK):
            backend.launch(MODULE, "bound_round",
                           (*arrays, S, np.int32(btop), np.int32(cols), D, now, later, flags,
                            np.int32(r)), threads=threads)
            now, later = later, now
            later.fill(0)
        if np.any(backend.to_host(flags[done:done + ROUNDS_PER_CHECK]) == 0):
            return backend.to_host(D)
        done += ROUNDS_PER_CHECK
        if done >= most:
            raise RuntimeError("top-level bound tables: Bellman-Ford did not converge")
