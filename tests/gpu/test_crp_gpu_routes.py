"""CRP customized on the GPU: the shortcut matrices equal the CPU twin's level by
level, and routes on them equal the independent turn-aware oracle on 1,000 random
pairs per graph and decoder (NY dimacs-time, Porto and Heidelberg car-fastest and
delivery from their caches, the generated network)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp import CrpQuery, Overlay, load_decoder
from engine.crp.customization.customize import customize
from tests.conftest import DATA, NY_T, need
from tests.gpu.crp_partitions import partition_for
from tests.engine.test_crp import compare_with_oracle


def _graph(name):
    from engine.io import load
    from engine.io.cache import load_cache
    if name == "generated":
        from engine.generate.network import generate_road_network
        return generate_road_network(50_000, seed=7)
    if name == "ny":
        return load([need(NY_T)])
    for suffix in (".rlg", ".osm.pbf"):
        path = DATA / "osm" / f"{name}{suffix}"
        if path.exists():
            return load_cache(path) if suffix == ".rlg" else load([path])
    pytest.skip(f"no {name} graph under {DATA / 'osm'}")


@pytest.mark.parametrize("name, decoders", [
    ("ny", ["dimacs-time"]),
    ("porto_portugal", ["car-fastest", "delivery"]),
    ("heidelberg", ["car-fastest", "delivery"]),
    ("generated", ["car-fastest", "delivery"]),
])
def test_gpu_customization_routes_match_oracle(gpu, name, decoders):
    g = _graph(name)
    overlay = Overlay(g, partition_for(g))
    for decoder_name in decoders:
        decoder = load_decoder(decoder_name)
        on_gpu = customize(overlay, decoder, gpu)
        cpu = customize(overlay, decoder)
        for level, (a, b) in enumerate(zip(cpu.shortcuts, on_gpu.shortcuts)):
            assert np.array_equal(a, b), f"{name} {decoder_name}: level {level} differs"
        assert np.array_equal(cpu.turn_weight, on_gpu.turn_weight)
        checked = compare_with_oracle(g, overlay, on_gpu, CrpQuery(overlay, on_gpu), 50, 20, seed=3)
        assert checked == 1000
