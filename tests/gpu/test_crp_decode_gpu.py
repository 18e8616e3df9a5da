"""GPU metric decoding (engine/kernels/crp_decode.cu) equals the Numba twin bit for
bit: every shipped decoder, and expressions with division and every operator."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.crp.metric.costs import DecodeError, DecodeInputs
from engine.crp.metric.decoder import load_decoder, parse_decoder, shipped_decoders
from engine.core.turns import turn_graph
from engine.generate.network import generate_road_network
from tests.strategies import dimacs_like_graph

EXPRESSIONS = [
    "cost / max(lanes, 1) + length_m / 7 * 3 - time_s / 3",
    "where(road_class <= secondary and not toll, cost * 0.93, cost / 0.87) + clamp(speed_kmh / 9.1, 0.3, 7.7)",
    "min(cost, travel_time * 1.1) + where(oneway or lanes >= 2, distance / 13, 0.5) - -0.25",
    "(cost + 0.5) * (1 != lanes) + (lanes == 1) * length_m / 3.3",
]


@pytest.fixture(scope="module")
def graphs(gpu):
    g = generate_road_network(100_000, seed=11)
    t = turn_graph(g)
    return g, DecodeInputs(g, t, gpu), DecodeInputs(g, t, cpu_backend())


def _same(on_gpu, on_cpu, decoder):
    a = on_gpu.decode(decoder)
    b = on_cpu.decode(decoder)
    assert np.array_equal(a.arc_cost.get(), b.arc_cost)
    assert np.array_equal(a.turn_weight.get(), b.turn_weight)


@pytest.mark.parametrize("name", [n for n in shipped_decoders() if not n.startswith("dimacs")]
                         + ["dimacs-time", "dimacs-distance"])
def test_shipped_decoders_bit_identical(graphs, name):
    _, on_gpu, on_cpu = graphs
    _same(on_gpu, on_cpu, load_decoder(name))


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_expressions_bit_identical(graphs, expression):
    _, on_gpu, on_cpu = graphs
    text = load_decoder("car-fastest").to_toml() + ""
    decoder = parse_decoder(text.replace('kind = "time"', f'kind = "time"\nexpression = "{expression}"'))
    _same(on_gpu, on_cpu, decoder)


def test_errors_found_on_gpu(graphs):
    _, on_gpu, _ = graphs
    d = parse_decoder('name = "x"\nkind = "distance"\nexpression = "cost / (lanes - 1)"\n')
    with pytest.raises(DecodeError, match="infinite"):
        on_gpu.decode(d)


def test_metric_only_graph(gpu):
    g = dimacs_like_graph(seed=3, n=5000, m=40_000, max_distance=9000)
    t = turn_graph(g)
    on_gpu, on_cpu = DecodeInputs(g, t, gpu), DecodeInputs(g, t, cpu_backend())
    for name in ("dimacs-time", "dimacs-distance"):
        _same(on_gpu, on_cpu, load_decoder(name))
