"""A synthetic road network: the map RouteLab opens when no file is given.

The program ships no third-party data, so this network has to look and behave
like a real city region for every algorithm to have something to show:

* local streets on a jittered, gently warped grid with irregular block sizes
  (65-115 m between intersections), thinned to about 70 % of its streets
  (denser in "town" patches) while a random spanning tree keeps it connected;
* a road hierarchy: every 5th / 10th / 30th / 60th grid line is a tertiary /
  secondary / primary / trunk road, and motorways run on their own nodes half a
  block beside every 4th primary line, with interchanges every ~2.7 km; they
  cross local streets on bridges, the only crossing arcs of the network;
* lakes (holes in the grid) and a river that only bridges cross;
* one-way streets (alternating one-way grids in dense patches, a few random
  ones), then any one-way that breaks strong connectivity is made two-way again;
* shape nodes (degree 2, like OSM and DIMACS have) on some streets; their count
  makes the node count exactly ``num_nodes``; single bend points as arc geometry;
* a few banned left turns at four-way junctions.

Everything is vectorized numpy / scipy (Python loops only over motorway lines,
lakes and waves, never over nodes). The same (num_nodes, seed) gives the same arrays.
Where things lie (grid, water, motorways) is engine.generate.layout; this module
picks, directs and dresses the streets and builds the graph.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from engine.generate.layout import (LIVING, MOTORWAY, RESIDENTIAL, SECONDARY, SERVICE, TERTIARY,
                                    Grid, GridStreets, Motorways, cut_by_water, grid_streets,
                                    lay_out_grid, motorway_streets, offset_point, waves)
from engine.core.graph import EARTH_RADIUS_M, RoadGraph, haversine_m
from engine.core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

ORIGIN_LON, ORIGIN_LAT = 8.0, 47.0   # fictional place; the map is centred here
MIN_NODES = 50

EDGES_PER_NODE = 1.39    # undirected streets per node; with ~10 % one-ways -> ~2.55 arcs/node
DENSE_SHARE = 0.15       # share of the grid in dense patches (one-way grids, living streets)
ONEWAY_RANDOM = 0.04     # random one-way share of local streets outside dense patches
BEND_SHARE = 0.12        # local streets drawn with one bend point
TURN_BAN_RATE = 0.005    # banned left turns per intersection

# per class: typical speed (km/h) and lanes per direction
SPEED_KMH = np.array([120, 90, 70, 60, 50, 50, 30, 10, 20, 15], dtype=np.float64)
LANES = np.array([3, 2, 2, 1, 1, 1, 1, 1, 1, 1], dtype=np.int8)


def generate_road_network(num_nodes: int = 100_000, seed: int = 1,
                          progress: ProgressFn = no_progress,
                          cancel: CancelToken = NEVER_CANCELLED) -> RoadGraph:
    """A deterministic synthetic road network of exactly ``num_nodes`` nodes.

    Arc attributes: length_m (float32), road_class (int8, index into
    ROAD_CLASSES), speed_kmh (float32), lanes (int8, per direction), oneway and
    toll (bool). Metrics: distance (m) and travel_time (deciseconds), both >= 1.
    ``progress`` hears of each step (fractions of the time they take at 1 M nodes) and
    ``cancel`` is checked between them (24 M nodes take over a minute).
    """
    if num_nodes < MIN_NODES:
        raise ValueError(f"a generated network needs at least {MIN_NODES} nodes, got {num_nodes}")

    def step(fraction: float, what: str) -> None:
        cancel.check()
        progress(fraction, what)

    # Every step draws from one rng in this order: reordering steps changes the map.
    rng = np.random.default_rng(seed)
    step(0.0, "laying out the grid")
    grid = lay_out_grid(rng, num_nodes)
    local = grid_streets(grid)
    alive, valid = cut_by_water(rng, grid, local)
    motorway = motorway_streets(grid, alive)
    # density: a smooth field over blocks (high = town centre patches, low = suburbs)
    density = waves(rng, 3, [25.0, 60.0, 150.0], 0.0, amplitude=0.6)(local.mid_u, local.mid_v)
    step(0.08, "thinning the grid")
    keep = _spanning_streets(rng, grid.size, local, valid)
    budget = _grid_street_budget(num_nodes, alive, motorway)
    _add_streets_by_priority(rng, keep, valid, density, budget)
    dense, direction = _oneway_directions(rng, local, density)
    streets = _street_list(rng, grid, local, keep, motorway, dense, direction)
    step(0.37, "one-way streets")
    streets = _largest_component(streets)
    _settle_classes_and_one_ways(streets)
    step(0.55, "shape nodes")
    streets = _with_shape_nodes(rng, num_nodes, streets)
    step(0.66, "arcs, lengths and turn bans")
    graph = _road_graph(rng, num_nodes, seed, streets)
    step(1.0, f"generated {num_nodes:,} nodes")
    return graph


# ------------------------------------------------------------------ the steps
@dataclass
class _Streets:
    """Undirected streets eu - ev with their columns, and the node coordinates (metres)."""
    eu: np.ndarray
    ev: np.ndarray
    cls: np.ndarray
    toll: np.ndarray
    direction: np.ndarray   # one-way: 1 eu -> ev, -1 ev -> eu; 0 two-way
    living: np.ndarray      # residential streets that become living streets
    x: np.ndarray
    y: np.ndarray

    @property
    def oneway(self) -> np.ndarray:
        return self.direction != 0


# Thinning the grid keeps every road of tertiary class and up, a random spanning tree
# (so thinning never cuts anything off) and then the streets of highest weighted
# priority (Efraimidis-Spirakis sampling) up to the street budget.
def _spanning_streets(rng, G: int, local: GridStreets, valid: np.ndarray) -> np.ndarray:
    """Mask of the streets always kept: tertiary and up, and a random spanning tree."""
    eu, ev, cls = local.eu, local.ev, local.cls
    forced = valid & (cls <= TERTIARY)
    weight = np.where(cls <= TERTIARY, rng.uniform(0.01, 1.0, eu.size), rng.uniform(1.0, 2.0, eu.size))
    tree = minimum_spanning_tree(csr_matrix((weight[valid], (eu[valid], ev[valid])), shape=(G, G))).tocoo()
    keep = forced.copy()
    edge_key = eu * G + ev
    by_key = np.argsort(edge_key)
    tree_key = np.minimum(tree.row, tree.col).astype(np.int64) * G + np.maximum(tree.row, tree.col)
    keep[by_key[np.searchsorted(edge_key[by_key], tree_key)]] = True
    return keep


def _grid_street_budget(num_nodes: int, alive: np.ndarray, motorway: Motorways):
    """Grid streets to keep: shape nodes later add one street each, so the grid gets
    what they and the motorways leave over."""
    nodes_before = alive.sum() + motorway.nodes
    return int(EDGES_PER_NODE * num_nodes) - (num_nodes - nodes_before) - motorway.a.size


def _add_streets_by_priority(rng, keep, valid, density, budget) -> None:
    """Keep spare streets, denser patches likelier, up to ``budget`` (in place)."""
    spare = np.flatnonzero(valid & ~keep)
    priority = np.log(rng.random(spare.size)) / np.exp(1.5 * density[spare])
    extra = max(0, min(spare.size, budget - int(keep.sum())))
    keep[spare[np.argsort(-priority, kind="stable")[:extra]]] = True


def _oneway_directions(rng, local: GridStreets, density: np.ndarray):
    """(dense, direction): alternating one-ways by line in dense patches (like a
    downtown grid), a few random ones elsewhere; direction -1 means ev -> eu. "Dense"
    is a quantile, so small maps (one or two patches) get the same share as big ones."""
    cls = local.cls
    dense = density > np.quantile(density, 1.0 - DENSE_SHARE)
    direction = np.zeros(local.eu.size, dtype=np.int8)
    alternating = dense & (cls == RESIDENTIAL)
    direction[alternating] = np.where(local.line[alternating] % 2 == 0, 1, -1)
    random_ow = ~dense & (cls >= TERTIARY) & (rng.random(local.eu.size) < ONEWAY_RANDOM)
    direction[random_ow] = rng.choice(np.array([-1, 1], np.int8), int(random_ow.sum()))
    return dense, direction


def _street_list(rng, grid: Grid, local: GridStreets, keep, motorway: Motorways,
                 dense, direction) -> _Streets:
    """One list of the kept grid streets and the motorways, over grid + motorway nodes."""
    k = np.flatnonzero(keep)
    n_mw = motorway.a.size
    return _Streets(
        eu=np.concatenate([local.eu[k], motorway.a]),
        ev=np.concatenate([local.ev[k], motorway.b]),
        cls=np.concatenate([local.cls[k], np.full(n_mw, MOTORWAY, np.int8)]),
        toll=np.concatenate([np.zeros(k.size, bool), motorway.toll]),
        direction=np.concatenate([direction[k], np.zeros(n_mw, np.int8)]),
        living=np.concatenate([dense[k] & (rng.random(k.size) < 0.05), np.zeros(n_mw, bool)]),
        x=np.concatenate([grid.x, motorway.x]), y=np.concatenate([grid.y, motorway.y]))


def _largest_component(s: _Streets) -> _Streets:
    """The streets and nodes of the largest connected piece, nodes renumbered."""
    n_all = s.x.size
    _, label = connected_components(csr_matrix((np.ones(s.eu.size), (s.eu, s.ev)), shape=(n_all, n_all)),
                                    directed=False)
    in_lcc = label == np.argmax(np.bincount(label))
    new_id = np.cumsum(in_lcc) - 1
    e_in = in_lcc[s.eu]
    return _Streets(new_id[s.eu[e_in]], new_id[s.ev[e_in]], s.cls[e_in], s.toll[e_in],
                    s.direction[e_in], s.living[e_in], s.x[in_lcc], s.y[in_lcc])


def _settle_classes_and_one_ways(s: _Streets) -> None:
    """Dead ends become service roads and two-way; living streets get their class;
    one-ways are turned to run eu -> ev and then kept only where the network stays
    strongly connected (in place)."""
    n = s.x.size
    degree = np.bincount(s.eu, minlength=n) + np.bincount(s.ev, minlength=n)
    dead_end = (degree[s.eu] == 1) | (degree[s.ev] == 1)
    s.cls[(s.cls == RESIDENTIAL) & s.living] = LIVING
    s.cls[(s.cls == RESIDENTIAL) & dead_end] = SERVICE
    s.direction[dead_end] = 0
    flip = s.direction < 0
    s.eu, s.ev = np.where(flip, s.ev, s.eu), np.where(flip, s.eu, s.ev)
    oneway = s.oneway
    _make_strongly_connected(n, s.eu, s.ev, oneway)
    s.direction = oneway.astype(np.int8)   # every one-way now runs eu -> ev


def _with_shape_nodes(rng, num_nodes: int, s: _Streets) -> _Streets:
    """Split streets (longer ones likelier, never motorways) at a slightly offset point
    until there are ``num_nodes`` nodes; both halves inherit everything, so strong
    connectivity is kept."""
    n1 = s.x.size
    k_split = num_nodes - n1
    if k_split < 0 or k_split > s.eu.size:
        raise RuntimeError(f"generator sizing failed: {n1} nodes before shape nodes for {num_nodes}")
    x, y, eu, ev = s.x, s.y, s.eu, s.ev
    length = np.hypot(x[ev] - x[eu], y[ev] - y[eu])
    key = np.where(s.cls == MOTORWAY, -np.inf, np.log(rng.random(eu.size)) / length)
    split = np.sort(np.argsort(-key, kind="stable")[:k_split])
    px, py = offset_point(rng, x[eu[split]], y[eu[split]], x[ev[split]], y[ev[split]], 0.06,
                          t=rng.uniform(0.35, 0.65, k_split))
    mid = n1 + np.arange(k_split)
    far_end = ev[split]
    ev = ev.copy()
    ev[split] = mid                          # street u -> v becomes u -> mid and mid -> v
    cls, toll, direction, living = (np.concatenate([a, a[split]])
                                    for a in (s.cls, s.toll, s.direction, s.living))
    return _Streets(np.concatenate([eu, mid]), np.concatenate([ev, far_end]), cls, toll,
                    direction, living, np.concatenate([x, px]), np.concatenate([y, py]))


def _road_graph(rng, num_nodes: int, seed: int, s: _Streets) -> RoadGraph:
    """Arcs (every street forward, two-way streets also backward) with speeds, lanes,
    lengths, bend geometry and banned left turns."""
    E = s.eu.size
    speed = np.maximum(5.0, 5.0 * np.round(SPEED_KMH[s.cls] * rng.uniform(0.85, 1.15, E) / 5.0))
    lanes = LANES[s.cls] + ((s.cls <= SECONDARY) & (rng.random(E) < 0.3)).astype(np.int8)
    lon, lat, length, bends = _lonlat_and_bends(rng, s)
    oneway = s.oneway
    two = np.flatnonzero(~oneway)
    arc_edge = np.concatenate([np.arange(E), two])
    tail = np.concatenate([s.eu, s.ev[two]]).astype(np.int32)
    head = np.concatenate([s.ev, s.eu[two]]).astype(np.int32)
    geometry_first, geometry_lonlat = _bend_geometry(E, arc_edge, *bends)
    arc_len = length[arc_edge]
    arc_speed = speed[arc_edge]
    metrics = {
        "distance": np.maximum(1, np.round(arc_len)).astype(np.int32),
        "travel_time": np.maximum(1, np.round(arc_len * 36.0 / arc_speed)).astype(np.int32),
    }
    attrs = {
        "length_m": arc_len.astype(np.float32),
        "road_class": s.cls[arc_edge].astype(np.int8),
        "speed_kmh": arc_speed.astype(np.float32),
        "lanes": lanes[arc_edge].astype(np.int8),
        "oneway": oneway[arc_edge],
        "toll": s.toll[arc_edge],
    }
    banned = _banned_left_turns(rng, num_nodes, tail, head, ~oneway[arc_edge], s.x, s.y)
    return RoadGraph.from_arcs(
        num_nodes, tail, head, metrics, lon=lon, lat=lat, arc_attrs=attrs,
        geometry_first=geometry_first, geometry_lonlat=geometry_lonlat,
        banned_turns=banned, metric_units={"distance": "m", "travel_time": "ds"},
        source=f"generated (n={num_nodes}, seed={seed})")


def _lonlat_and_bends(rng, s: _Streets):
    """(lon, lat, street length in m, (bent streets, bend lon, bend lat)): a few local
    streets get one bend point as geometry, which their length follows."""
    x, y, eu, ev = s.x, s.y, s.eu, s.ev
    bent = (s.cls >= TERTIARY) & (rng.random(eu.size) < BEND_SHARE)
    bx, by = offset_point(rng, x[eu[bent]], y[eu[bent]], x[ev[bent]], y[ev[bent]], 0.08)
    lon, lat = _to_lonlat(x, y)
    blon, blat = _to_lonlat(bx, by)
    length = haversine_m(lon[eu], lat[eu], lon[ev], lat[ev])
    b = np.flatnonzero(bent)
    length[b] = (haversine_m(lon[eu[b]], lat[eu[b]], blon, blat)
                 + haversine_m(blon, blat, lon[ev[b]], lat[ev[b]]))
    return lon, lat, length, (b, blon, blat)


def _bend_geometry(E: int, arc_edge, b, blon, blat):
    """(geometry_first, geometry_lonlat): the bend point of each arc of a bent street."""
    bend_of_edge = np.full(E, -1)
    bend_of_edge[b] = np.arange(b.size)
    arc_bend = bend_of_edge[arc_edge]
    geometry_first = np.zeros(arc_edge.size + 1, dtype=np.int64)
    np.cumsum(arc_bend >= 0, out=geometry_first[1:])
    has = arc_bend[arc_bend >= 0]
    return geometry_first, np.stack([blon[has], blat[has]], axis=1)


# ------------------------------------------------------------------ helpers
def _make_strongly_connected(n: int, eu, ev, oneway) -> None:
    """Turn one-ways back into two-way streets until the graph is strongly connected.

    The street graph is connected, so while there are several strongly connected
    components some street joins two of them, and it must be a one-way: each round
    makes every such one-way two-way. Modifies ``oneway`` in place.
    """
    while True:
        two = ~oneway
        t = np.concatenate([eu, ev[two]])
        h = np.concatenate([ev, eu[two]])
        count, comp = connected_components(csr_matrix((np.ones(t.size, np.int8), (t, h)), shape=(n, n)),
                                           directed=True, connection="strong")
        if count == 1:
            return
        oneway[oneway & (comp[eu] != comp[ev])] = False


def _to_lonlat(x, y):
    """Local metres to degrees: equirectangular about the origin (the inverse of graph.project_lonlat)."""
    k = np.pi / 180.0 * EARTH_RADIUS_M
    return ORIGIN_LON + x / (k * np.cos(np.radians(ORIGIN_LAT))), ORIGIN_LAT + y / k


def _banned_left_turns(rng, n, tail, head, two_way, x, y):
    """About TURN_BAN_RATE of the intersections get one banned left turn.

    Only at four-way junctions and only between two-way streets, so three other
    ways (straight on, right, around the block) remain. Returns (from_arc, to_arc)
    as indices into the arc list.
    """
    deg_out = np.bincount(tail, minlength=n)
    deg_in = np.bincount(head, minlength=n)
    intersections = int(np.count_nonzero(np.maximum(deg_out, deg_in) >= 3))
    wanted = round(TURN_BAN_RATE * intersections)
    candidates = np.flatnonzero((deg_out >= 4) & (deg_in >= 4))
    if wanted == 0 or candidates.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    via = np.sort(rng.choice(candidates, min(candidates.size, 3 * wanted), replace=False))
    by_head = np.argsort(head, kind="stable")
    by_tail = np.argsort(tail, kind="stable")
    first_in = np.concatenate([[0], np.cumsum(deg_in)])
    first_out = np.concatenate([[0], np.cumsum(deg_out)])
    a = by_head[_ranges(first_in, via)]               # every arc into a chosen via node
    owner, pos = _ranges(first_out, head[a], with_owner=True)
    a, bb = a[owner], by_tail[pos]                    # every turn a -> bb there
    d1x, d1y = x[head[a]] - x[tail[a]], y[head[a]] - y[tail[a]]
    d2x, d2y = x[head[bb]] - x[tail[bb]], y[head[bb]] - y[tail[bb]]
    angle = np.degrees(np.arctan2(d1x * d2y - d1y * d2x, d1x * d2x + d1y * d2y))
    left = two_way[a] & two_way[bb] & (head[bb] != tail[a]) & (angle > 45) & (angle < 135)
    a, bb = a[left], bb[left]
    # one random left turn per via node, then the first `wanted` via nodes
    order = np.lexsort((rng.random(a.size), head[a]))
    _, first = np.unique(head[a][order], return_index=True)
    pick = order[first][rng.permutation(first.size)[:wanted]]
    return a[pick].astype(np.int64), bb[pick].astype(np.int64)


def _ranges(first, nodes, with_owner=False):
    """Positions first[v]..first[v+1]-1 for every v in ``nodes``, concatenated."""
    start, count = first[nodes], first[nodes + 1] - first[nodes]
    owner = np.repeat(np.arange(nodes.size), count)
    pos = start[owner] + np.arange(owner.size) - np.repeat(np.cumsum(count) - count, count)
    return (owner, pos) if with_owner else pos
