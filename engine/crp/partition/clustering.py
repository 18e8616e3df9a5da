"""Coarsening before METIS: size-constrained label propagation, then the contracted
graph of its clusters (as KaHIP's and Mt-KaHyPar's coarsening, after Meyerhenke,
Sanders and Schulz, "Partitioning complex networks via size-constrained clustering").

Road networks are near-planar with small natural cuts, so clusters of a few dozen
nodes grown along edges hardly ever straddle a good cell border: METIS then runs
on a graph 20-60x smaller for the upper levels (node weights = cluster sizes, edge
weights = edges between) at a cut within a few percent of METIS on the whole graph.

Label propagation visits the nodes sequentially in id order (road networks number
their nodes with locality, which keeps it cache-friendly: a random order was 7x
slower), so the clusters are a function of the graph alone. A node joins the
neighbouring cluster it has the most edges to, if that cluster stays within the
cap; ties go to the smaller cluster, then the smaller id; it stays on a tie with
its own cluster.
"""
from __future__ import annotations

import numba
import numpy as np

ROUNDS = 5            # label-propagation sweeps per pass (most moves happen in the first)
PASSES = 6            # cluster, contract, cluster the contracted graph again, ...
SHRINK = 32           # stop once the cluster graph has n / SHRINK nodes


def cluster(xadj, adj, cap: int):
    """``(cluster_of, graph)``: dense int32 cluster ids per node (clusters of at most
    ``cap`` nodes) and the cluster graph ``(xadj, adj, edge weights, node weights)``, from passes of label propagation, each on the graph contracted
    by the pass before (one pass on a road network only pairs nodes: most have two
    or three neighbours and stay on a tie; the contracted graph's edge weights break
    the ties)."""
    n = xadj.size - 1
    cluster_of = np.arange(n, dtype=np.int32)
    vweight = np.ones(n, dtype=np.int32)
    eweight = np.ones(adj.size, dtype=np.int32)
    k = n
    for _ in range(PASSES):
        label, k2 = _dense(_propagate(xadj, adj, vweight, eweight, int(cap), ROUNDS))
        if k2 == k:
            break
        cluster_of = label[cluster_of]
        xadj, adj, eweight, vweight = contract(xadj, adj, eweight, vweight, label, k2)
        k = k2
        if k * SHRINK <= n:
            break
    return cluster_of, (xadj, adj, eweight, vweight)


@numba.njit(cache=True)
def _propagate(xadj, adj, vweight, eweight, cap, rounds):
    n = xadj.size - 1
    label = np.arange(n, dtype=np.int32)
    size = vweight.astype(np.int64)
    weight = np.zeros(n, dtype=np.int64)        # edge weight from the node to each label
    seen = np.empty(max(n, 1), dtype=np.int32)
    for _ in range(rounds):
        moved = 0
        for v in range(n):
            own, k, wv = label[v], 0, vweight[v]
            for e in range(xadj[v], xadj[v + 1]):
                c = label[adj[e]]
                if weight[c] == 0:
                    seen[k] = c
                    k += 1
                weight[c] += eweight[e]
            best, best_w, best_size = own, weight[own], size[own]
            for i in range(k):
                c = seen[i]
                w, s = weight[c], size[c]
                if c != own and s + wv <= cap and (w > best_w or (w == best_w and best != own and (
                        s < best_size or (s == best_size and c < best)))):
                    best, best_w, best_size = c, w, s
            for i in range(k):
                weight[seen[i]] = 0
            if best != own:
                size[own] -= wv
                size[best] += wv
                label[v] = best
                moved += 1
        if moved == 0:
            break
    return label


@numba.njit(cache=True)
def _dense(label):
    ids = np.full(label.size, -1, dtype=np.int32)
    out = np.empty(label.size, dtype=np.int32)
    k = 0
    for v in range(label.size):
        if ids[label[v]] < 0:
            ids[label[v]] = k
            k += 1
        out[v] = ids[label[v]]
    return out, k


@numba.njit(cache=True)
def contract(xadj, adj, eweight, vweight, cluster_of, k):
    """The cluster graph: ``(cxadj, cadj, cweight, cvweight)`` with int64 offsets and
    int32 neighbours, edge weights (summed over the edges between two clusters) and
    node weights (summed over a cluster); each list in the order its clusters are
    first met."""
    n = xadj.size - 1
    first = np.zeros(k + 1, dtype=np.int64)   # fine nodes grouped by cluster
    for v in range(n):
        first[cluster_of[v] + 1] += 1
    for c in range(k):
        first[c + 1] += first[c]
    members = np.empty(n, dtype=np.int32)
    fill = first[:-1].copy()
    for v in range(n):
        members[fill[cluster_of[v]]] = v
        fill[cluster_of[v]] += 1
    cvweight = np.zeros(k, dtype=np.int32)
    for v in range(n):
        cvweight[cluster_of[v]] += vweight[v]
    slot = np.full(k, -1, dtype=np.int64)      # where cluster d sits in the current list
    cxadj = np.zeros(k + 1, dtype=np.int64)
    cadj = np.empty(adj.size, dtype=np.int32)
    cweight = np.empty(adj.size, dtype=np.int32)
    out = 0
    for c in range(k):
        for i in range(first[c], first[c + 1]):
            v = members[i]
            for e in range(xadj[v], xadj[v + 1]):
                d = cluster_of[adj[e]]
                if d == c:
                    continue
                if slot[d] < cxadj[c]:          # not yet in c's list
                    slot[d] = out
                    cadj[out] = d
                    cweight[out] = 0
                    out += 1
                cweight[slot[d]] += eweight[e]
        cxadj[c + 1] = out
    return cxadj, cadj[:out].copy(), cweight[:out].copy(), cvweight
