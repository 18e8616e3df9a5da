"""Isochrones (issue 15): every node within a cut-off is inside its area, no node far
beyond it is; the areas nest and the bands tile them; cut-offs read with their unit.
The command's GeoJSON and errors are tested by tests/app/test_cli_isochrone.py."""
from __future__ import annotations

import numpy as np
import pytest
import shapely

from engine.routing import reference
from engine.generate.network import generate_road_network
from engine.core.graph import RoadGraph
from engine.sssp.isochrone import default_buffer_m, isochrones
from engine.core.polylines import arc_polylines

SOURCE = 700


@pytest.fixture(scope="module")
def graph():
    return generate_road_network(3_000, seed=11)


@pytest.fixture(scope="module")
def tree(graph):
    return reference.sssp(graph, SOURCE, "travel_time")


@pytest.fixture(scope="module")
def cutoffs(tree):
    far = tree.distance.max()
    return [round(far * f) for f in (0.15, 0.3, 0.45)]


@pytest.fixture(scope="module")
def iso(graph, tree, cutoffs):
    return isochrones(graph, tree.distance, "travel_time", cutoffs, source=SOURCE)


def reached_arcs_xy(graph, tree, cutoff: float):
    """The whole polylines (metres) of every arc whose tail is within ``cutoff``: a
    superset of the reached road, so "far from it" is far from the reached road too."""
    arcs = np.flatnonzero((tree.distance[graph.tail] >= 0) & (tree.distance[graph.tail] <= cutoff))
    points, first = arc_polylines(graph, arcs)
    xy = graph.projection.to_xy(points)
    return shapely.linestrings(xy, indices=np.repeat(np.arange(arcs.size), np.diff(first)))


def test_every_node_within_a_cutoff_is_inside_and_none_far_beyond(graph, tree, cutoffs, iso):
    width = iso.buffer_m
    nodes_xy = graph.projection.to_xy(np.stack([graph.lon, graph.lat], axis=1))
    for cutoff, area in zip(cutoffs, iso.areas):
        within = (tree.distance >= 0) & (tree.distance <= cutoff)
        inside = shapely.contains_xy(area, graph.lon, graph.lat)
        assert within.sum() > 50 and inside[within].all(), np.flatnonzero(within & ~inside)[:5]
        lines = reached_arcs_xy(graph, tree, cutoff)
        _, gap = shapely.STRtree(lines).query_nearest(shapely.points(nodes_xy), return_distance=True,
                                                      all_matches=False)
        far = ((tree.distance > 1.5 * cutoff) | (tree.distance < 0)) & (gap > 2 * width)
        assert far.sum() > 50 and not inside[far].any(), np.flatnonzero(far & inside)[:5]


def test_areas_nest_and_bands_tile_them(iso):
    for small, big in zip(iso.areas, iso.areas[1:]):
        assert shapely.difference(small, big).area < 1e-6 * small.area
    assert all(a.is_valid and b.is_valid and not b.is_empty for a, b in zip(iso.areas, iso.bands))
    assert shapely.union_all(iso.bands).symmetric_difference(iso.areas[-1]).area < 1e-5 * iso.areas[-1].area
    for a, b in zip(iso.bands, iso.bands[1:]):
        assert shapely.intersection(a, b).area < 1e-6 * b.area
    assert list(iso.area_m2) == sorted(iso.area_m2)


def test_the_part_of_an_arc_within_the_cutoff_is_taken():
    """A cut-off between an arc's tail and head reaches into the arc in proportion to its
    cost: a road east, 1 km arcs of cost 100, cut-off 250 reaches 2.5 km along it."""
    lon = 10 + np.arange(5) * 1000 / (111_195 * np.cos(np.radians(50)))   # 1 km apart at 50° N
    g = RoadGraph.from_arcs(5, [0, 1, 2, 3], [1, 2, 3, 4], {"time": np.full(4, 100)},
                            lon=lon, lat=np.full(5, 50.0), metric_units={"time": "s"})
    iso = isochrones(g, np.array([0, 100, 200, 300, 400]), "time", [250], buffer_m=20, source=0)
    area = shapely.transform(iso.areas[0], g.projection.to_xy)
    x0 = g.xy[0, 0]
    inside = [(x0 + m, 0) for m in (0, 1000, 2400, 2515)]
    outside = [(x0 + m, 0) for m in (2540, 3000, 4000)] + [(x0 + 1000, 30)]
    assert all(shapely.contains_xy(area, x, y) for x, y in inside)
    assert not any(shapely.contains_xy(area, x, y) for x, y in outside)
    assert iso.area_m2[0] == pytest.approx(2500 * 40 + np.pi * 20 ** 2, rel=0.01)


def test_the_default_buffer_is_half_the_median_arc(graph):
    xy = graph.xy
    median = np.median(np.hypot(*(xy[graph.head] - xy[graph.tail]).T))
    assert default_buffer_m(graph) == pytest.approx(np.clip(median / 2, 10, 150))


def test_a_unit_after_the_last_cutoff_applies_to_all():
    from engine.capabilities.isochrone import cutoffs_in_raw_units
    from engine.core.units import Unit
    assert cutoffs_in_raw_units("5, 10, 15 min", Unit("ds")) == [3000, 6000, 9000]
    assert cutoffs_in_raw_units("300,600", Unit("ds")) == [3000, 6000]          # seconds
    assert cutoffs_in_raw_units("0.5, 1.5km", Unit("m")) == [500, 1500]
    with pytest.raises(ValueError, match="'10, 5 min': amounts must increase"):
        cutoffs_in_raw_units("10, 5 min", Unit("ds"))
