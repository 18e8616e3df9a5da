"""The top level of a large graph: the whole graph into ceil(n / 2^top) cells, the
one split that no parallelism over cells can speed up (METIS on 24 M nodes alone
would take most of a minute).

Instead: cluster the graph (engine.crp.partition.clustering, clusters of up to
1/16 of a top cell), let METIS split the cluster graph TRIES times with different
seeds (in parallel on the workers; the cluster graph is 30-90x smaller, so a try
costs milliseconds on NY), keep the try with the smallest cut (ties: the first),
project it to the nodes and refine it there (engine.crp.partition.refine). One
METIS run on a cluster graph cuts 10-20 % more than METIS on the whole graph; the
best of 16, refined, cuts about 10 % less (DIMACS NY, 17 cells: 463 edges against
501-513). Which try wins depends on the cuts alone, never on the number of workers.
"""
from __future__ import annotations

import numpy as np

from engine.crp.partition.clustering import cluster
from engine.crp.partition.refine import refine

TRIES = 16
CLUSTER_DIVISOR = 16        # clusters of at most a 16th of a top cell
IMBALANCE = 1.03            # METIS's default (ufactor 30): the refinement keeps to it
COARSE_MIN_NODES = 50_000   # below this METIS splits the whole graph directly, in well under 1 s


def cluster_graph(xadj, adj, top_log2: int):
    """``(cluster_of, (xadj, adj, node weights, edge weights))`` for the top split."""
    cluster_of, (cxadj, cadj, eweight, vweight) = cluster(
        xadj, adj, max(2, (1 << top_log2) // CLUSTER_DIVISOR))
    return cluster_of, (cxadj.astype(np.int32), cadj, vweight, eweight)


def try_seeds(seed: int) -> list[int]:
    """The METIS seeds of the tries: distinct, within METIS's range (a C int), from ``seed``."""
    return [(seed * TRIES + i) % 2**31 for i in range(TRIES)]


def split_top(workers, xadj, adj, cluster_of, nparts: int, seed: int, report, cancel):
    """The top-level part (int32 per node, 0..nparts-1) of every node."""
    tries = workers.map(_try, [("coarse", nparts, s) for s in try_seeds(seed)], cancel,
                        lambda done: report(0.8 * done / TRIES))
    best = min(range(TRIES), key=lambda i: (tries[i][0], i))
    part = tries[best][1][cluster_of]
    n = part.size
    max_size = max(int(np.bincount(part).max()), int(np.ceil(IMBALANCE * n / nparts)))
    refine(xadj, adj, part, nparts, max_size)
    report(1.0)
    return part


def _try(job) -> tuple[int, np.ndarray]:
    import pymetis      # here, not at the top: loading a saved .rlp needs no METIS
    from engine.crp.partition.workers import shared
    name, nparts, seed = job
    xadj, adj, vweight, eweight = shared(name)
    cut, parts = pymetis.part_graph(nparts, pymetis.CSRAdjacency(xadj, adj), vweights=vweight,
                                    eweights=eweight, options=pymetis.Options(seed=seed))
    return int(cut), np.asarray(parts, dtype=np.int32)
