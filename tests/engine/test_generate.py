"""The generated road network: deterministic, exact size, and shaped like a real one."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from engine.generate.network import ORIGIN_LAT, ORIGIN_LON, generate_road_network
from engine.core.graph import EARTH_RADIUS_M, ROAD_CLASS_INDEX, haversine_m

SIZES = (1_000, 20_000, 100_000)
FAST = ROAD_CLASS_INDEX["secondary"]          # motorway..secondary are the fast network
MOTORWAY = ROAD_CLASS_INDEX["motorway"]


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"n{n}")
def sized(request):
    return request.param, generate_road_network(request.param, seed=1)


@pytest.fixture(scope="module")
def g20k():
    return generate_road_network(20_000, seed=3)


def strong_components(num_nodes, tail, head) -> int:
    adj = csr_matrix((np.ones(tail.size, np.int8), (tail, head)), shape=(num_nodes, num_nodes))
    return connected_components(adj, directed=True, connection="strong")[0]


def graph_arrays(g) -> dict:
    arrays = {"first_out": g.first_out, "head": g.head, "lon": g.lon, "lat": g.lat,
              "geometry_first": g.geometry_first, "geometry_lonlat": g.geometry_lonlat,
              "ban_from": g.turn_restrictions.from_arc, "ban_to": g.turn_restrictions.to_arc}
    arrays.update({f"metric:{k}": v for k, v in g.metrics.items()})
    arrays.update({f"attr:{k}": v for k, v in g.arc_attrs.items()})
    return arrays


def test_same_seed_same_arrays_bit_for_bit_and_other_seed_differs():
    a, b = graph_arrays(generate_road_network(3_000, 7)), graph_arrays(generate_road_network(3_000, 7))
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].tobytes() == b[name].tobytes(), name
    c = generate_road_network(3_000, 8)
    assert c.num_nodes == 3_000
    assert not np.array_equal(c.lon, a["lon"])


def test_node_count_is_exact_and_strongly_connected(sized):
    n, g = sized
    assert g.num_nodes == n
    assert strong_components(g.num_nodes, g.tail, g.head) == 1
    assert g.source == f"generated (n={n}, seed=1)"
    assert g.metric_units == {"distance": "m", "travel_time": "ds"}


@pytest.mark.parametrize("n", [50, 137, 555])
def test_small_sizes_are_exact_and_strongly_connected(n):
    g = generate_road_network(n, seed=2)
    assert g.num_nodes == n
    assert strong_components(g.num_nodes, g.tail, g.head) == 1


def test_too_small_is_refused():
    with pytest.raises(ValueError, match="at least"):
        generate_road_network(10)


def test_average_out_degree_like_real_road_networks(sized):
    n, g = sized
    assert 2.3 <= g.num_arcs / g.num_nodes <= 2.8
    assert g.first_out.dtype == np.int32 and g.head.dtype == np.int32


def test_intersections_are_70_to_100_m_apart_around_the_origin(sized):
    n, g = sized
    # arcs between nodes that are not shape nodes (degree 2) are whole blocks
    undirected_degree = np.bincount(np.concatenate([g.tail, g.head]), minlength=n)
    junction = undirected_degree > 4
    block = junction[g.tail] & junction[g.head] & (g.arc_attrs["road_class"] > MOTORWAY)
    assert 70 <= np.median(g.arc_attrs["length_m"][block]) <= 100
    assert abs(np.mean(g.lon) - ORIGIN_LON) < 0.05 and abs(np.mean(g.lat) - ORIGIN_LAT) < 0.05


def test_road_class_hierarchy_with_a_sparse_fast_network(sized):
    n, g = sized
    cls = g.arc_attrs["road_class"]
    assert cls.dtype == np.int8
    shares = np.bincount(cls, minlength=10) / cls.size
    assert np.count_nonzero(shares) >= 5
    assert 0.03 < shares[:FAST + 1].sum() < 0.25                       # a small minority
    assert shares[ROAD_CLASS_INDEX["residential"]] > 0.4
    if n >= 20_000:
        assert shares[MOTORWAY] > 0
        toll = g.arc_attrs["toll"]
        assert toll.any() and np.all(cls[toll] == MOTORWAY)
    speed = g.arc_attrs["speed_kmh"]
    assert speed.dtype == np.float32 and speed.min() >= 5
    # faster classes are faster on average, and speeds vary within a class
    means = [speed[cls == c].mean() for c in range(FAST + 1) if np.any(cls == c)]
    assert means == sorted(means, reverse=True)
    assert np.unique(speed[cls == ROAD_CLASS_INDEX["residential"]]).size > 1
    lanes = g.arc_attrs["lanes"]
    assert lanes.dtype == np.int8 and lanes.min() >= 1


def test_one_way_arcs_have_no_reverse_and_two_way_arcs_have_one(sized):
    n, g = sized
    oneway = g.arc_attrs["oneway"]
    assert 0.03 < oneway.mean() < 0.2
    key = g.tail.astype(np.int64) * n + g.head
    reverse = np.isin(g.head.astype(np.int64) * n + g.tail, key)
    assert not reverse[oneway].any()
    assert reverse[~oneway].all()


def test_lengths_and_metrics_agree_with_coordinates_and_speeds(sized):
    n, g = sized
    length = g.arc_attrs["length_m"]
    assert length.dtype == np.float32
    straight = haversine_m(g.lon[g.tail], g.lat[g.tail], g.lon[g.head], g.lat[g.head])
    assert np.all(length >= straight - 0.01)
    assert np.all(length <= 1.1 * straight + 0.01)          # bends are gentle
    distance, time = g.metric("distance"), g.metric("travel_time")
    assert distance.min() >= 1 and time.min() >= 1
    assert np.all(np.abs(distance - np.maximum(1, length)) <= 0.51)
    expected = length.astype(np.float64) * 36.0 / g.arc_attrs["speed_kmh"]
    assert np.all(np.abs(time - np.maximum(1, expected)) <= 0.51)


def test_arc_geometry_is_one_bend_point_near_the_arc(g20k):
    g = g20k
    counts = np.diff(g.geometry_first)
    assert counts.max() == 1 and 0 < counts.mean() < 0.3
    arcs = np.flatnonzero(counts)
    pts = g.geometry_lonlat[g.geometry_first[arcs]]
    via = (haversine_m(g.lon[g.tail[arcs]], g.lat[g.tail[arcs]], pts[:, 0], pts[:, 1])
           + haversine_m(pts[:, 0], pts[:, 1], g.lon[g.head[arcs]], g.lat[g.head[arcs]]))
    assert np.allclose(via, g.arc_attrs["length_m"][arcs], rtol=1e-5)


def test_turn_restrictions_are_left_turns_at_junctions_and_keep_every_arc_reachable(g20k):
    g = g20k
    tr = g.turn_restrictions
    junctions = np.count_nonzero(np.bincount(g.tail, minlength=g.num_nodes) >= 3)
    assert 0.002 * junctions <= len(tr) <= 0.008 * junctions
    assert np.all(g.head[tr.from_arc] == g.tail[tr.to_arc])
    assert np.all(g.head[tr.to_arc] != g.tail[tr.from_arc])             # not a U-turn
    xy = g.xy
    d1 = xy[g.head[tr.from_arc]] - xy[g.tail[tr.from_arc]]
    d2 = xy[g.head[tr.to_arc]] - xy[g.tail[tr.to_arc]]
    assert np.all(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0] > 0)       # turning left
    # the turn graph (arcs as nodes, every allowed turn incl. U-turns) stays strongly connected
    out_deg = np.diff(g.first_out)
    succ_count = out_deg[g.head]
    frm = np.repeat(np.arange(g.num_arcs), succ_count)
    start = g.first_out[g.head][frm]
    to = start + np.arange(frm.size) - np.repeat(np.cumsum(succ_count) - succ_count, succ_count)
    banned = np.isin(frm.astype(np.int64) * g.num_arcs + to,
                     tr.from_arc.astype(np.int64) * g.num_arcs + tr.to_arc)
    assert banned.sum() == len(tr)
    assert strong_components(g.num_arcs, frm[~banned], to[~banned]) == 1


def _segments(g):
    """Every street (one direction) as straight pieces in metres, motorways left out."""
    k = np.pi / 180.0 * EARTH_RADIUS_M
    to_xy = lambda lon, lat: np.stack([(lon - ORIGIN_LON) * k * np.cos(np.radians(ORIGIN_LAT)),
                                       (lat - ORIGIN_LAT) * k], axis=1)
    pts = to_xy(g.lon, g.lat)
    keep = ((g.tail < g.head) | g.arc_attrs["oneway"]) & (g.arc_attrs["road_class"] != MOTORWAY)
    a, b = [], []
    for arc in np.flatnonzero(keep):
        s0, s1 = g.geometry_first[arc], g.geometry_first[arc + 1]
        poly = [pts[g.tail[arc]], *to_xy(g.geometry_lonlat[s0:s1, 0], g.geometry_lonlat[s0:s1, 1]),
                pts[g.head[arc]]]
        a.extend(poly[:-1])
        b.extend(poly[1:])
    return np.array(a), np.array(b)


@pytest.mark.parametrize("seed", [1, 2])
def test_streets_do_not_cross_only_motorway_bridges_may(seed):
    g = generate_road_network(2_000, seed)
    p, q = _segments(g)

    def orient(a, b, c):
        return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])

    crossings = 0
    for i in range(0, p.shape[0], 256):
        p1, q1 = p[i:i + 256, None], q[i:i + 256, None]
        o1, o2 = orient(p1, q1, p[None]), orient(p1, q1, q[None])
        o3, o4 = orient(p[None], q[None], p1), orient(p[None], q[None], q1)
        crossings += np.count_nonzero((o1 * o2 < 0) & (o3 * o4 < 0))
    assert crossings == 0


@pytest.mark.slow
def test_two_million_nodes():
    g = generate_road_network(2_000_000)
    assert g.num_nodes == 2_000_000
    assert 2.3 <= g.num_arcs / g.num_nodes <= 2.8
    assert strong_components(g.num_nodes, g.tail, g.head) == 1
