"""The layout of the synthetic road network (engine.generate.network): where things lie.

The warped, jittered grid of intersections and every candidate grid street with its
line class; lakes and the river that cut it; motorway lines with their interchanges.
engine.generate.network then picks, directs and dresses the streets. Every function draws
from the ``rng`` it is given in a fixed order, so the same (num_nodes, seed) keeps
giving the same map.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.core.graph import ROAD_CLASS_INDEX

C = ROAD_CLASS_INDEX
MOTORWAY, TRUNK, PRIMARY, SECONDARY = C["motorway"], C["trunk"], C["primary"], C["secondary"]
TERTIARY, RESIDENTIAL, LIVING, SERVICE = C["tertiary"], C["residential"], C["living_street"], C["service"]

GRID_FRACTION = 0.8      # share of the nodes on the grid; shape nodes make up the rest
ASPECT = 1.25            # grid width / height
GAP_M = (65.0, 115.0)    # spacing of grid lines (uniform), mean 90 m
JITTER_M = 8.0           # small kinks; < min gap / 2 keeps the jittered grid planar
LAKE_SHARE = 0.03        # share of the grid area under lakes
LINE_PERIODS = ((5, TERTIARY), (10, SECONDARY), (30, PRIMARY), (60, TRUNK))
MOTORWAY_PERIOD, MOTORWAY_OFFSET = 120, 30   # every 4th primary line (never a trunk line)
SAMPLE_STEP, INTERCHANGE_STEP = 5, 30        # motorway node every 5 blocks, exit every 30


@dataclass
class Grid:
    """W x H intersections: node u + v * W at grid index (u, v), at (x, y) metres."""
    W: int
    H: int
    to_metres: Callable   # (u, v[, jitter]) -> (x, y), for grid and motorway nodes
    u: np.ndarray
    v: np.ndarray
    x: np.ndarray
    y: np.ndarray

    @property
    def size(self) -> int:
        return self.W * self.H


@dataclass
class GridStreets:
    """Every street of the full grid (before lakes and thinning)."""
    eu: np.ndarray
    ev: np.ndarray
    cls: np.ndarray
    line: np.ndarray     # index of the grid line it lies on
    mid_u: np.ndarray    # its midpoint in grid units
    mid_v: np.ndarray


@dataclass
class Motorways:
    """Motorway nodes (ids G..G+nodes-1) and their streets, ramps to the grid included."""
    nodes: int
    a: np.ndarray
    b: np.ndarray
    toll: np.ndarray
    x: np.ndarray
    y: np.ndarray


def lay_out_grid(rng, num_nodes: int) -> Grid:
    """Grid size for ``num_nodes`` and where each intersection lies: irregular line
    spacing, then a smooth warp (Lipschitz < 1, so it cannot fold the grid onto itself)."""
    W = max(5, round(np.sqrt(num_nodes * GRID_FRACTION * ASPECT)))
    H = max(5, round(num_nodes * GRID_FRACTION / W))
    xs = np.cumsum(rng.uniform(*GAP_M, W))
    ys = np.cumsum(rng.uniform(*GAP_M, H))
    xs -= 0.5 * (xs[0] + xs[-1])
    ys -= 0.5 * (ys[0] + ys[-1])
    warp_x, warp_y = waves(rng, 4, [1500, 4000, 10000, 30000], 0.1), \
        waves(rng, 4, [1500, 4000, 10000, 30000], 0.1)

    def to_metres(u, v, jitter=0.0):
        x, y = np.interp(u, np.arange(W), xs), np.interp(v, np.arange(H), ys)
        if jitter:   # per-node jitter below half the smallest gap keeps the grid planar
            x, y = x + rng.uniform(-jitter, jitter, x.size), y + rng.uniform(-jitter, jitter, y.size)
        return x + warp_x(x, y), y + warp_y(x, y)

    gv, gu = np.divmod(np.arange(W * H), W)
    gx, gy = to_metres(gu, gv, JITTER_M)
    return Grid(W, H, to_metres, gu, gv, gx, gy)


def grid_streets(grid: Grid) -> GridStreets:
    """Horizontal streets take their row's class, vertical ones their column's."""
    W, H = grid.W, grid.H
    row_cls, col_cls = line_classes(H), line_classes(W)
    hj, hi = np.divmod(np.arange(H * (W - 1)), W - 1)
    vj, vi = np.divmod(np.arange((H - 1) * W), W)
    eu = np.concatenate([hj * W + hi, vj * W + vi])
    ev = np.concatenate([hj * W + hi + 1, (vj + 1) * W + vi])
    cls = np.concatenate([row_cls[hj], col_cls[vi]])
    horizontal = np.arange(eu.size) < hj.size
    line = np.where(horizontal, np.concatenate([hj, vj]), np.concatenate([hi, vi]))
    mid_u, mid_v = 0.5 * (grid.u[eu] + grid.u[ev]), 0.5 * (grid.v[eu] + grid.v[ev])
    return GridStreets(eu, ev, cls, line, mid_u, mid_v)


def cut_by_water(rng, grid: Grid, local: GridStreets):
    """(alive, valid): lakes remove grid nodes; a river cuts every street but the bridges."""
    W, H, eu, ev, cls = grid.W, grid.H, local.eu, local.ev, local.cls
    alive = ~lakes(rng, W, H)
    valid = alive[eu] & alive[ev]
    if min(W, H) >= 40:
        level, wavelength, phase = rng.uniform(0.3, 0.7), rng.uniform(0.4, 0.9), rng.uniform(0, 2 * np.pi)
        side = grid.v > H * (level + 0.08 * np.sin(2 * np.pi * grid.u / (W * wavelength) + phase))
        bridge = (cls <= SECONDARY) | ((cls == TERTIARY) & (rng.random(eu.size) < 0.5)) \
            | (rng.random(eu.size) < 0.03)
        valid &= (side[eu] == side[ev]) | bridge
    return alive, valid


def motorway_streets(grid: Grid, alive: np.ndarray) -> Motorways:
    """Motorways on their own nodes, without the ramps whose grid corner is under a lake."""
    G = grid.size
    m_u, m_v, m_a, m_b, m_toll = motorways(grid.W, grid.H)
    ramp_ok = (m_b >= G) | alive[np.minimum(m_b, G - 1)]
    mx, my = grid.to_metres(m_u, m_v)
    return Motorways(m_u.size, m_a[ramp_ok], m_b[ramp_ok], m_toll[ramp_ok], mx, my)


# ------------------------------------------------------------------ shapes
def waves(rng, count, wavelengths, slope, amplitude=None):
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


def line_classes(count: int) -> np.ndarray:
    """Class of each grid line: lines at multiples of 5/10/30/60 from the centre are upgraded."""
    d = np.arange(count) - count // 2
    cls = np.full(count, RESIDENTIAL, dtype=np.int8)
    for period, c in LINE_PERIODS:
        cls[d % period == 0] = c
    return cls


def lakes(rng, W: int, H: int) -> np.ndarray:
    """Mask of grid nodes under lakes: discs of 3-10 blocks radius covering ~LAKE_SHARE."""
    count = int(LAKE_SHARE * W * H / (np.pi * 46.3))   # 46.3 = E[r^2] for r ~ U(3, 10)
    wet = np.zeros((H, W), dtype=bool)
    for cu, cv, r in zip(rng.uniform(0, W, count), rng.uniform(0, H, count), rng.uniform(3, 10, count)):
        i0, i1 = max(0, int(cu - r)), min(W, int(cu + r) + 1)
        j0, j1 = max(0, int(cv - r)), min(H, int(cv + r) + 1)
        jj, ii = np.mgrid[j0:j1, i0:i1]
        wet[j0:j1, i0:i1] |= (ii - cu) ** 2 + (jj - cv) ** 2 < r * r
    return wet.ravel()


def motorways(W: int, H: int):
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


def offset_point(rng, x0, y0, x1, y1, max_offset, t=0.5):
    """A point at fraction t from (x0, y0) to (x1, y1), pushed sideways by up to
    max_offset x the segment length (curved streets, without crossing neighbours)."""
    off = rng.uniform(-max_offset, max_offset, np.size(x0))
    dx, dy = x1 - x0, y1 - y0
    return x0 + t * dx - off * dy, y0 + t * dy + off * dx
