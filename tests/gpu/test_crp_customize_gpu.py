"""GPU CRP customization (engine/crp/customization/gpu.py, kernels crp_customize.cu)
equals the CPU Dijkstra (customize_costs) bit for bit, level by level: every variant
table, forbidden turns, NY travel times with a U-turn cost, and overflow.

Partitions come from $ROUTELAB_DATA/crp/NAME.rlp when there (the device has no
METIS), else from partition_graph."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.customization.cell_metric import CostOverflow
from engine.crp.customization.customize import Customizer, customize_costs
from engine.crp.metric import FORBIDDEN
from engine.crp.partition.overlay import Overlay
from tests.conftest import NY_T, need
from tests.gpu.crp_partitions import partition_for
from tests.strategies import random_turn_weights


@pytest.fixture(scope="module")
def gen(gen20k_overlay, gpu):
    from engine.crp.customization.gpu import GpuCustomizer
    return gen20k_overlay, GpuCustomizer(gen20k_overlay, gpu)


def _same(overlay, customizer, tw):
    ref = customize_costs(overlay, overlay.graph.metric(None), tw)
    shortcuts, records = customizer.run(tw)
    assert [r["level"] for r in records] == list(range(overlay.num_levels))
    for level, (s, expected) in enumerate(zip(shortcuts, ref.shortcuts)):
        assert np.array_equal(s.get(), expected), f"level {level} ({records[level]['variant']})"
    return records


def test_generated_default_variants(gen):
    o, customizer = gen
    records = _same(o, customizer, random_turn_weights(o))
    from engine.crp.customization.gpu import default_variant
    assert [r["variant"] for r in records] == [default_variant(t) for t in o.levels]
    assert [r["variant"] for r in records] == ["microcode"] + ["minplus"] * (o.num_levels - 1)
    assert all(set(r["ms"]) == {"mapping", "search", "collection"} for r in records)


def _alternate(topo):
    return "local" if topo.level % 2 else "global"


def _minplus(topo):
    return "minplus" if topo.level else "microcode"


@pytest.mark.parametrize("variants, options", [
    ("local", {}), ("global", {}),
    ("local", {"threads": 32, "min_blocks": 100_000}),        # one entry per block
    (_alternate, {"rounds_per_check": 1}),
    (_minplus, {}),
    (_minplus, {"minplus_threads": 64, "min_blocks": 100_000}),   # batches of 1..4: KT = 4
    (_minplus, {"minplus_shared_ints": 4000, "minplus_threads": 1024}),
    (_minplus, {"skip_rows": False}),                            # every row, every round
])
def test_every_variant_on_every_level(gen, gpu, variants, options):
    from engine.crp.customization.gpu import GpuCustomizer
    o, _ = gen
    table = [variants] * o.num_levels if isinstance(variants, str) else variants
    customizer = GpuCustomizer(o, gpu, table, **options)
    if isinstance(variants, str):
        assert customizer.variants == table
    _same(o, customizer, random_turn_weights(o, seed=1))


@pytest.mark.parametrize("forbidden", [0.02, 0.3])
def test_forbidden_turns(gen, forbidden):
    o, customizer = gen
    _same(o, customizer, random_turn_weights(o, seed=2, forbidden=forbidden))


def test_ny_travel_time_with_u_turn_cost(gpu):
    from engine.io import load
    from engine.crp.customization.gpu import GpuCustomizer
    g = load([need(NY_T)])
    o = Overlay(g, partition_for(g, "ny-t"))
    customizer = GpuCustomizer(o, gpu)
    _same(o, customizer, random_turn_weights(o, u_turn=1000))
    _same(o, customizer, random_turn_weights(o, seed=4, forbidden=0.01, u_turn=50))


@pytest.mark.parametrize("variants", [None, "local", "global", "minplus"])
def test_overflow_raises_like_the_cpu(gen, gpu, variants):
    """Huge weights: CostOverflow on the same level as the CPU's (level 0 for the
    first scale, a higher level for the second)."""
    from engine.crp.customization.gpu import GpuCustomizer
    o, customizer = gen
    if variants is not None:
        customizer = GpuCustomizer(o, gpu, variants if callable(variants)
                                   else [variants] * o.num_levels)
    top = customize_costs(o, o.graph.metric(None), random_turn_weights(o)).shortcuts[-2]
    for scale in (2_000_000, int(1.2 * 2**31 / top[top < FORBIDDEN].max())):
        tw = random_turn_weights(o, scale=scale)
        with pytest.raises(CostOverflow) as cpu:
            customize_costs(o, o.graph.metric(None), tw)
        with pytest.raises(CostOverflow, match=str(cpu.value).split(" cell")[0]):
            customizer.run(tw)


def test_customizer_costs_on_the_gpu(gen, gpu):
    o, _ = gen
    tw = random_turn_weights(o, seed=5)
    ref = customize_costs(o, o.graph.metric(None), tw)
    seen = []
    customizer = Customizer(o, gpu)
    metric = customizer.customize_costs(o.graph.metric(None), gpu.xp.asarray(tw), name="x",
                                        on_level=seen.append)
    assert metric.backend == "gpu" and len(seen) == o.num_levels
    assert np.array_equal(metric.turn_weight, tw)
    assert not any(hasattr(v, "__cuda_array_interface__") for v in vars(metric).values())
    for s, d, expected in zip(metric.shortcuts, customizer.device_shortcuts, ref.shortcuts):
        assert isinstance(s, np.ndarray) and np.array_equal(s, expected)
        assert np.array_equal(d.get(), expected)
    again = customizer.customize_costs(o.graph.metric(None), tw)   # the same device layout
    assert all(np.array_equal(a, b) for a, b in zip(again.shortcuts, ref.shortcuts))


def test_the_host_microcode_is_freed_once_uploaded(gen, gpu):
    """Level 0's host instructions (12.7 GB at 24 M nodes) die with the upload: no level
    variant keeps them among its options (they once all did)."""
    import gc
    import weakref
    o, _ = gen
    customizer = Customizer(o, gpu)
    host = weakref.ref(customizer.microcode)
    customizer.gpu                                    # uploads, then drops the host copy
    gc.collect()
    assert host() is None
    assert all("microcode" not in level.options for level in customizer.gpu.levels)


@pytest.mark.parametrize("variants", [None, "local", "global", "minplus"])
def test_bad_decoder_raises_after_the_run_and_leaves_gpu_usable(gen, gpu, variants):
    """The GPU checks a decoder's error codes after the levels ran: a cost of 1/0 or a
    negative one still raises DecodeError (never a metric, never a hang), and the
    next good decoder customizes exactly."""
    from engine.crp.customization.customize import customize
    from engine.crp.metric.costs import DecodeError
    from engine.crp.metric.decoder import load_decoder, parse_decoder
    o, _ = gen
    table = variants if variants is None or callable(variants) else [variants] * o.num_levels
    customizer = Customizer(o, gpu, table)
    for expression, reason in (("cost / (lanes - 1)", "infinite"), ("0 - cost", "negative")):
        bad = parse_decoder(f'name = "bad"\nkind = "distance"\nexpression = "{expression}"\n')
        with pytest.raises(DecodeError, match=reason):
            customizer.customize(bad)
    good = load_decoder("car-fastest")
    on_gpu, on_cpu = customizer.customize(good), customize(o, good, None)
    assert on_gpu.decode_ms > 0 and on_gpu.total_ms > 0
    assert all(np.array_equal(a, b) for a, b in zip(on_gpu.shortcuts, on_cpu.shortcuts))
