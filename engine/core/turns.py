"""The turn-aware graph: every allowed turn (from_arc -> to_arc at a node), its type
from geometry, with every banned turn (OSM ``no_*``/``only_*``, the generated
network's banned left turns) removed.

CRP searches on arcs, as OSRM's edge-based graph does: a search state is "has just
driven along arc a", and moving on costs the turn plus the next arc. A path's cost is
the sum of its arcs and of the turns between them. The turns are stored as a CSR over
the from-arc (``first_turn``, ``to_arc``), with the reverse CSR for backward search.

Turn types, by the angle between the arc arriving at the node and the arc leaving it
(using the stored arc geometry next to the node where there is some):

    straight      |angle| <= 25 deg, or the only way on (a road bending is no turn)
    slight_*      25 .. 60 deg
    right, left   60 .. 120 deg
    sharp_*       120 .. 170 deg
    u_turn        back to the node one came from, or |angle| > 170 deg

Graphs with no coordinates (DIMACS without .co) know only straight and U-turns.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.core.cores import usable_cores
from engine.core.graph import csr_offsets

TURN_TYPES = ("straight", "slight_right", "right", "sharp_right",
              "slight_left", "left", "sharp_left", "u_turn")
TURN_TYPE_INDEX = {name: i for i, name in enumerate(TURN_TYPES)}
STRAIGHT, U_TURN = TURN_TYPE_INDEX["straight"], TURN_TYPE_INDEX["u_turn"]

# upper bounds of |angle| in degrees for straight, slight, plain, sharp turns
_ANGLE_BOUNDS = (25.0, 60.0, 120.0, 170.0)
_TURN_CHUNK = 1 << 18        # turns typed by one task of turn_graph's thread pool


@dataclass(frozen=True, eq=False)
class Turns:
    first_turn: np.ndarray   # int32 [m+1] turns out of arc a: first_turn[a]..first_turn[a+1]
    to_arc: np.ndarray       # int32 [T]
    from_arc: np.ndarray     # int32 [T] (sorted: the CSR's rows)
    turn_type: np.ndarray    # int8 [T], index into TURN_TYPES
    first_turn_in: np.ndarray  # int32 [m+1] turns into arc b: first_turn_in[b]..first_turn_in[b+1]
    turn_in: np.ndarray      # int32 [T] turn ids sorted by to_arc
    banned: int              # banned turns removed

    @property
    def num_turns(self) -> int:
        return int(self.to_arc.size)

    def counts_by_type(self) -> dict[str, int]:
        counts = np.bincount(self.turn_type, minlength=len(TURN_TYPES))
        return {name: int(c) for name, c in zip(TURN_TYPES, counts)}

    def ids(self, from_arcs, to_arcs) -> np.ndarray:
        """Id of each turn from_arcs[i] -> to_arcs[i] (int64, -1 where there is no such
        turn): one binary search for all of them instead of a scan per CSR row."""
        keys, order = self._sorted_keys
        want = np.asarray(from_arcs, dtype=np.int64) * (self.first_turn.size - 1) + to_arcs
        at = np.searchsorted(keys, want)
        hit = at < keys.size
        hit[hit] = keys[at[hit]] == want[hit]
        out = np.full(want.shape, -1, dtype=np.int64)
        out[hit] = order[at[hit]]
        return out

    @cached_property                # a frozen dataclass still has a __dict__ to cache in
    def _sorted_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Keys from_arc * m + to_arc, sorted, and the turn ids in that order."""
        keys = self.from_arc.astype(np.int64) * (self.first_turn.size - 1) + self.to_arc
        order = np.argsort(keys, kind="stable")
        return keys[order], order


def turn_graph(graph) -> Turns:
    """Every allowed turn of ``graph`` with its type."""
    from_arc, to_arc = _all_turns(graph)
    turn_type = _turn_types(graph, from_arc, to_arc)
    keep, banned = _allowed(graph, from_arc, to_arc)
    from_arc, to_arc, turn_type = from_arc[keep], to_arc[keep], turn_type[keep]
    m = graph.num_arcs
    first_turn = csr_offsets(from_arc, m)
    turn_in = np.argsort(to_arc, kind="stable").astype(np.int32)
    first_turn_in = csr_offsets(to_arc[turn_in], m)
    return Turns(first_turn, to_arc.astype(np.int32), from_arc.astype(np.int32),
                 turn_type.astype(np.int8), first_turn_in, turn_in, banned)


def _all_turns(graph) -> tuple[np.ndarray, np.ndarray]:
    """(from_arc, to_arc) of every pair of arcs meeting head to tail, sorted by from_arc."""
    first_out, head = graph.first_out, graph.head
    outdeg = np.diff(first_out).astype(np.int64)
    per_arc = outdeg[head]                           # ways on after each arc
    from_arc = np.repeat(np.arange(head.size, dtype=np.int64), per_arc)
    start = np.repeat(first_out[head].astype(np.int64), per_arc)
    row_start = np.repeat(np.cumsum(per_arc) - per_arc, per_arc)
    to_arc = start + (np.arange(from_arc.size, dtype=np.int64) - row_start)
    return from_arc, to_arc


def _allowed(graph, from_arc: np.ndarray, to_arc: np.ndarray) -> tuple[np.ndarray, int]:
    """Mask of the turns that no restriction bans, and how many were banned."""
    r = graph.turn_restrictions
    if r is None or len(r) == 0:
        return np.ones(from_arc.size, dtype=bool), 0
    m = np.int64(graph.num_arcs)
    banned_keys = np.unique(r.from_arc.astype(np.int64) * m + r.to_arc)
    keys = from_arc * m + to_arc
    # a binary search of each turn's key among the few banned ones (np.isin sorts all
    # the turns' keys: 1.7 s for 7 M turns at 1 M nodes)
    at = np.minimum(np.searchsorted(banned_keys, keys), banned_keys.size - 1)
    hit = banned_keys[at] == keys
    return ~hit, int(hit.sum())


def _turn_types(graph, from_arc: np.ndarray, to_arc: np.ndarray) -> np.ndarray:
    """Each turn's type. The angles are computed in chunks of _TURN_CHUNK turns on a
    thread pool (NumPy releases the GIL in its loops): the float64 temporaries (about
    100 B a turn) stay bounded and every core works; each turn's value is the same as
    in one pass (elementwise operations)."""
    tail, head = graph.tail, graph.head
    back = head[to_arc] == tail[from_arc]
    types = np.full(from_arc.size, STRAIGHT, dtype=np.int8)
    if graph.has_coordinates and from_arc.size:
        only = _only_way_on(graph, from_arc, back)

        def typed(lo: int) -> None:
            hi = min(lo + _TURN_CHUNK, from_arc.size)
            types[lo:hi] = _angle_types(graph, from_arc[lo:hi], to_arc[lo:hi], only[lo:hi])
        threads = usable_cores()
        with ThreadPoolExecutor(max(1, min(threads, -(-from_arc.size // _TURN_CHUNK)))) as pool:
            list(pool.map(typed, range(0, from_arc.size, _TURN_CHUNK)))
    types[back] = U_TURN
    return types


def _angle_types(graph, from_arc, to_arc, only) -> np.ndarray:
    """Types by the turn angle (``only``: the single way on, straight unless beyond sharp)."""
    types = np.full(from_arc.size, STRAIGHT, dtype=np.int8)
    angle = _turn_angles(graph, from_arc, to_arc)
    a = np.abs(angle)
    side = np.where(angle < 0, 0, 1)                 # negative: clockwise, a right turn
    plain = np.array([[TURN_TYPE_INDEX[f"{k}right"], TURN_TYPE_INDEX[f"{k}left"]]
                      for k in ("slight_", "", "sharp_")], dtype=np.int8)
    band = np.searchsorted(_ANGLE_BOUNDS, a)         # 0 straight .. 4 beyond sharp
    turning = (band >= 1) & (band <= 3)
    types[turning] = plain[band[turning] - 1, side[turning]]
    types[band >= 4] = U_TURN
    types[only & (band < 4)] = STRAIGHT
    return types


def _only_way_on(graph, from_arc: np.ndarray, back: np.ndarray) -> np.ndarray:
    """Turns that are the single way on from their arc besides going back: a bend in
    the road or a merge, not a turn a driver chooses."""
    forward_options = np.bincount(from_arc[~back], minlength=graph.num_arcs)
    return (forward_options[from_arc] == 1) & ~back


def _turn_angles(graph, from_arc: np.ndarray, to_arc: np.ndarray) -> np.ndarray:
    """Signed angle in degrees from the direction arriving along from_arc to the
    direction leaving along to_arc (positive: counter-clockwise, a left turn)."""
    lon, lat = graph.lon, graph.lat
    via = graph.head[from_arc]
    before = _neighbour_point(graph, from_arc, at_head=True)   # last point before via
    after = _neighbour_point(graph, to_arc, at_head=False)     # first point after via
    coslat = np.cos(np.radians(lat[via]))
    ax = (lon[via] - before[:, 0]) * coslat
    ay = lat[via] - before[:, 1]
    bx = (after[:, 0] - lon[via]) * coslat
    by = after[:, 1] - lat[via]
    return np.degrees(np.arctan2(ax * by - ay * bx, ax * bx + ay * by))


def _neighbour_point(graph, arcs: np.ndarray, at_head: bool) -> np.ndarray:
    """(lon, lat) of the geometry point next to the arc's head (or tail): an interior
    point where the arc has some, else the node at the other end."""
    other = graph.tail[arcs] if at_head else graph.head[arcs]
    pts = np.stack([graph.lon[other], graph.lat[other]], axis=1)
    if graph.geometry_first is not None:
        first = graph.geometry_first
        has = first[arcs + 1] > first[arcs]
        idx = np.where(at_head, first[arcs + 1] - 1, first[arcs])[has]
        pts[has] = graph.geometry_lonlat[idx]
    return pts
