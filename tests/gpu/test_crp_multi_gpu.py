"""Multi-GPU CRP customization (engine/crp/customization/multi_gpu.py) equals one GPU's
bit for bit: every level's S, the arc costs and turn weights the query reads, and the
overflow level, on NY (every cell, every split level) and on the generated network
under several decoders and variant tables.

With two or more GPUs the split runs over devices 0 and 1; with one it runs over the
same device twice (a Customizer accepts a Backend twice), so the gather, the offsets
and the per-part levels are exercised on any GPU machine."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.customize import Customizer
from engine.crp.metric import FORBIDDEN
from engine.crp.partition.overlay import Overlay
from tests.conftest import NY_T, need
from tests.gpu.crp_partitions import partition_for
from tests.strategies import random_turn_weights


@pytest.fixture(scope="module")
def gpus(gpu):
    """Two Backends: devices 0 and 1, or device 0 twice on a one-GPU machine."""
    from engine.core.backend import device_count, gpu_backend
    return [gpu, gpu_backend(1) if device_count() > 1 else gpu]


def _equal(one, several, what=""):
    assert len(one.shortcuts) == len(several.shortcuts)
    for level, (a, b) in enumerate(zip(one.shortcuts, several.shortcuts)):
        assert a.dtype == b.dtype == np.int32
        assert np.array_equal(a, b), f"{what} level {level} differs"
    for name in ("arc_cost", "turn_weight", "turn_weight_q", "flat_shortcuts"):
        assert np.array_equal(getattr(one, name), getattr(several, name)), f"{what} {name}"
    assert [r["level"] for r in several.timings] == list(range(len(one.shortcuts)))


@pytest.fixture(scope="module")
def ny():
    from engine.io import load
    g = load([need(NY_T)])
    return Overlay(g, partition_for(g, "ny-t"))


def test_ny_every_split_level(ny, gpu, gpus):
    from engine.crp.metric.decoder import load_decoder
    decoder = load_decoder("dimacs-time")
    one = Customizer(ny, gpu).customize(decoder)
    assert one.shortcuts[0].size > 0
    for split in [None, *range(ny.num_levels)]:
        several = Customizer(ny, devices=gpus, split_level=split)
        metric = several.customize(decoder)
        _equal(one, metric, f"NY split {split}:")
        assert split is None or several.gpu.split_level == split
        assert all(r.get("gpus") == 2 for r in metric.timings[:several.gpu.split_level + 1])
        assert metric.total_ms > 0 and several.device_shortcuts is None
        again = several.customize(decoder)                 # the same device state, again
        _equal(one, again, f"NY split {split}, second run:")


def test_ny_turn_weights_three_parts(ny, gpu, gpus):
    """Three parts on two GPUs (any number of parts), U-turn costs and banned turns."""
    one = Customizer(ny, gpu)
    several = Customizer(ny, devices=[gpus[0], gpus[1], gpus[0]])
    for seed in (1, 2):
        tw = random_turn_weights(ny, seed=seed, forbidden=0.01, u_turn=50)
        arcs = ny.graph.metric(None)
        _equal(one.customize_costs(arcs, tw), several.customize_costs(arcs, tw), f"seed {seed}")


@pytest.fixture(scope="module")
def gen(gen20k_overlay):
    return gen20k_overlay


@pytest.mark.parametrize("decoder", ["car-fastest", "car-shortest", "eco", "delivery",
                                     "avoid-motorways"])
def test_generated_network_decoders(gen, gpu, gpus, decoder):
    from engine.crp.metric.decoder import load_decoder
    d = load_decoder(decoder)
    _equal(Customizer(gen, gpu).customize(d), Customizer(gen, devices=gpus).customize(d), decoder)


def _alternate(topo):
    return "local" if topo.level % 2 else "global"


@pytest.mark.parametrize("variants, split", [("local", None), ("global", 1), (_alternate, 0),
                                             ("minplus", 2), (None, 1)])
def test_generated_network_variants(gen, gpu, gpus, variants, split):
    table = [variants] * gen.num_levels if isinstance(variants, str) else variants
    if variants == "minplus":
        table = ["microcode"] + ["minplus"] * (gen.num_levels - 1)
    tw = random_turn_weights(gen, seed=7, forbidden=0.05)
    arcs = gen.graph.metric(None)
    one = Customizer(gen, gpu, table).customize_costs(arcs, tw)
    several = Customizer(gen, None, table, devices=gpus, split_level=split)
    _equal(one, several.customize_costs(arcs, tw), f"{variants} split {split}")


@pytest.mark.parametrize("split", [0, 1, 2])
def test_overflow_is_raised_at_the_same_level(gen, gpu, gpus, split):
    """Huge weights overflow level 0 (first scale) or a higher level (second): several
    GPUs raise CostOverflow naming the same level as one GPU, at every split level."""
    from engine.crp.customization.customize import customize_costs
    arcs = gen.graph.metric(None)
    top = customize_costs(gen, arcs, random_turn_weights(gen)).shortcuts[-2]
    several = Customizer(gen, devices=gpus, split_level=split)
    for scale in (2_000_000, int(1.2 * 2**31 / top[top < FORBIDDEN].max())):
        tw = random_turn_weights(gen, scale=scale)
        with pytest.raises(CostOverflow) as one:
            Customizer(gen, gpu).customize_costs(arcs, tw)
        with pytest.raises(CostOverflow) as many:
            several.customize_costs(arcs, tw)
        assert str(many.value) == str(one.value)
    fine = random_turn_weights(gen, seed=9)                # and it still customizes after
    _equal(Customizer(gen, gpu).customize_costs(arcs, fine), several.customize_costs(arcs, fine))


def test_workspace_and_capability_devices(gen, gpu):
    """customize --devices on the GPU: every visible GPU by default, one when named,
    an unknown id refused with the machine's count."""
    from engine.capabilities.customize import use_devices
    from engine.core.backend import device_count
    from engine.workspace import Workspace
    ws = Workspace(gen.graph, gpu)
    ws.set_partition(gen.partition)
    use_devices(ws, "")
    assert len(ws._device_backends()) == device_count()
    use_devices(ws, "0")
    assert ws.customizer().devices == () and ws.customizer().backend == gpu
    with pytest.raises(ValueError, match=f"no CUDA device {device_count()}"):
        use_devices(ws, f"0,{device_count()}")
    if device_count() > 1:
        use_devices(ws, "1,0")
        c = ws.customizer()
        assert [d.device_id for d in c.devices] == [1, 0]
        from engine.crp.metric.decoder import load_decoder
        metric = ws.customize(load_decoder("car-fastest"))
        _equal(Customizer(gen, gpu).customize(load_decoder("car-fastest")), metric)
