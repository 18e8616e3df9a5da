"""Isochrones that always work (issue 35): every overlay input is polygonal, so GEOS
never sees mixed dimensions, whatever degenerate pieces the roads give (points,
zero-length arcs, collapsed rings, lines); the number of cut-offs and the buffer width
are bounded, and the geometry's memory is refused above the budget before it is built.
The classic areas are tested by tests/engine/test_isochrone.py."""
from __future__ import annotations

import numpy as np
import pytest
import shapely

from engine.core.graph import RoadGraph
from engine.io.limits import OverBudget
from engine.routing import reference
from engine.sssp.isochrone import LARGEST_BUFFER_M, MAX_CUTOFFS, isochrones, polygonal
from tests.conftest import DATA, need

MONACO = DATA / "osm" / "monaco.osm.pbf"
SQUARE = shapely.box(0, 0, 10, 10)


def assert_polygonal(g, area: float | None = None) -> None:
    assert g.geom_type in ("Polygon", "MultiPolygon") and g.is_valid, g.wkt[:200]
    if area is not None:
        assert g.area == pytest.approx(area, rel=1e-9, abs=1e-9)
    for other in (SQUARE, shapely.box(5, 5, 20, 20), shapely.Polygon()):   # overlays accept it
        shapely.union(g, other), shapely.difference(g, other), shapely.difference(other, g)


# ------------------------------------------------------------------ polygonal()
DEGENERATE = {
    "point": (shapely.Point(1, 1), 0),
    "zero-length line": (shapely.LineString([(1, 1), (1, 1)]), 0),
    "line": (shapely.LineString([(0, 0), (3, 4)]), 0),
    "empty collection": (shapely.GeometryCollection(), 0),
    "empty polygon": (shapely.Polygon(), 0),
    "collapsed ring": (shapely.Polygon([(0, 0), (1, 1), (0, 0), (1, 1)]), 0),
    "ring with repeated points": (shapely.Polygon([(0, 0), (0, 0), (0, 0), (0, 0)]), 0),
    "bow tie": (shapely.Polygon([(0, 0), (2, 2), (2, 0), (0, 2)]), 2),
    "polygon and its points and lines": (
        shapely.GeometryCollection([SQUARE, shapely.Point(50, 50), shapely.LineString(
            [(60, 60), (70, 70)]), shapely.LineString([(5, 5), (5, 5)])]), 100),
    "nested collections": (
        shapely.GeometryCollection([shapely.GeometryCollection([
            shapely.MultiPolygon([SQUARE]), shapely.MultiPoint([(1, 2), (3, 4)])])]), 100),
    "overlapping parts": (shapely.MultiPolygon([SQUARE, shapely.box(5, 0, 15, 10)]), 150),
    "a part with a collapsed sliver": (
        shapely.MultiPolygon([SQUARE, shapely.Polygon([(20, 20), (20, 20 + 1e-13), (20, 20),
                                                       (20, 20)])]), 100),
    "a hole of too few points": (shapely.Polygon(SQUARE.exterior.coords,
                                                 [[(2, 2), (3, 3), (2, 2), (3, 3)]]), 100),
}


@pytest.mark.parametrize("name", DEGENERATE)
def test_polygonal_keeps_the_area_and_drops_lower_dimensions(name):
    geometry, area = DEGENERATE[name]
    assert_polygonal(polygonal(geometry), area)


def test_polygonal_of_random_mixtures_is_valid_and_overlays():
    """Generated collections of points, zero-length and short lines, valid and invalid
    rings: the result is always a valid (Multi)Polygon that GEOS overlays."""
    rng = np.random.default_rng(35)
    for _ in range(200):
        parts = []
        for _ in range(rng.integers(1, 8)):
            kind = rng.integers(5)
            xy = rng.integers(0, 6, size=(rng.integers(1, 6), 2)).astype(float)
            if kind == 0:
                parts.append(shapely.Point(xy[0]))
            elif kind == 1:
                parts.append(shapely.LineString([xy[0], xy[0]]))
            elif kind == 2 and len(xy) > 1:
                parts.append(shapely.LineString(xy))
            elif len(xy) >= 3:
                parts.append(shapely.Polygon(np.vstack([xy, xy[:1]])))
        assert_polygonal(polygonal(shapely.GeometryCollection(parts)))


# ------------------------------------------------------------------ isochrones
def _graph(lon, lat, tail, head, cost) -> RoadGraph:
    return RoadGraph.from_arcs(len(lon), tail, head, {"time": np.asarray(cost, np.int32)},
                               lon=np.asarray(lon, float), lat=np.asarray(lat, float),
                               metric_units={"time": "s"})


def _areas_ok(iso) -> None:
    for a in (*iso.areas, *iso.bands):
        assert a.geom_type in ("Polygon", "MultiPolygon") and a.is_valid
    for small, big in zip(iso.areas, iso.areas[1:]):
        assert shapely.difference(small, big).area <= 1e-9 + 1e-6 * small.area


def test_a_source_without_arcs_is_a_disc():
    g = _graph([7.0, 7.01], [45.0, 45.0], [1], [0], [5])
    iso = isochrones(g, np.array([0, -1]), "time", [10, 20], buffer_m=30, source=0)
    _areas_ok(iso)
    assert iso.area_m2[0] == pytest.approx(np.pi * 30 ** 2, rel=0.1)


def test_zero_length_and_zero_cost_arcs():
    """Coincident nodes (zero-length arcs), free arcs, and cut-offs that fall exactly on
    node distances (pieces that shrink to points) are all areas."""
    lon = [7.0, 7.0, 7.0, 7.001, 7.001, 7.002]
    lat = [45.0, 45.0, 45.0, 45.0, 45.0, 45.0]
    tail, head = [0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 5, 0]
    cost = [0, 10, 0, 0, 10, 10]
    g = _graph(lon, lat, tail, head, cost)
    dist = reference.sssp(g, 0, "time").distance
    for cutoffs in ([10], [1, 10, 20], [10, 11, 20, 30], list(range(1, 33))):
        _areas_ok(isochrones(g, dist, "time", cutoffs, buffer_m=10, source=0))


def test_generated_graphs_with_coincident_nodes():
    """Random small graphs whose nodes share few distinct positions, cut-offs at the
    node distances: always valid nested areas."""
    rng = np.random.default_rng(7)
    for trial in range(12):
        n = int(rng.integers(3, 40))
        spots = rng.integers(0, 4, size=(n, 2)) * 1e-4
        m = 3 * n
        tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
        cost = rng.integers(0, 4, m)
        g = _graph(7 + spots[:, 0], 45 + spots[:, 1], tail, head, cost)
        dist = reference.sssp(g, 0, "time").distance
        reached = np.unique(dist[dist > 0])
        cutoffs = reached[:MAX_CUTOFFS].tolist() or [1]
        _areas_ok(isochrones(g, dist, "time", cutoffs, buffer_m=float(rng.choice([1, 15, 400])),
                             source=0))


@pytest.fixture(scope="module")
def monaco():
    from engine.io import load
    return load([need(MONACO)])


def test_monaco_every_source_of_a_sample(monaco):
    rng = np.random.default_rng(3)
    for source in rng.choice(monaco.num_nodes, 60, replace=False):
        dist = reference.sssp(monaco, int(source), "distance").distance
        _areas_ok(isochrones(monaco, dist, "distance", [30, 60], source=int(source)))


# ------------------------------------------------------------------ bounds
def test_too_many_cutoffs_are_refused():
    g = _graph([7.0, 7.01], [45.0, 45.0], [0], [1], [5])
    dist = np.array([0, 5])
    isochrones(g, dist, "time", list(range(1, MAX_CUTOFFS + 1)), buffer_m=10)
    with pytest.raises(ValueError, match=f"at most {MAX_CUTOFFS} cut-offs are allowed "
                                         f"\\(got {MAX_CUTOFFS + 1}\\)"):
        isochrones(g, dist, "time", list(range(1, MAX_CUTOFFS + 2)), buffer_m=10)


@pytest.mark.parametrize("width", [1e12, LARGEST_BUFFER_M * 1.01, float("inf"), float("nan"),
                                   0.0, -5.0])
def test_buffer_widths_out_of_range_are_refused(width):
    g = _graph([7.0, 7.01], [45.0, 45.0], [0], [1], [5])
    with pytest.raises(ValueError, match="the buffer width must be a positive number of "
                                         "metres, at most 10,000"):
        isochrones(g, np.array([0, 5]), "time", [10], buffer_m=width)


def test_the_largest_buffer_still_works():
    g = _graph([7.0, 7.01], [45.0, 45.0], [0], [1], [5])
    iso = isochrones(g, np.array([0, 5]), "time", [10], buffer_m=LARGEST_BUFFER_M, source=0)
    _areas_ok(iso)
    assert iso.area_m2[0] > np.pi * LARGEST_BUFFER_M ** 2 * 0.9


def test_geometry_over_the_memory_budget_is_refused_before_it_is_built(monkeypatch):
    from engine.generate.network import generate_road_network
    g = generate_road_network(2_000, seed=5)
    dist = reference.sssp(g, 0, "travel_time").distance
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "64K")
    with pytest.raises(OverBudget, match=r"the service area's geometry \([0-9,]+ road pieces\) "
                                         r"needs 0\.[0-9]+ GiB, budget 6.1e-05 GiB"):
        isochrones(g, dist, "travel_time", [float(dist.max())])
