"""Distance bins for tree colouring: nice widths, 12-16 bins, units, labels, roads."""
from __future__ import annotations

import numpy as np
import pytest

from app.features.tree.distance_bins import display_unit, make_bins, nice_step, segment_distance


@pytest.mark.parametrize("top", [1, 7, 99, 1234, 40_890, 987_654, 1_317_271, 36_000_000])
def test_bins_cover_the_range_with_a_nice_width(top):
    unit = display_unit({"distance": "m"}, "distance")
    bins = make_bins(top, unit)
    step = bins.edges[1] - bins.edges[0]
    assert bins.edges[0] == 0 and bins.edges[-1] >= top > bins.edges[-2]
    assert np.allclose(np.diff(bins.edges), step) and step >= 1
    assert top < 16 or 12 <= bins.count <= 16
    assert len(set(bins.colors)) == bins.count == len(bins.labels())


def test_units_and_labels():
    assert display_unit({"distance": "m"}, "distance").suffix == "km"
    assert display_unit({"travel_time": "ds"}, "travel_time").suffix == "min"
    assert display_unit({}, "distance").suffix == "units"
    assert display_unit({"distance": "dm"}, "distance").factor == pytest.approx(1e-4)
    km = make_bins(23_456, display_unit({"d": "m"}, "d"))
    assert km.labels()[:2] == ["0 – 1.5 km", "1.5 – 3 km"]
    minutes = make_bins(36_000, display_unit({"t": "ds"}, "t"))       # one hour in ds
    assert minutes.labels()[-1] == "56 – 60 min"
    raw = make_bins(1_317_271, display_unit({}, "distance"))
    assert raw.labels()[:2] == ["0 – 100k units", "100k – 200k units"]
    assert raw.labels()[-1] == "1.3M – 1.4M units"
    assert display_unit({}, "distance").format(1_317_271) == "1,317,271 units"
    assert nice_step(2.56) == 3 and nice_step(0.07) == pytest.approx(0.08)


def test_bin_of_distances_and_roads():
    bins = make_bins(1000, display_unit({}, "x"))
    b = bins.of(np.array([-1, 0, 999, 1000, 1500]))
    assert b[0] == bins.count and b[1] == 0 and b[2] == b[3] == b[4] == bins.count - 1
    d = np.array([0, 10, -1, 30])
    assert segment_distance(np.array([0, 1, 2]), np.array([1, 3, 3]), d).tolist() == [10, 30, -1]
