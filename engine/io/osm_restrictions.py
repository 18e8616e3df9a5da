"""OpenStreetMap turn restrictions: type=restriction relations read from the file,
then resolved into banned (from_arc, to_arc) pairs of the built arc list.

Only car restrictions with one via *node* are used; what is skipped, and why, is
counted in the reader's ``OsmReport`` (engine.io.osm_report).
"""
from __future__ import annotations

import numba
import numpy as np

from engine.io.osm_report import OsmReport

__all__ = ["read_restriction", "resolve_restrictions"]

_CAR_MODES = frozenset({"motorcar", "motor_vehicle", "vehicle"})


def read_restriction(rel, report: OsmReport):
    """(only?, from way ids, via node id, to way ids) of a car restriction, else None."""
    tags = rel.tags
    value = (tags.get("restriction:motorcar") or tags.get("restriction:motor_vehicle")
             or tags.get("restriction"))
    report.restrictions += 1
    if value is None:
        if any(t.k.startswith("restriction:") for t in tags):  # hgv, bus, conditional
            report.restrictions_not_for_cars += 1
        else:
            report.restrictions_unresolved += 1
        return None
    if _CAR_MODES & {e.strip() for e in (tags.get("except") or "").split(";")}:
        report.restrictions_not_for_cars += 1
        return None
    if value.startswith("no_"):
        only = False
    elif value.startswith("only_"):
        only = True
    else:
        report.restrictions_unresolved += 1
        return None
    frm, via, to = [], [], []
    for m in rel.members:
        if m.role == "from" and m.type == "w":
            frm.append(m.ref)
        elif m.role == "to" and m.type == "w":
            to.append(m.ref)
        elif m.role == "via":
            via.append((m.type, m.ref))
    if any(t != "n" for t, _ in via):
        report.restrictions_via_way += 1
        return None
    if len(via) != 1 or not frm or not to:
        report.restrictions_unresolved += 1
        return None
    return only, frm, via[0][1], to


def resolve_restrictions(restrictions, way_ids, unique_ids, node_of_u, tail, head,
                         arc_way, arc_edge, report: OsmReport):
    """Banned (from_arc, to_arc) pairs, as indices into the arc list (of a restriction
    resolved, every pair it bans; duplicates and order are left to RoadGraph.from_arcs,
    which keeps each pair once, sorted).

    The restrictions become flat arrays, the arcs at their via nodes sorted tables keyed
    by (way, node), and one Numba pass (_resolve) decides each restriction as the
    per-restriction rules of _resolve_one say: no Python runs per relation."""
    if not restrictions:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    only = np.array([r[0] for r in restrictions], dtype=np.bool_)
    via_ids = np.array([r[2] for r in restrictions], dtype=np.int64)
    from_first, from_way = _way_lists([r[1] for r in restrictions], way_ids)
    to_first, to_way = _way_lists([r[3] for r in restrictions], way_ids)
    pos = np.minimum(np.searchsorted(unique_ids, via_ids), unique_ids.size - 1)
    via_node = np.where(unique_ids[pos] == via_ids, node_of_u[pos], -1).astype(np.int64)

    # Arcs entering / leaving via nodes, sorted by key way * n + node (stable: arc order
    # within a key); the arcs leaving them by node.
    n = int(max(head.max(initial=-1), tail.max(initial=-1), via_node.max())) + 1
    is_via = np.zeros(n, bool)
    is_via[via_node[via_node >= 0]] = True
    into, out = np.flatnonzero(is_via[head]), np.flatnonzero(is_via[tail])
    in_key, in_arc = _keyed(arc_way[into].astype(np.int64) * n + head[into], into)
    out_key, out_arc = _keyed(arc_way[out].astype(np.int64) * n + tail[out], out)
    out_node, out_node_arc = _keyed(tail[out].astype(np.int64), out)
    pairs, used = _resolve(only, via_node, from_first, from_way, to_first, to_way, n,
                           in_key, in_arc, out_key, out_arc, out_node, out_node_arc,
                           np.asarray(arc_edge, np.int64))
    report.restrictions_used += int(used.sum())
    report.restrictions_unresolved += int(used.size - used.sum())
    return pairs[:, 0], pairs[:, 1]


def _keyed(key: np.ndarray, arc: np.ndarray):
    """(sorted keys, their arcs), equal keys in arc order."""
    order = np.argsort(key, kind="stable")
    return key[order], arc[order].astype(np.int64)


def _way_lists(lists, way_ids: np.ndarray):
    """(first, way index) of the restrictions' from (or to) way lists as CSR rows,
    each way id as the index of its way (of an id given twice, the last; -1 for an
    id that is not a kept way), found by a sort instead of a dict of every way."""
    first = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=first[1:])
    named = np.array([w for x in lists for w in x], np.int64)
    if way_ids.size == 0:
        return first, np.full(named.size, -1, np.int64)
    order = np.argsort(way_ids, kind="stable")
    last = np.searchsorted(way_ids, named, side="right", sorter=order) - 1
    at = order[np.maximum(last, 0)]
    found = (last >= 0) & (way_ids[at] == named)
    return first, np.where(found, at, -1).astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _span(keys, key):
    return np.searchsorted(keys, key), np.searchsorted(keys, key, side="right")


@numba.njit(cache=True, nogil=True)
def _resolve(only, via, from_first, from_way, to_first, to_way, n, in_key, in_arc,
             out_key, out_arc, out_node, out_node_arc, arc_edge):
    """([k, 2] banned pairs, resolved?) of every restriction, in one pass."""
    pairs = np.empty((max(16, 4 * only.size), 2), np.int64)
    count = 0
    used = np.zeros(only.size, np.bool_)
    for r in range(only.size):
        got = _resolve_one(only[r], via[r], from_way[from_first[r]:from_first[r + 1]],
                           to_way[to_first[r]:to_first[r + 1]], n, in_key, in_arc, out_key,
                           out_arc, out_node, out_node_arc, arc_edge)
        if got[0, 0] < 0:   # row [-1, -1]: not resolved
            continue
        used[r] = True
        k = got.shape[0] - 1   # the pairs after the leading row
        while count + k > pairs.shape[0]:
            bigger = np.empty((2 * pairs.shape[0], 2), np.int64)
            bigger[:count] = pairs[:count]
            pairs = bigger
        pairs[count:count + k] = got[1:]
        count += k
    return pairs[:count].copy(), used


@numba.njit(cache=True, nogil=True)
def _resolve_one(only, v, frm, to, n, in_key, in_arc, out_key, out_arc, out_node,
                 out_node_arc, arc_edge):
    """Banned pairs of one restriction, after a leading row [0, 0] (so that none is an
    empty array), or the one row [-1, -1] when it cannot be resolved: its via node
    or a way is unknown; a way misses the via node; two arcs of the from way enter it
    (the way passes through: the turn direction is unknowable), or two of a to way
    leave it; an only_ restriction whose allowed turn cannot be driven."""
    bad = -np.ones((1, 2), np.int64)
    if v < 0 or (frm < 0).any() or (to < 0).any():
        return bad
    out = np.zeros((1, 2), np.int64)
    for fw in frm:
        lo, hi = _span(in_key, fw * n + v)
        olo, ohi = _span(out_key, fw * n + v)
        if hi - lo + ohi - olo == 0 or hi - lo > 1:   # misses v, or passes through it
            return bad
        to_arcs = np.empty(to.size, np.int64)
        k = 0
        for tw in to:
            ilo, ihi = _span(in_key, tw * n + v)
            clo, chi = _span(out_key, tw * n + v)
            if ihi - ilo + chi - clo == 0:
                return bad
            found = 0
            for c in range(clo, chi):   # u-turn onto the same way: the from arc's reverse
                t = out_arc[c]
                if tw != fw or (hi > lo and arc_edge[t] == arc_edge[in_arc[lo]]):
                    if found == 1:
                        return bad
                    to_arcs[k] = t
                    k += 1
                    found = 1
        if hi > lo:   # a from way that only leaves v (one-way) has no turn to ban
            f = in_arc[lo]
            if only:
                if k == 0:
                    return bad
                nlo, nhi = _span(out_node, np.int64(v))
                for c in range(nlo, nhi):
                    if not (to_arcs[:k] == out_node_arc[c]).any():
                        out = _appended(out, f, out_node_arc[c])
            else:
                for j in range(k):
                    out = _appended(out, f, to_arcs[j])
    return out


@numba.njit(cache=True, nogil=True)
def _appended(rows, a, b):
    grown = np.empty((rows.shape[0] + 1, 2), np.int64)
    grown[:-1] = rows
    grown[-1, 0], grown[-1, 1] = a, b
    return grown
