"""OpenStreetMap turn restrictions: type=restriction relations read from the file,
then resolved into banned (from_arc, to_arc) pairs of the built arc list.

Only car restrictions with one via *node* are used; what is skipped, and why, is
counted in the reader's ``OsmReport`` (engine.io.osm_report).
"""
from __future__ import annotations

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
    """Banned (from_arc, to_arc) pairs, as indices into the arc list."""
    if not restrictions:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    way_index = _way_index(way_ids, restrictions)
    via_ids = np.array([r[2] for r in restrictions], dtype=np.int64)
    pos = np.minimum(np.searchsorted(unique_ids, via_ids), unique_ids.size - 1)
    via_node = np.where(unique_ids[pos] == via_ids, node_of_u[pos], -1)

    # Arcs entering / leaving via nodes, keyed by (way, node); all arcs leaving them.
    is_via = np.zeros(int(max(head.max(initial=-1), tail.max(initial=-1))) + 1, bool)
    is_via[via_node[via_node >= 0]] = True
    entering, leaving, out_of = {}, {}, {}
    into = np.flatnonzero(is_via[head])
    for arc, key in zip(into.tolist(), zip(arc_way[into].tolist(), head[into].tolist())):
        entering.setdefault(key, []).append(arc)
    out = np.flatnonzero(is_via[tail])
    for arc, key in zip(out.tolist(), zip(arc_way[out].tolist(), tail[out].tolist())):
        leaving.setdefault(key, []).append(arc)
        out_of.setdefault(key[1], []).append(arc)

    bans = []
    for (only, frm, _, to), v in zip(restrictions, via_node.tolist()):
        pairs = _restriction_pairs(only, frm, v, to, way_index, entering, leaving,
                                   out_of, arc_edge)
        if pairs is None:
            report.restrictions_unresolved += 1
        else:
            report.restrictions_used += 1
            bans.extend(pairs)
    bans = np.array(bans, dtype=np.int64).reshape(-1, 2)
    return bans[:, 0], bans[:, 1]


def _way_index(way_ids: np.ndarray, restrictions) -> dict:
    """{way id: index of its way} for the ways the restrictions name (of a way id
    given twice, the last), found by a sort instead of a dict of every way."""
    named = np.unique(np.array([w for r in restrictions for w in r[1] + r[3]], np.int64))
    order = np.argsort(way_ids, kind="stable")
    last = np.searchsorted(way_ids, named, side="right", sorter=order) - 1
    at = order[np.maximum(last, 0)] if way_ids.size else np.zeros(named.size, np.int64)
    found = (last >= 0) & (way_ids[at] == named) if way_ids.size else last >= 0
    return dict(zip(named[found].tolist(), at[found].tolist()))


def _restriction_pairs(only, frm, v, to, way_index, entering, leaving, out_of, arc_edge):
    """Banned pairs of one restriction, or None when it cannot be resolved."""
    if v < 0 or any(w not in way_index for w in frm + to):
        return None

    def arcs_at(table, way):   # arcs of ``way`` at v in ``table``; None if it misses v
        key = (way_index[way], v)
        return table.get(key, []) if key in entering or key in leaving else None

    pairs = []
    for fw in frm:
        from_arcs = arcs_at(entering, fw)
        # two arcs entering: the way passes through v and the turn direction is unknowable
        if from_arcs is None or len(from_arcs) > 1:
            return None
        to_arcs = []
        for tw in to:
            cand = arcs_at(leaving, tw)
            if cand is None:
                return None
            if tw == fw:       # u-turn onto the same way: the reverse of the from arc
                cand = [t for t in cand if from_arcs and arc_edge[t] == arc_edge[from_arcs[0]]]
            if len(cand) > 1:
                return None
            to_arcs += cand
        # a from way that only leaves v (one-way) has no turn to ban
        for f in from_arcs:
            if only:
                if not to_arcs:    # the one allowed turn cannot be driven: bad data
                    return None
                pairs.extend((f, t) for t in out_of.get(v, []) if t not in to_arcs)
            else:
                pairs.extend((f, t) for t in to_arcs)
    return pairs
