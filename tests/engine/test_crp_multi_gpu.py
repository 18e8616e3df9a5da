"""Multi-GPU CRP customization's bookkeeping on the CPU (no GPU needed): the split plan
(engine.crp.customization.cell_ranges) covers every cell once, keeps the nesting and
balances the work; every range's slice of a level, of level 0's microcode and of a
min-plus layout, costed by the CPU twins, gives exactly that range's part of the whole
level's S; the whole flow (each part's levels, the gather, the levels above, the
copies to the host, overflow) on host stand-ins for the GPUs running the CPU twins;
the --devices parameter is parsed and refused with clear messages.

The GPU runs themselves (multi-GPU == one GPU, bit for bit) are tests/gpu/test_crp_multi_gpu.py."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.backend import cpu_backend, parse_devices
from engine.crp.customization import cell_ranges as cr
from engine.crp.customization.cpu import customize_cells
from engine.crp.customization.customize import Customizer, customize_costs
from engine.crp.customization.microcode import compile_microcode, run_microcode_cpu
from engine.crp.partition.overlay import Overlay
from tests.engine.test_crp_customize_layout import _minplus_rounds
from tests.strategies import random_turn_weights


@pytest.fixture(scope="module")
def overlay():
    """The generated 20,000-node network (seed 5) on the saved gen20k-s5 partition."""
    from engine.generate.network import generate_road_network
    from tests.gpu.crp_partitions import partition_for
    g = generate_road_network(20_000, seed=5)
    return Overlay(g, partition_for(g, "gen20k-s5"))


@pytest.fixture(scope="module")
def reference(overlay):
    tw = random_turn_weights(overlay, seed=3, forbidden=0.05)
    return tw, customize_costs(overlay, overlay.graph.metric(None), tw)


# ------------------------------------------------------------------ the split plan
def test_balanced_cuts():
    assert cr.balanced_cuts(np.ones(10), 2).tolist() == [0, 5, 10]
    assert cr.balanced_cuts(np.ones(10), 3).tolist() == [0, 3, 7, 10]
    assert cr.balanced_cuts(np.array([1, 1, 10, 1]), 2).tolist() == [0, 2, 4]
    assert cr.balanced_cuts(np.zeros(4), 2).tolist()[::2] == [0, 4]
    cuts = cr.balanced_cuts(np.ones(2), 5)                  # more parts than cells
    assert cuts[0] == 0 and cuts[-1] == 2 and np.all(np.diff(cuts) >= 0)
    with pytest.raises(ValueError):
        cr.balanced_cuts(np.ones(3), 0)


@pytest.mark.parametrize("parts", [1, 2, 3, 5])
def test_plan_covers_every_cell_once_and_keeps_the_nesting(overlay, parts):
    parents = cr.parent_cells(overlay)
    for split in [None, *range(overlay.num_levels)]:
        plan = cr.plan_split(overlay, parts, split)
        assert plan.parts == parts and len(plan.cuts) == plan.split_level + 1
        if split is not None:
            assert plan.split_level == split
        for level, cuts in enumerate(plan.cuts):
            assert cuts[0] == 0 and cuts[-1] == overlay.levels[level].num_cells
            assert np.all(np.diff(cuts) >= 0)
            anc = cr.ancestors(overlay, parents, level, plan.split_level)
            for d in range(parts):
                lo, hi = plan.cells(level, d)
                top_lo, top_hi = plan.cells(plan.split_level, d)
                assert np.all((anc[lo:hi] >= top_lo) & (anc[lo:hi] < top_hi))


def test_plan_balances_the_work(overlay):
    plan = cr.plan_split(overlay, 2, 0)            # 640 small cells: an even split
    assert plan.work.max() <= 1.02 * plan.work.sum() / 2
    chosen = cr.plan_split(overlay, 2)
    cost = chosen.work.max() + chosen.top_work
    for split in range(overlay.num_levels):        # the chosen split is the cheapest estimate
        p = cr.plan_split(overlay, 2, split)
        assert cost <= p.work.max() + p.top_work
    with pytest.raises(ValueError, match="levels 0-2"):
        cr.plan_split(overlay, 2, 3)


def test_unnested_numbering_is_refused(overlay):
    from types import SimpleNamespace
    cell_of = np.array(overlay.cell_of)
    cell_of[1] = cell_of[1].max() - cell_of[1]             # parents numbered backwards
    with pytest.raises(ValueError, match="not numbered in the order of their parents"):
        cr.parent_cells(SimpleNamespace(cell_of=cell_of, levels=overlay.levels))


# ------------------------------------------------------------------ the slices
@pytest.mark.parametrize("parts", [1, 2, 3])
def test_every_range_costs_its_part_of_the_whole(overlay, reference, parts):
    """Each part's levels 0..split, costed alone from its own S of the level below,
    equal the whole customization's entries at the part's offsets."""
    tw, ref = reference
    mc = compile_microcode(overlay, 0)
    for split in range(overlay.num_levels):
        plan = cr.plan_split(overlay, parts, split)
        for d in range(parts):
            view = cr.RangeView(overlay, plan, d)
            below = run_microcode_cpu(cr.slice_microcode(mc, *plan.cells(0, d)), tw)
            _assert_part(ref, view, 0, below)
            for level in range(1, split + 1):
                t = view.levels[level]
                s = np.empty(t.num_shortcuts, dtype=np.int32)
                assert not customize_cells(t.vertex_first, t.entry_first, t.exit_first,
                                           t.edge_first, t.edge_to, t.edge_weight, below,
                                           t.clique_first, s)
                minplus, overflow = _minplus_rounds(view, level, view.minplus_layout(level), below)
                assert not overflow and np.array_equal(minplus, s)
                _assert_part(ref, view, level, s)
                below = s


def _assert_part(ref, view, level, s):
    first = view.shortcut_first[level]
    assert np.array_equal(s, ref.shortcuts[level][first:first + s.size]), level
    lo, hi = view.plan.cells(level, view.part)
    whole = view.overlay.levels[level]
    assert s.size == whole.clique_first[hi] - whole.clique_first[lo]


def test_sliced_microcode_keeps_dtypes_and_instructions(overlay):
    mc = compile_microcode(overlay, 0)
    part = cr.slice_microcode(mc, 100, 300)
    for name in ("instr_first", "instr_a", "edge_first", "edge_weight", "clique_first",
                 "collect_slot", "num_slots"):
        assert getattr(part, name).dtype == getattr(mc, name).dtype, name
    assert part.num_cells == 200 and part.instr_first[0] == 0
    assert part.num_instructions == mc.instr_first[300] - mc.instr_first[100]
    assert part.num_shortcuts == mc.clique_first[300] - mc.clique_first[100]


def test_a_range_that_leaves_its_subcells_is_refused(overlay):
    from engine.crp.customization.layout import minplus_layout
    lay = minplus_layout(overlay, 1)
    with pytest.raises(ValueError, match="subcell outside"):
        cr.slice_minplus(lay, overlay.levels[1], overlay.levels[0], 0, 40, 0, 10)


# ------------------------------------------------------------------ devices
def test_parse_devices():
    assert parse_devices("", 2) is None and parse_devices(None, 0) is None
    assert parse_devices("0,1", 2) == (0, 1) and parse_devices(" 1 , 0", 2) == (1, 0)
    with pytest.raises(ValueError, match="no CUDA device 3; this machine has 2 .ids 0-1."):
        parse_devices("0,3", 2)
    with pytest.raises(ValueError, match="named twice"):
        parse_devices("1,1", 2)
    with pytest.raises(ValueError, match="'x' is not a CUDA device id"):
        parse_devices("0,x", 2)
    with pytest.raises(ValueError, match="'-1' is not"):
        parse_devices("-1", 2)
    with pytest.raises(ValueError, match="has no CUDA device"):
        parse_devices("0", 0)


def test_devices_on_the_cpu_are_refused(overlay):
    from engine.capabilities.customize import use_devices
    from engine.workspace import Workspace
    ws = Workspace(overlay.graph, cpu_backend())
    with pytest.raises(ValueError, match="--devices 0,1: this run customizes on the CPU"):
        use_devices(ws, "0,1")
    with pytest.raises(ValueError, match="uses the CPU"):
        ws.use_devices((0,))
    use_devices(ws, "")                               # the default: nothing to refuse
    assert ws.gpu_devices is None and ws._device_backends() == [ws.backend]
    with pytest.raises(ValueError, match="needs GPU backends"):
        Customizer(overlay, devices=[cpu_backend(), cpu_backend()])


def test_customize_capability_has_a_devices_flag():
    from engine.capabilities import get
    p = get("customize").param("devices")
    assert p.cli_flag == "--devices" and p.default == "" and p.type is str


# ------------------------------------------------------------------ the flow, on the host
class _HostGpu:
    """A stand-in "GPU" on NumPy for the multi-GPU flow (issue, gather, records, copies
    to the host, overflow): every device call the flow makes, done at once on the host."""

    def __new__(cls, device_id):
        from dataclasses import dataclass

        from engine.core.backend import Backend

        @dataclass(frozen=True)
        class HostGpu(Backend):
            def active(self):
                from contextlib import nullcontext
                return nullcontext()

            def mark(self):
                return 0.0

            def elapsed_ms(self, start, end):
                return 0.0

            def synchronize(self):
                pass

            def wait(self, event):
                pass

            def copy_into(self, dst, src):
                assert dst.shape == src.shape and dst.dtype == src.dtype
                dst[...] = src

            def to_host_async(self, a, out):
                assert out.shape == a.shape
                out[...] = a

            def host_empty(self, shape, dtype, huge=False):
                assert huge                                     # the matrices: 2 MB pages
                return np.full(shape, -7, dtype=dtype)          # unwritten entries show

        return HostGpu("gpu", np, f"host {device_id}", 0, device_id)


class _TwinLevel:
    """A level variant that runs the CPU twins on its (sliced) topology: microcode for
    level 0, the Dijkstra above; stats as the kernels set them."""
    name, needs_edges = "twin", False

    def __init__(self, backend, topo, reverse, options, overlay=None):
        self.topo, self.microcode = topo, options.get("microcode")
        if topo.level == 0 and self.microcode is None:
            self.microcode = compile_microcode(overlay, 0)

    def map_costs(self, weights):
        self.weights = weights

    def search(self, S, stats_row):
        t = self.topo
        if t.level == 0:
            from engine.crp.customization.cell_metric import CostOverflow
            try:
                S[...], flag = run_microcode_cpu(self.microcode, self.weights), False
            except CostOverflow:            # the levels above still read a valid S
                S[...], flag = 2**31 - 1, True
        else:
            flag = customize_cells(t.vertex_first, t.entry_first, t.exit_first, t.edge_first,
                                   t.edge_to, t.edge_weight, self.weights, t.clique_first, S)
        stats_row[0] |= int(flag)
        stats_row[1] = t.level + 1
        return {}

    def collect(self, S):
        pass


@pytest.fixture
def twins():
    from engine.crp.customization import gpu
    gpu.register_variant("twin", _TwinLevel)
    yield lambda topo: "twin"
    gpu.VARIANTS.pop("twin")


@pytest.mark.parametrize("parts, split", [(2, None), (2, 0), (2, 1), (3, 2), (3, 0)])
def test_multi_gpu_flow_gathers_and_copies_every_part(overlay, reference, twins, parts, split):
    """The multi-GPU flow on host stand-ins: each part's levels, the gather of the split
    level on the main device, the levels above, and every part copied into the host
    array at its offsets give exactly the whole customization; records per level."""
    tw, ref = reference
    devices = [_HostGpu(d % 2) for d in range(parts)]
    c = Customizer(overlay, None, twins, devices=devices, split_level=split)
    seen = []
    metric = c.customize_costs(overlay.graph.metric(None), tw, on_level=seen.append)
    assert [r["level"] for r in seen] == list(range(overlay.num_levels))
    for level, (a, b) in enumerate(zip(ref.shortcuts, metric.shortcuts)):
        assert np.array_equal(a, b), level
    assert np.array_equal(metric.flat_shortcuts, np.concatenate(ref.shortcuts))
    s = c.gpu.split_level
    assert all(r["gpus"] == parts and len(r["gpu_ms"]) == parts for r in seen[:s + 1])
    assert all(max(r["gpu_ms"]) == pytest.approx(sum(r["ms"].values())) for r in seen[:s + 1])
    assert all("gpus" not in r for r in seen[s + 1:])
    assert all(r["cells"] == t.num_cells and r["shortcuts"] == t.num_shortcuts
               for r, t in zip(seen, overlay.levels))
    if s + 1 < overlay.num_levels:
        assert "gather" in seen[s + 1]["ms"]
    assert c.device_shortcuts is None and c.gpu.variants == ["twin"] * overlay.num_levels


@pytest.mark.parametrize("split", [0, 1, 2])
def test_multi_gpu_flow_raises_overflow_at_the_lowest_level(overlay, twins, split):
    from engine.crp.customization.cell_metric import CostOverflow
    from engine.crp.metric import FORBIDDEN
    arcs = overlay.graph.metric(None)
    one = Customizer(overlay, _HostGpu(0), twins)
    several = Customizer(overlay, None, twins, devices=[_HostGpu(0), _HostGpu(1)],
                         split_level=split)
    top = customize_costs(overlay, arcs, random_turn_weights(overlay)).shortcuts[-2]
    for scale in (2_000_000, int(1.2 * 2**31 / top[top < FORBIDDEN].max())):
        tw = random_turn_weights(overlay, scale=scale)
        with pytest.raises(CostOverflow) as a:
            one.customize_costs(arcs, tw)
        with pytest.raises(CostOverflow) as b:
            several.customize_costs(arcs, tw)
        assert str(a.value) == str(b.value)
    with pytest.raises(ValueError, match="3 turn-weight arrays for 2 GPUs"):
        several.gpu.run([tw, tw, tw])


def test_customizers_share_one_compiled_microcode(overlay, reference, twins, monkeypatch):
    """A microcode compiled once serves several customizers (the scaling benchmark's
    1, 2, 4 GPUs at 24 M nodes): none compiles it again, and each result is exact."""
    from engine.crp.customization import customize as customize_module
    tw, ref = reference
    shared = compile_microcode(overlay, 0)
    monkeypatch.setattr(customize_module, "compile_microcode",
                        lambda *a: pytest.fail("compiled the microcode again"))
    space = Customizer(overlay).query_space
    cpu = Customizer(overlay, microcode=shared, query_space=space)
    assert cpu.microcode is shared and cpu.query_space is space
    split = Customizer(overlay, None, twins, devices=[_HostGpu(0), _HostGpu(1)], microcode=shared)
    for c in (cpu, split):
        metric = c.customize_costs(overlay.graph.metric(None), tw)
        assert all(np.array_equal(a, b) for a, b in zip(ref.shortcuts, metric.shortcuts))
