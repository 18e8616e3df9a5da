"""engine.core.units: display forms, amounts with units, and units inferred from the data."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.core.units import Unit, format_duration, format_length, infer_units, parse_amounts


def test_display_forms():
    assert format_length(640) == "640 m" and format_length(12_345) == "12.35 km"
    assert format_length(123_456) == "123.5 km"
    assert format_duration(45) == "45 s" and format_duration(845) == "14:05 min"
    assert format_duration(3725) == "1:02:05 h" and format_duration(-60) == "−1:00 min"
    assert Unit("ds").format(8450) == "14:05 min" and Unit("dm").format(123_456) == "12.35 km"
    assert Unit("µh").format(1_000_000) == "1:00:00 h"          # 10^6 microhours
    assert Unit("").format(1_809_843) == "1,809,843 units" and Unit("").name == "units"
    assert Unit("dm").with_raw(65_470) == "6.55 km (65,470 dm)"
    assert Unit("").with_raw(1_809_843) == "1,809,843 units"
    assert Unit("ds").axis() == (pytest.approx(0.1 / 60), "min")
    assert Unit("dm").axis() == (pytest.approx(1e-4), "km") and Unit("").axis() == (1.0, "units")


def test_small_zero_and_large_values():
    """Sub-metre and sub-second values keep two significant digits (1 dm is "0.1 m",
    never "0 m"); zero is "0 m" / "0 s"; large values keep their magnitude."""
    assert format_length(0) == "0 m" and format_duration(0) == "0 s"
    assert Unit("dm").format(1) == "0.1 m" and Unit("cm").format(35) == "0.35 m"
    assert Unit("mm").format(1) == "0.001 m" and Unit("dm").format(9) == "0.9 m"
    assert Unit("dm").format(10) == "1 m" and format_length(0.999) == "1 m"
    assert Unit("ds").format(1) == "0.1 s" and Unit("µh").format(1) == "3.6 ms"
    assert Unit("ms").format(5) == "5 ms" and Unit("cs").format(50) == "0.5 s"
    assert format_length(999.4) == "999 m" and format_length(999.6) == "1.00 km"
    assert format_length(99_999) == "100.0 km" and format_length(1_234_567) == "1,235 km"
    assert format_length(-0.5) == "-0.5 m" and format_duration(-0.5) == "−0.5 s"
    assert format_duration(59.6) == "1:00 min" and format_duration(86_400 * 3) == "72:00:00 h"
    assert Unit("dm").format(2**31 - 1) == "214,748 km" and Unit("").format(0.5) == "0.50 units"


def test_the_raw_value_only_where_it_adds_information():
    """"20:43 min (12,428 ds)" and "0.1 m (1 dm)" say more than one value; "745 m
    (745 m)" and "45 s (45 s)" would say one value twice, so they are "745 m", "45 s"."""
    assert Unit("ds").with_raw(12_428) == "20:43 min (12,428 ds)"
    assert Unit("m").with_raw(745) == "745 m" and Unit("s").with_raw(45) == "45 s"
    assert Unit("m").with_raw(2_398) == "2.40 km (2,398 m)" and Unit("dm").with_raw(1) == "0.1 m (1 dm)"
    assert Unit("m").with_raw(0) == "0 m" and Unit("").with_raw(7) == "7 units"
    assert "(" not in Unit("µh").words                    # "(in microhours (3.6 ms))" nested


def test_amounts_with_and_without_units():
    assert parse_amounts("300,600,900", Unit("ds")) == [3000, 6000, 9000]     # seconds
    assert parse_amounts("5min, 10 min", Unit("s")) == [300, 600]
    assert parse_amounts("500,2km", Unit("dm")) == [5000, 20_000]             # metres, km
    assert parse_amounts("7,9", Unit("")) == [7, 9]                           # raw units
    for bad, unit in [("5km", Unit("ds")), ("10,5", Unit("s")), ("0", Unit("s")), ("x", Unit("s")),
                      ("5min", Unit(""))]:
        with pytest.raises(ValueError):
            parse_amounts(bad, unit)


def test_generated_graph_units_are_inferred_back():
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=3000, seed=2)
    assert g.metric_units == {"distance": "m", "travel_time": "ds"}
    blind = dataclasses.replace(g, metric_units={})
    assert infer_units(blind) == {"distance": "m", "travel_time": "ds"}
    # the same arcs with lengths in decimetres and times in seconds
    scaled = dataclasses.replace(g, metric_units={}, metrics={
        "distance": g.metrics["distance"] * 10,
        "travel_time": np.maximum(1, g.metrics["travel_time"] // 10).astype(np.int32)})
    assert infer_units(scaled) == {"distance": "dm", "travel_time": "s"}


def test_units_that_cannot_be_established_stay_unknown():
    from engine.generate.network import generate_road_network
    g = generate_road_network(num_nodes=500, seed=3)
    noise = np.random.default_rng(0).integers(1, 10**6, g.num_arcs).astype(np.int32)
    odd = dataclasses.replace(g, metric_units={}, metrics={"weight": noise})
    assert infer_units(odd) == {}
    no_xy = dataclasses.replace(g, metric_units={}, lon=None, lat=None)
    assert infer_units(no_xy) == {}


def test_dimacs_new_york_units(ny):
    assert ny.metric_units["distance"] == "dm"
    if "travel_time" in ny.metrics:
        assert ny.metric_units["travel_time"] == "µh"     # 40/60/80/100 km/h classes
