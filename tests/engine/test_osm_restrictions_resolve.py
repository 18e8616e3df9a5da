"""engine.io.osm_restrictions.resolve_restrictions (flat arrays, one Numba pass) against
the per-relation Python resolution it replaced (kept here as the reference), on random
arc lists and restrictions: the same banned pairs and the same report counts."""
import numpy as np
import pytest

from engine.io.osm_report import OsmReport
from engine.io.osm_restrictions import resolve_restrictions


def reference_resolve(restrictions, way_ids, unique_ids, node_of_u, tail, head,
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


def _case(seed):
    """Random ways over few nodes (so that ways meet, pass through, repeat, and one way
    may enter a node twice), their arcs one or both ways, and random restrictions
    naming known and unknown ways and nodes."""
    rng = np.random.default_rng(seed)
    n, num_ways = int(rng.integers(3, 12)), int(rng.integers(1, 8))
    e = int(rng.integers(1, 40))
    e_tail, e_head = rng.integers(0, n, e), rng.integers(0, n, e)
    e_tail[0] = n - 1   # every node id below the largest arc end, as in a built graph
    e_way = rng.integers(0, num_ways, e)
    fwd, bwd = np.flatnonzero(rng.random(e) < 0.9), np.flatnonzero(rng.random(e) < 0.6)
    arc_edge = np.r_[fwd, bwd]
    tail = np.r_[e_tail[fwd], e_head[bwd]].astype(np.int32)
    head = np.r_[e_head[fwd], e_tail[bwd]].astype(np.int32)
    way_ids = rng.choice(1000, num_ways, replace=False).astype(np.int64) + 100
    unique_ids = np.arange(n, dtype=np.int64) * 10 + 5
    node_of_u = np.arange(n, dtype=np.int32)

    def ways(k):
        return [int(way_ids[rng.integers(num_ways)]) if rng.random() < 0.9 else 7
                for _ in range(k)]
    restrictions = [(bool(rng.random() < 0.4), ways(int(rng.integers(1, 3))),
                     int(unique_ids[rng.integers(n)]) if rng.random() < 0.9 else 1,
                     ways(int(rng.integers(1, 3)))) for _ in range(int(rng.integers(0, 30)))]
    return (restrictions, way_ids, unique_ids, node_of_u, tail, head,
            e_way[arc_edge].astype(np.int32), arc_edge)


@pytest.mark.parametrize("seed", range(300))
def test_resolution_equals_per_relation_python(seed):
    case = _case(seed)
    got_report, want_report = OsmReport(), OsmReport()
    got = resolve_restrictions(*case, got_report)
    want = reference_resolve(*case, want_report)
    assert sorted(zip(*map(np.ndarray.tolist, got))) == sorted(zip(*map(np.ndarray.tolist, want)))
    assert (got_report.restrictions_used, got_report.restrictions_unresolved) == \
        (want_report.restrictions_used, want_report.restrictions_unresolved)


def test_some_cases_resolve_and_some_do_not():
    """The random cases reach both outcomes and both kinds (a test that can fail)."""
    used = unresolved = 0
    for seed in range(300):
        report = OsmReport()
        resolve_restrictions(*_case(seed), report)
        used += report.restrictions_used
        unresolved += report.restrictions_unresolved
    assert used > 100 and unresolved > 100
