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
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from engine.graph import EARTH_RADIUS_M, ROAD_CLASS_INDEX, RoadGraph, haversine_m

ORIGIN_LON, ORIGIN_LAT = 8.0, 47.0   # fictional place; the map is centred here
MIN_NODES = 50

GRID_FRACTION = 0.8      # share of the nodes on the grid; shape nodes make up the rest
ASPECT = 1.25            # grid width / height
GAP_M = (65.0, 115.0)    # spacing of grid lines (uniform), mean 90 m
JITTER_M = 8.0           # small kinks; < min gap / 2 keeps the jittered grid planar
EDGES_PER_NODE = 1.39    # undirected streets per node; with ~10 % one-ways -> ~2.55 arcs/node
LAKE_SHARE = 0.03        # share of the grid area under lakes
DENSE_SHARE = 0.15       # share of the grid in dense patches (one-way grids, living streets)
ONEWAY_RANDOM = 0.04     # random one-way share of local streets outside dense patches
BEND_SHARE = 0.12        # local streets drawn with one bend point
TURN_BAN_RATE = 0.005    # banned left turns per intersection

C = ROAD_CLASS_INDEX
MOTORWAY, TRUNK, PRIMARY, SECONDARY = C["motorway"], C["trunk"], C["primary"], C["secondary"]
TERTIARY, RESIDENTIAL, LIVING, SERVICE = C["tertiary"], C["residential"], C["living_street"], C["service"]

# per class: typical speed (km/h) and lanes per direction
SPEED_KMH = np.array([120, 90, 70, 60, 50, 50, 30, 10, 20, 15], dtype=np.float64)
LANES = np.array([3, 2, 2, 1, 1, 1, 1, 1, 1, 1], dtype=np.int8)
LINE_PERIODS = ((5, TERTIARY), (10, SECONDARY), (30, PRIMARY), (60, TRUNK))
MOTORWAY_PERIOD, MOTORWAY_OFFSET = 120, 30   # every 4th primary line (never a trunk line)
SAMPLE_STEP, INTERCHANGE_STEP = 5, 30        # motorway node every 5 blocks, exit every 30


def generate_road_network(num_nodes: int = 100_000, seed: int = 1) -> RoadGraph:
    """A deterministic synthetic road network of exactly ``num_nodes`` nodes.

    Arc attributes: length_m (float32), road_class (int8, index into
    ROAD_CLASSES), speed_kmh (float32), lanes (int8, per direction), oneway and
    toll (bool). Metrics: distance (m) and travel_time (deciseconds), both >= 1.
    """
    if num_nodes < MIN_NODES:
        raise ValueError(f"a generated network needs at least {MIN_NODES} nodes, got {num_nodes}")
    rng = np.random.default_rng(seed)
    W = max(5, round(np.sqrt(num_nodes * GRID_FRACTION * ASPECT)))
    H = max(5, round(num_nodes * GRID_FRACTION / W))
    G = W * H

    # --- where grid index (u, v) lies in metres: irregular line spacing, then a
    # smooth warp (Lipschitz < 1, so it cannot fold the grid onto itself)
    xs = np.cumsum(rng.uniform(*GAP_M, W))
    ys = np.cumsum(rng.uniform(*GAP_M, H))
    xs -= 0.5 * (xs[0] + xs[-1])
    ys -= 0.5 * (ys[0] + ys[-1])
    warp_x, warp_y = _waves(rng, 4, [1500, 4000, 10000, 30000], 0.1), \
        _waves(rng, 4, [1500, 4000, 10000, 30000], 0.1)

    def to_metres(u, v, jitter=0.0):
        x, y = np.interp(u, np.arange(W), xs), np.interp(v, np.arange(H), ys)
        if jitter:   # per-node jitter below half the smallest gap keeps the grid planar
            x, y = x + rng.uniform(-jitter, jitter, x.size), y + rng.uniform(-jitter, jitter, y.size)
        return x + warp_x(x, y), y + warp_y(x, y)

    gv, gu = np.divmod(np.arange(G), W)
    gx, gy = to_metres(gu, gv, JITTER_M)

    # --- grid streets: horizontal edges take their row's class, vertical ones their column's
    row_cls, col_cls = _line_classes(H), _line_classes(W)
    hj, hi = np.divmod(np.arange(H * (W - 1)), W - 1)
    vj, vi = np.divmod(np.arange((H - 1) * W), W)
    eu = np.concatenate([hj * W + hi, vj * W + vi])
    ev = np.concatenate([hj * W + hi + 1, (vj + 1) * W + vi])
    cls = np.concatenate([row_cls[hj], col_cls[vi]])
    horizontal = np.arange(eu.size) < hj.size
    line = np.where(horizontal, np.concatenate([hj, vj]), np.concatenate([hi, vi]))
    mid_u, mid_v = 0.5 * (gu[eu] + gu[ev]), 0.5 * (gv[eu] + gv[ev])

    # --- lakes remove grid nodes; a river cuts every street but the bridges
    alive = ~_lakes(rng, W, H)
    valid = alive[eu] & alive[ev]
    if min(W, H) >= 40:
        level, wavelength, phase = rng.uniform(0.3, 0.7), rng.uniform(0.4, 0.9), rng.uniform(0, 2 * np.pi)
        side = gv > H * (level + 0.08 * np.sin(2 * np.pi * gu / (W * wavelength) + phase))
        bridge = (cls <= SECONDARY) | ((cls == TERTIARY) & (rng.random(eu.size) < 0.5)) \
            | (rng.random(eu.size) < 0.03)
        valid &= (side[eu] == side[ev]) | bridge

    # --- motorways (own nodes, ids G..G+K-1) and their ramps to the grid
    m_u, m_v, m_a, m_b, m_toll = _motorways(W, H)
    ramp_ok = (m_b >= G) | alive[np.minimum(m_b, G - 1)]
    m_a, m_b, m_toll = m_a[ramp_ok], m_b[ramp_ok], m_toll[ramp_ok]
    mx, my = to_metres(m_u, m_v)

    # --- thin the grid: keep every road of tertiary class and up, a random spanning
    # tree (so thinning never cuts anything off) and then the streets of highest
    # weighted priority (Efraimidis-Spirakis sampling) up to the street budget
    # density: a smooth field over blocks (high = town centre patches, low = suburbs)
    density = _waves(rng, 3, [25.0, 60.0, 150.0], 0.0, amplitude=0.6)(mid_u, mid_v)
    forced = valid & (cls <= TERTIARY)
    weight = np.where(cls <= TERTIARY, rng.uniform(0.01, 1.0, eu.size), rng.uniform(1.0, 2.0, eu.size))
    tree = minimum_spanning_tree(csr_matrix((weight[valid], (eu[valid], ev[valid])), shape=(G, G))).tocoo()
    keep = forced.copy()
    edge_key = eu * G + ev
    by_key = np.argsort(edge_key)
    tree_key = np.minimum(tree.row, tree.col).astype(np.int64) * G + np.maximum(tree.row, tree.col)
    keep[by_key[np.searchsorted(edge_key[by_key], tree_key)]] = True
    # shape nodes later add one street each, so the grid gets what they leave over
    nodes_before = alive.sum() + m_u.size
    budget = int(EDGES_PER_NODE * num_nodes) - (num_nodes - nodes_before) - m_a.size
    spare = np.flatnonzero(valid & ~keep)
    priority = np.log(rng.random(spare.size)) / np.exp(1.5 * density[spare])
    extra = max(0, min(spare.size, budget - int(keep.sum())))
    keep[spare[np.argsort(-priority, kind="stable")[:extra]]] = True

    # --- one-ways: alternating directions by line in dense patches (like a downtown
    # grid), a few random ones elsewhere; direction -1 means ev -> eu. "Dense" is a
    # quantile, so small maps (one or two patches) get the same share as big ones.
    dense = density > np.quantile(density, 1.0 - DENSE_SHARE)
    direction = np.zeros(eu.size, dtype=np.int8)
    alternating = dense & (cls == RESIDENTIAL)
    direction[alternating] = np.where(line[alternating] % 2 == 0, 1, -1)
    random_ow = ~dense & (cls >= TERTIARY) & (rng.random(eu.size) < ONEWAY_RANDOM)
    direction[random_ow] = rng.choice(np.array([-1, 1], np.int8), int(random_ow.sum()))

    # --- one list of streets, restricted to the largest connected piece
    k = np.flatnonzero(keep)
    eu = np.concatenate([eu[k], m_a])
    ev = np.concatenate([ev[k], m_b])
    cls = np.concatenate([cls[k], np.full(m_a.size, MOTORWAY, np.int8)])
    toll = np.concatenate([np.zeros(k.size, bool), m_toll])
    direction = np.concatenate([direction[k], np.zeros(m_a.size, np.int8)])
    living = np.concatenate([dense[k] & (rng.random(k.size) < 0.05), np.zeros(m_a.size, bool)])
    x, y = np.concatenate([gx, mx]), np.concatenate([gy, my])
    n_all = G + m_u.size
    _, label = connected_components(csr_matrix((np.ones(eu.size), (eu, ev)), shape=(n_all, n_all)),
                                    directed=False)
    in_lcc = label == np.argmax(np.bincount(label))
    new_id = np.cumsum(in_lcc) - 1
    e_in = in_lcc[eu]
    eu, ev, cls, toll, direction, living = (a[e_in] for a in (eu, ev, cls, toll, direction, living))
    eu, ev, x, y = new_id[eu], new_id[ev], x[in_lcc], y[in_lcc]
    n1 = x.size

    # dead ends are service roads and never one-way; some dense streets are living streets
    degree = np.bincount(eu, minlength=n1) + np.bincount(ev, minlength=n1)
    dead_end = (degree[eu] == 1) | (degree[ev] == 1)
    cls[(cls == RESIDENTIAL) & living] = LIVING
    cls[(cls == RESIDENTIAL) & dead_end] = SERVICE
    direction[dead_end] = 0
    flip = direction < 0
    eu, ev = np.where(flip, ev, eu), np.where(flip, eu, ev)
    oneway = direction != 0
    _make_strongly_connected(n1, eu, ev, oneway)

    # --- shape nodes: split k streets (longer ones likelier) at a slightly offset point;
    # both halves inherit everything, so strong connectivity is kept
    k_split = num_nodes - n1
    if k_split < 0 or k_split > eu.size:
        raise RuntimeError(f"generator sizing failed: {n1} nodes before shape nodes for {num_nodes}")
    length = np.hypot(x[ev] - x[eu], y[ev] - y[eu])
    key = np.where(cls == MOTORWAY, -np.inf, np.log(rng.random(eu.size)) / length)
    split = np.sort(np.argsort(-key, kind="stable")[:k_split])
    px, py = _offset_point(rng, x[eu[split]], y[eu[split]], x[ev[split]], y[ev[split]], 0.06,
                           t=rng.uniform(0.35, 0.65, k_split))
    mid = n1 + np.arange(k_split)
    x, y = np.concatenate([x, px]), np.concatenate([y, py])
    far_end = ev[split]
    ev = ev.copy()
    ev[split] = mid                          # street u -> v becomes u -> mid and mid -> v
    eu, ev = np.concatenate([eu, mid]), np.concatenate([ev, far_end])
    cls, toll, oneway = (np.concatenate([a, a[split]]) for a in (cls, toll, oneway))

    # --- per-street attributes; a few local streets get one bend point as geometry
    E = eu.size
    speed = np.maximum(5.0, 5.0 * np.round(SPEED_KMH[cls] * rng.uniform(0.85, 1.15, E) / 5.0))
    lanes = LANES[cls] + ((cls <= SECONDARY) & (rng.random(E) < 0.3)).astype(np.int8)
    bent = (cls >= TERTIARY) & (rng.random(E) < BEND_SHARE)
    bx, by = _offset_point(rng, x[eu[bent]], y[eu[bent]], x[ev[bent]], y[ev[bent]], 0.08)

    lon, lat = _to_lonlat(x, y)
    blon, blat = _to_lonlat(bx, by)
    length = haversine_m(lon[eu], lat[eu], lon[ev], lat[ev])
    b = np.flatnonzero(bent)
    length[b] = (haversine_m(lon[eu[b]], lat[eu[b]], blon, blat)
                 + haversine_m(blon, blat, lon[ev[b]], lat[ev[b]]))

    # --- arcs: every street forward, two-way streets also backward
    two = np.flatnonzero(~oneway)
    arc_edge = np.concatenate([np.arange(E), two])
    tail = np.concatenate([eu, ev[two]]).astype(np.int32)
    head = np.concatenate([ev, eu[two]]).astype(np.int32)
    bend_of_edge = np.full(E, -1)
    bend_of_edge[b] = np.arange(b.size)
    arc_bend = bend_of_edge[arc_edge]
    geometry_first = np.zeros(arc_edge.size + 1, dtype=np.int64)
    np.cumsum(arc_bend >= 0, out=geometry_first[1:])
    has = arc_bend[arc_bend >= 0]
    geometry_lonlat = np.stack([blon[has], blat[has]], axis=1)

    arc_len = length[arc_edge]
    arc_speed = speed[arc_edge]
    metrics = {
        "distance": np.maximum(1, np.round(arc_len)).astype(np.int32),
        "travel_time": np.maximum(1, np.round(arc_len * 36.0 / arc_speed)).astype(np.int32),
    }
    attrs = {
        "length_m": arc_len.astype(np.float32),
        "road_class": cls[arc_edge].astype(np.int8),
        "speed_kmh": arc_speed.astype(np.float32),
        "lanes": lanes[arc_edge].astype(np.int8),
        "oneway": oneway[arc_edge],
        "toll": toll[arc_edge],
    }
    banned = _banned_left_turns(rng, num_nodes, tail, head, ~oneway[arc_edge], x, y)
    return RoadGraph.from_arcs(
        num_nodes, tail, head, metrics, lon=lon, lat=lat, arc_attrs=attrs,
        geometry_first=geometry_first, geometry_lonlat=geometry_lonlat,
        banned_turns=banned, metric_units={"distance": "m", "travel_time": "ds"},
        source=f"generated (n={num_nodes}, seed={seed})")


# ------------------------------------------------------------------ helpers
def _waves(rng, count, wavelengths, slope, amplitude=None):
    """A smooth random field: a sum of plane waves in random directions.

    With ``slope`` > 0 each wave's amplitude is slope * wavelength / 2pi, so the
    field's Lipschitz constant is at most count * slope (a warp that cannot fold).
    """
    wl = np.asarray(wavelengths, dtype=np.float64)[:count]
    theta = rng.uniform(0, 2 * np.pi, wl.size)
    phase = rng.uniform(0, 2 * np.pi, wl.size)
    amp = slope * wl / (2 * np.pi) if amplitude is None else np.full(wl.size, amplitude)
    kx, ky = 2 * np.pi * np.cos(theta) / wl, 2 * np.pi * np.sin(theta) / wl

    def field(x, y):
        out = np.zeros(np.shape(x))
        for i in range(wl.size):
            out += amp[i] * np.sin(kx[i] * x + ky[i] * y + phase[i])
        return out
    return field


def _line_classes(count: int) -> np.ndarray:
    """Class of each grid line: lines at multiples of 5/10/30/60 from the centre are upgraded."""
    d = np.arange(count) - count // 2
    cls = np.full(count, RESIDENTIAL, dtype=np.int8)
    for period, c in LINE_PERIODS:
        cls[d % period == 0] = c
    return cls


def _lakes(rng, W: int, H: int) -> np.ndarray:
    """Mask of grid nodes under lakes: discs of 3-10 blocks radius covering ~LAKE_SHARE."""
    count = int(LAKE_SHARE * W * H / (np.pi * 46.3))   # 46.3 = E[r^2] for r ~ U(3, 10)
    wet = np.zeros((H, W), dtype=bool)
    for cu, cv, r in zip(rng.uniform(0, W, count), rng.uniform(0, H, count), rng.uniform(3, 10, count)):
        i0, i1 = max(0, int(cu - r)), min(W, int(cu + r) + 1)
        j0, j1 = max(0, int(cv - r)), min(H, int(cv + r) + 1)
        jj, ii = np.mgrid[j0:j1, i0:i1]
        wet[j0:j1, i0:i1] |= (ii - cu) ** 2 + (jj - cv) ** 2 < r * r
    return wet.ravel()


def _motorways(W: int, H: int):
    """Motorway nodes at cell centres half a block beside every 4th primary line.

    A node every SAMPLE_STEP blocks; at every INTERCHANGE_STEP-th a ramp to the
    adjacent grid corner, which is a primary x primary (or trunk) junction. Lines
    run between their outermost interchanges. Crossing motorways share the node at
    the crossing. Returns node grid positions (u, v), edges (a, b) with ids >= W*H
    for motorway nodes and < W*H for grid nodes, and a toll flag per edge (the
    middle third of the first east-west motorway).
    """
    cells, edges, toll = [], [], []   # cells: (j, i) of motorway nodes; edges in cell/grid keys
    G = W * H
    for horizontal, (n_line, n_along) in ((True, (H, W)), (False, (W, H))):
        along_d = np.arange(n_along) - n_along // 2
        for c in np.flatnonzero((np.arange(n_line) - n_line // 2) % MOTORWAY_PERIOD == MOTORWAY_OFFSET):
            if c >= n_line - 1:
                continue
            exits = np.flatnonzero((along_d % INTERCHANGE_STEP == 0) & (np.arange(n_along) < n_along - 1))
            if exits.size < 2:
                continue
            s = np.arange(exits[0], exits[-1] + 1)
            s = s[along_d[s] % SAMPLE_STEP == 0]
            j, i = (np.full(s.size, c), s) if horizontal else (s, np.full(s.size, c))
            cell = G + j * W + i                      # provisional key of the motorway node
            grid = j * W + i                          # its adjacent grid corner
            ex = along_d[s] % INTERCHANGE_STEP == 0
            cells.append(np.stack([j, i], 1))
            edges += [np.stack([cell[:-1], cell[1:]], 1), np.stack([cell[ex], grid[ex]], 1)]
            third = (np.arange(s.size - 1) >= (s.size - 1) // 3) & (np.arange(s.size - 1) < 2 * (s.size - 1) // 3)
            toll += [third & horizontal & (len(toll) == 0), np.zeros(ex.sum(), bool)]
    if not cells:
        z = np.zeros(0, dtype=np.int64)
        return z.astype(float), z.astype(float), z, z, z.astype(bool)
    cells = np.concatenate(cells)
    keys = np.unique(cells[:, 0] * W + cells[:, 1])
    jv, iu = np.divmod(keys, W)
    e = np.concatenate(edges)
    toll = np.concatenate(toll)
    # renumber motorway nodes G..G+K-1; a shared crossing node makes duplicate ramps: drop them
    e = np.where(e >= G, G + np.searchsorted(keys, e - G), e)
    lo, hi = e.min(1), e.max(1)
    _, uniq = np.unique(lo * (G + keys.size) + hi, return_index=True)
    uniq = np.sort(uniq)
    return iu + 0.5, jv + 0.5, e[uniq, 0], e[uniq, 1], toll[uniq]


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


def _offset_point(rng, x0, y0, x1, y1, max_offset, t=0.5):
    """A point at fraction t from (x0, y0) to (x1, y1), pushed sideways by up to
    max_offset x the segment length (curved streets, without crossing neighbours)."""
    off = rng.uniform(-max_offset, max_offset, np.size(x0))
    dx, dy = x1 - x0, y1 - y0
    return x0 + t * dx - off * dy, y0 + t * dy + off * dx


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
