"""The per-level CRP customization chart (app/features/crp/chart.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from app.features.crp.chart import HISTORY_RUNS, CustomizationChart, format_ms
from engine.crp.customization.customize import customize
from engine.crp.metric.decoder import load_decoder
from engine.crp.partition.overlay import Overlay
from engine.crp.partition.nested import partition_graph
from engine.generate.network import generate_road_network

SHOTS = os.environ.get("ROUTELAB_SHOTS")

GPU_RECORDS = [   # as engine.crp.customization.gpu reports them: three phases per level
    {"level": 0, "cells": 97, "shortcuts": 9961, "variant": "microcode", "rounds": 1,
     "ms": {"mapping": 0.05, "search": 0.31, "collection": 0.02}},
    {"level": 1, "cells": 12, "shortcuts": 4896, "variant": "bf_minplus", "rounds": 6,
     "ms": {"mapping": 0.04, "search": 0.52, "collection": 0.03}},
]


@pytest.fixture(scope="module")
def metric():
    g = generate_road_network(3000, seed=2)
    return customize(Overlay(g, partition_graph(g, seed=0)), load_decoder("car-fastest"))


@pytest.fixture
def chart(qtbot):
    w = CustomizationChart()
    qtbot.addWidget(w)
    w.resize(520, 420)
    w.show()
    qtbot.waitExposed(w)
    return w


def _widths(chart, phase):
    return np.asarray(chart.bars[phase].opts["width"], dtype=float)


def test_show_run_one_bar_per_level(chart, metric, qtbot):
    chart.show_run(metric.timings, metric.decode_ms, metric.total_ms, metric.backend, None)
    levels = len(metric.timings)
    assert levels == 2 and chart.bar_count() == levels
    assert chart.row_labels()[:3] == ["decode", "L0 (microcode)", "L1 (dijkstra)"]
    assert chart.row_labels()[3:] in ([], ["other"])          # the rest of the run, if any
    # row 0 is the decode bar, rows 1.. the levels' "search" phase (the CPU's only one)
    np.testing.assert_allclose(_widths(chart, "decode"), [metric.decode_ms, 0, 0])
    np.testing.assert_allclose(_widths(chart, "search")[1:], [r["ms"]["search"] for r in metric.timings])
    total = metric.decode_ms + metric.total_ms
    assert f"{format_ms(total)} ms" in chart.title and "CPU" in chart.title
    qtbot.waitUntil(lambda: chart.levels_plot.getAxis("left").width() > 80)   # room for the labels
    assert chart.history() == pytest.approx([total])


def test_gpu_phases_stack_and_memory(chart):
    chart.show_run(GPU_RECORDS, 0.4, 0.97, "gpu", 45 * 2**20 + 2**19)
    assert "GPU memory: 45.5 MiB" in chart.title and "1.37 ms" in chart.title
    assert chart.row_labels() == ["decode", "L0 (microcode)", "L1 (bf_minplus)"]
    x0 = np.asarray(chart.bars["collection"].opts["x0"], dtype=float)
    np.testing.assert_allclose(x0[1:], [0.36, 0.56])      # stacked after mapping + search
    assert chart.legend() == ["decode", "mapping", "search", "collection"]
    # a CPU run after it: the GPU-only phases are emptied, not left standing, nor in the legend
    chart.show_run(GPU_RECORDS[:1] and [{"level": 0, "variant": "microcode", "ms": {"search": 2.0}}],
                   1.0, 2.0, "cpu", None)
    assert _widths(chart, "mapping").size == 0 and chart.bar_count() == 1
    assert chart.legend() == ["decode", "search"]


def test_the_rows_add_up_to_the_total(chart):
    """What the levels' phases leave of the run's time is an "other" row."""
    chart.show_run(GPU_RECORDS, 0.4, 2.0, "gpu", None)          # the levels' phases: 0.97 ms
    assert chart.row_labels()[-1] == "other" and chart.legend()[-1] == "other"
    widths = sum(np.asarray(item.opts["width"], dtype=float).sum() for item in chart.bars.values())
    assert widths == pytest.approx(0.4 + 2.0)
    chart.show_run(GPU_RECORDS, 0.4, 0.97, "gpu", None)         # nothing left: no such row
    assert "other" not in chart.row_labels()


def test_history_grows_and_is_capped(chart):
    for k in range(HISTORY_RUNS + 5):
        chart.show_run(GPU_RECORDS, 0.1 * k, 1.0, "gpu", None)
    h = chart.history()
    assert len(h) == HISTORY_RUNS
    assert h[0] == pytest.approx(0.1 * 5 + 1.0) and h[-1] == pytest.approx(0.1 * (HISTORY_RUNS + 4) + 1.0)
    x, y = chart.history_curve.getData()
    np.testing.assert_allclose(y, h)


def test_add_level_live_then_show_run_replaces(chart):
    chart.show_run(GPU_RECORDS, 0.4, 0.97, "gpu", None)
    chart.add_level(GPU_RECORDS[0])             # a new run's level 0: the old bars go
    assert chart.bar_count() == 1 and chart.row_labels() == ["L0 (microcode)"]
    chart.add_level(GPU_RECORDS[1])
    assert chart.bar_count() == 2 and "level 1 done" in chart.title
    assert len(chart.history()) == 1             # only finished runs join the history
    chart.show_run(GPU_RECORDS, 0.5, 0.97, "gpu", None)
    assert chart.bar_count() == 2 and len(chart.history()) == 2
    chart.begin_run()
    assert chart.bar_count() == 0 and chart.title.startswith("Customizing")


def test_screenshot(chart, qtbot, tmp_path):
    for k in range(12):
        chart.show_run(GPU_RECORDS, 0.3 + 0.05 * (k % 3), 0.97 + 0.1 * k, "gpu", 45 * 2**20)
    qtbot.wait(50)                                # the axes take their labels' width
    path = os.path.join(SHOTS or str(tmp_path), "crp_chart.png")
    assert chart.grab().save(path)
    assert os.path.getsize(path) > 5_000
