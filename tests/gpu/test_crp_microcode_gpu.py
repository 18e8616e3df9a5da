"""The lowest level's microinstructions on the GPU (engine/kernels/crp_microcode.cu)
equal the CPU runner and the Dijkstra reference (customize_cells) bit for bit: a
generated network with banned and forbidden turns under several block packings, NY
travel times, and overflow.

Partitions come from $ROUTELAB_DATA/crp/NAME.rlp when there (the device has no METIS),
else from partition_graph."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.microcode import compile_microcode, run_microcode_cpu
from engine.crp.customization.microcode_gpu import DeviceMicrocode, run_microcode_gpu
from engine.crp.partition.overlay import Overlay
from tests.conftest import NY_T, need
from tests.gpu.crp_partitions import partition_for
from tests.strategies import random_turn_weights
from tests.engine.test_crp_microcode import _reference as _with_overflow


def _reference(o, weights):
    s, overflow = _with_overflow(o, weights)
    assert not overflow
    return s


@pytest.fixture(scope="module")
def gen(gen20k_overlay):
    return gen20k_overlay, compile_microcode(gen20k_overlay)


@pytest.mark.parametrize("slots_per_block", [1, 2048, 6144, 30000])
def test_generated_equals_cpu(gen, gpu, slots_per_block):
    o, mc = gen
    dm = DeviceMicrocode(mc, gpu, slots_per_block)
    for seed, forbidden in ((0, 0.0), (1, 0.05), (2, 0.3)):
        tw = random_turn_weights(o, seed, forbidden)
        on_gpu = run_microcode_gpu(dm, gpu.xp.asarray(tw), gpu).get()
        assert np.array_equal(on_gpu, run_microcode_cpu(mc, tw))
        assert np.array_equal(on_gpu, _reference(o, tw))


def test_ny_travel_time(gpu):
    from engine.io import load
    g = load([need(NY_T)])
    o = Overlay(g, partition_for(g, "ny_t"))
    mc = compile_microcode(o)
    dm = DeviceMicrocode(mc, gpu)
    for seed, forbidden in ((0, 0.0), (4, 0.01)):
        tw = random_turn_weights(o, seed, forbidden)
        on_gpu = run_microcode_gpu(dm, gpu.xp.asarray(tw), gpu).get()
        assert np.array_equal(on_gpu, _reference(o, tw))


def test_overflow_raises(gen, gpu):
    o, mc = gen
    dm = DeviceMicrocode(mc, gpu)
    tw = gpu.xp.asarray(random_turn_weights(o, scale=2_000_000))
    with pytest.raises(CostOverflow, match="level-0"):
        run_microcode_gpu(dm, tw, gpu)
    flag = gpu.xp.zeros(1, dtype=np.int32)          # the caller's flag: no sync, no raise
    run_microcode_gpu(dm, tw, gpu, overflow=flag)
    assert int(flag.get()[0]) == 1
