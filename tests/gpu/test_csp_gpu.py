"""Cost-budgeted paths on the GPU (engine.csp.labeling.gpu, bounds_gpu): exact against
brute force and the independent reference, equal to the CPU twin, the edge cases, the
label-memory error, and the AR(6) / K_t twin (run on the device)."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.backend import cpu_backend
from engine.csp import CspQuery, LabelMemoryExceeded, NoPathWithinBudget
from engine.csp.labeling.parallelism import ar_forecast, next_k
from engine.csp.query_sets import build_query_sets, internal_queries
from engine.csp.reference import path_totals, reference_csp, reference_csp_compiled
from engine.generate.network import generate_road_network
from engine.core.paths import Unreachable
from tests.engine.test_csp import brute_force_cases, check_edge_cases, pareto_of
from tests.engine.test_csp_hierarchy import hierarchy_of
from tests.strategies import random_two_metric_graph


def check_answer(g, r, s, t, budget, expected_length, minimize="distance", metric="travel_time"):
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (minimize, metric))
    assert r.length == expected_length, (s, t, budget, r.answered_by)
    assert r.cost <= budget
    assert path_totals(g.first_out, g.head, L, C, s, t, r.path.arcs) == (r.length, r.cost)


@pytest.mark.parametrize("seed", range(40))
def test_small_graphs_equal_brute_force(gpu, seed):
    g = random_two_metric_graph(seed)
    variants = [CspQuery(g, backend=gpu), CspQuery(g, bounds=False, backend=gpu),
                CspQuery(g, backend=gpu, blocks=2, threads=64),
                CspQuery(g, backend=gpu, lagrangian="always"),
                CspQuery(g, backend=gpu, lagrangian_after=1)]
    for s, t, budget, within in brute_force_cases(g, variants[0], seed):
        for q in variants:
            check_answer(g, q.solve(s, t, budget), s, t, budget, min(l for l, _ in within))
        front = pareto_of(within)
        for q in variants[:2]:
            p = q.solve(s, t, budget, pareto=True)
            assert [(x.length, x.cost) for x in p.pareto] == front
            for x in p.pareto:
                assert path_totals(g.first_out, g.head, g.metrics["distance"],
                                   g.metrics["travel_time"], s, t, x.arcs) == (x.length, x.cost)


def _sets_equal(g, minimize, metric, sets, gpu, reference, with_cpu=True, per_set=None,
                extra=True):
    on_gpu = CspQuery(g, minimize, metric, backend=gpu)
    vine = CspQuery(g, minimize, metric, bounds=False, backend=gpu, max_labels=3_000_000)
    cpu = CspQuery(g, minimize, metric, backend=cpu_backend())
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (minimize, metric))
    checked = 0
    for name in ("Q1", "Q2", "Q3"):
        for s, t, budget in internal_queries(g, sets, name)[:per_set]:
            expected = reference(g.first_out, g.head, L, C, s, t, budget)
            assert expected is not None
            r = on_gpu.solve(s, t, budget)
            check_answer(g, r, s, t, budget, expected[0], minimize, metric)
            assert r.backend == "gpu" and r.ms["total"] > 0
            if with_cpu:
                assert cpu.solve(s, t, budget).length == r.length
            if not extra:
                checked += 1
                continue
            try:
                check_answer(g, vine.solve(s, t, budget), s, t, budget, expected[0], minimize, metric)
            except LabelMemoryExceeded:
                pass
            p = on_gpu.solve(s, t, budget, pareto=True)
            assert p.pareto[0].length == expected[0]
            assert all(x.cost <= budget for x in p.pareto)
            assert all(a.length < b.length and a.cost > b.cost for a, b in zip(p.pareto, p.pareto[1:]))
            checked += 1
    return checked


def test_rome99_query_sets(rome_csp, gpu):
    g, length, sets = rome_csp
    assert _sets_equal(g, length, "synthetic", sets, gpu, reference_csp) == 60


def test_rome99_pareto_sets_repeated(rome_csp, gpu):
    """The list chunks are reused from query to query; Pareto mode reads the target's
    list without its lock, so a chunk linked before its slots were cleared once let an
    earlier query's label prune the optimum (about 1 in 1,000 Pareto sets on Rome99).
    Ten rounds of the 60 queries, each Pareto set's first point against the reference."""
    g, length, sets = rome_csp
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (length, "synthetic"))
    queries = [q for name in ("Q1", "Q2", "Q3") for q in internal_queries(g, sets, name)]
    expected = {q: reference_csp_compiled(g.first_out, g.head, L, C, *q)[0] for q in queries}
    on_gpu = CspQuery(g, length, "synthetic", backend=gpu)
    wrong = [q for _ in range(10) for q in queries
             if on_gpu.solve(*q, pareto=True).pareto[0].length != expected[q]]
    assert wrong == []


def test_passes_larger_than_the_grid(rome_csp, gpu):
    """A pass deals its near labels over every warp of the grid, at most 32 to a warp:
    with one block of two warps a pass of more than 64 labels takes several rounds (one
    that expands more than 5 x 64 labels, with runs of at most 5 hops, surely does).
    Rome99's sets, the answer and the Pareto set's first point against the reference."""
    g, length, sets = rome_csp
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (length, "synthetic"))
    tiny = CspQuery(g, length, "synthetic", backend=gpu, blocks=1, threads=64, chain=4)
    several_rounds = 0
    for name in ("Q1", "Q2", "Q3"):
        for s, t, budget in internal_queries(g, sets, name):
            expected = reference_csp_compiled(g.first_out, g.head, L, C, s, t, budget)[0]
            r = tiny.solve(s, t, budget)
            check_answer(g, r, s, t, budget, expected, length, "synthetic")
            p = tiny.solve(s, t, budget, pareto=True)
            assert p.pareto[0].length == expected
            for run in (r, p):
                if run.history is not None and len(run.history):
                    expanded = run.history[:, run.history_columns.index("expanded")]
                    several_rounds += int((expanded > 5 * 64).any())
    assert several_rounds > 0


def test_generated_50k_query_sets(gpu):
    g = generate_road_network(50_000, seed=3)
    sets = build_query_sets(g, "distance", "travel_time", seed=2)
    assert _sets_equal(g, "distance", "travel_time", sets, gpu, reference_csp_compiled,
                       extra=False) == 60


def test_new_york_query_sets(ny, ny_queries, gpu):
    """NY Q1-Q3 (20 each): GPU and CPU twin against the answers the reference's compiled
    twin gave when tests/data/csp_ny_queries.json was written (scripts/csp_queries.py
    --reference --compiled --reference-sets Q1,Q2,Q3; the plain search takes minutes on
    NY Q3, so it runs there, not here)."""
    stored = ny_queries
    on_gpu, cpu = CspQuery(ny, backend=gpu), CspQuery(ny, backend=cpu_backend())
    always = [CspQuery(ny, backend=b, lagrangian="always") for b in (gpu, cpu_backend())]
    checked = 0
    for name in ("Q1", "Q2", "Q3"):
        for item, (s, t, budget) in zip(stored["sets"][name], internal_queries(ny, stored, name)):
            expected = item["reference"]["length"]
            check_answer(ny, on_gpu.solve(s, t, budget), s, t, budget, expected)
            check_answer(ny, always[0].solve(s, t, budget), s, t, budget, expected)
            assert cpu.solve(s, t, budget).length == expected
            assert always[1].solve(s, t, budget).length == expected
            checked += 1
    assert checked == 60


def test_edge_cases(gpu):
    g = generate_road_network(6_000, seed=4)
    check_edge_cases(g, CspQuery(g, backend=gpu))
    cut = CspQuery(random_two_metric_graph(3, n=12, m=8), backend=gpu)    # few arcs: unreachable pairs
    unreachable = 0
    for t in range(12):
        try:
            cut.solve(0, t, 100)
        except NoPathWithinBudget:
            pass
        except Unreachable as e:
            unreachable += 1
            assert "cannot be reached" in str(e)
    assert unreachable > 0


def test_zero_cost_and_zero_length_arcs(gpu):
    """Zero-weight arcs may close tight cycles in the bound trees: completions there are
    skipped, the answers stay exact."""
    for seed in range(10):
        g = random_two_metric_graph(100 + seed, n=40, m=160, zero=0.5)
        q, cpu = CspQuery(g, backend=gpu), CspQuery(g, backend=cpu_backend())
        for s, t in np.random.default_rng(seed).integers(0, 40, (10, 2)):
            for budget in (0, 5, 20, 60):
                try:
                    expected = cpu.solve(int(s), int(t), budget)
                except Unreachable as e:
                    with pytest.raises(type(e)):
                        q.solve(int(s), int(t), budget)
                    continue
                check_answer(g, q.solve(int(s), int(t), budget), int(s), int(t), budget,
                             expected.length)


def test_label_memory_is_an_error(gpu):
    g = generate_road_network(20_000, seed=4)
    tiny = CspQuery(g, bounds=False, backend=gpu, max_labels=1024)
    top = CspQuery(g, backend=gpu)
    for s, t, budget in _middle_budget_queries(g, gpu, 5, 40):
        try:
            tiny.solve(s, t, budget)
        except LabelMemoryExceeded as e:
            assert "more than 1,024 labels" in str(e)
            assert top.solve(s, t, budget).cost <= budget   # still usable
            return
    pytest.fail("no query exceeded 1,024 labels")


def _middle_budget_queries(g, gpu, seed, count):
    """(s, t, budget) with the budget halfway between the least cost and the shortest
    path's cost: queries the labeling has to answer."""
    top = CspQuery(g, backend=gpu)
    rng, found = np.random.default_rng(seed), []
    for s, t in rng.integers(0, g.num_nodes, (20 * count, 2)):
        try:
            r = top.solve(int(s), int(t), 10**12)
        except Unreachable:
            continue
        if r.shortest_cost > r.least_cost and r.shortest_length > 0:
            found.append((int(s), int(t), (r.least_cost + r.shortest_cost) // 2))
        if len(found) == count:
            break
    return found


@pytest.fixture
def label_gpu(monkeypatch):
    """engine.csp.labeling.gpu with room for 1,024 labels at the start of a query
    (START_LABELS), so that middle-budget queries on 20,000 nodes must grow it."""
    from engine.csp.labeling import gpu as label_gpu
    monkeypatch.setattr(label_gpu, "START_LABELS", 1024)
    return label_gpu


def test_label_memory_grows_for_a_query_that_needs_more(gpu, label_gpu):
    g = generate_road_network(20_000, seed=4)
    small = CspQuery(g, bounds=False, backend=gpu)          # starts with room for 1,024
    cpu = CspQuery(g, bounds=False, backend=cpu_backend())
    grown = 0
    for s, t, budget in _middle_budget_queries(g, gpu, 5, 12):
        r = small.solve(s, t, budget)
        assert r.length == cpu.solve(s, t, budget).length and r.cost <= budget
        grown += r.stats.get("reruns_with_more_memory", 0) > 0
        assert small.gpu.labeling.capacity == 1024          # given back after the query
    assert grown, "no query needed more than 1,024 labels"


def test_a_pareto_set_grows_only_up_to_a_limit_given(gpu, label_gpu):
    g = generate_road_network(20_000, seed=4)
    q = CspQuery(g, bounds=False, backend=gpu)
    given = CspQuery(g, bounds=False, backend=gpu, max_labels=10**7)
    cpu = CspQuery(g, bounds=False, backend=cpu_backend())
    for s, t, budget in _middle_budget_queries(g, gpu, 5, 12):
        try:
            q.solve(s, t, budget, pareto=True)
        except LabelMemoryExceeded as e:
            assert "more than 1,024 labels, no Pareto set is given" in str(e)
            points = [(p.length, p.cost) for p in given.solve(s, t, budget, pareto=True).pareto]
            assert points == [(p.length, p.cost) for p in cpu.solve(s, t, budget, pareto=True).pareto]
            return
    pytest.fail("no Pareto set needed more than 1,024 labels")


def test_a_cancelled_job_does_not_run_again_with_more_memory(gpu, label_gpu):
    from engine.core.progress import Cancelled, CancelToken
    g = generate_road_network(20_000, seed=4)
    q = CspQuery(g, bounds=False, backend=gpu)
    token = CancelToken()
    token.cancel()
    for s, t, budget in _middle_budget_queries(g, gpu, 5, 12):
        try:
            r = q.solve(s, t, budget, cancel=token)     # answered within 1,024 labels
        except Cancelled:
            assert q.gpu.labeling.capacity == 1024
            assert q.solve(s, t, budget).stats["reruns_with_more_memory"] >= 1   # usable
            return
        assert "reruns_with_more_memory" not in r.stats
    pytest.fail("no query needed more than 1,024 labels")


def test_no_device_memory_to_grow_is_a_clear_error(gpu, label_gpu, monkeypatch):
    allocate = label_gpu.GpuLabeling._allocate

    def out_of_memory_above_1024(self, wanted):
        if wanted > 1024:
            raise MemoryError("out of memory (simulated)")   # cupy's OutOfMemoryError is one
        return allocate(self, wanted)

    g = generate_road_network(20_000, seed=4)
    q = CspQuery(g, bounds=False, backend=gpu)
    queries = _middle_budget_queries(g, gpu, 5, 12)
    monkeypatch.setattr(label_gpu.GpuLabeling, "_allocate", out_of_memory_above_1024)
    failed = None
    for s, t, budget in queries:
        try:
            q.solve(s, t, budget)
        except LabelMemoryExceeded as e:
            assert "more than 1,024 labels, as many as the GPU's free memory holds" in str(e)
            failed = (s, t, budget)
            break
    assert failed, "no query needed more than 1,024 labels"
    monkeypatch.setattr(label_gpu.GpuLabeling, "_allocate", allocate)
    s, t, budget = failed                                   # still usable, and now it grows
    expected = CspQuery(g, bounds=False, backend=cpu_backend()).solve(s, t, budget)
    assert q.solve(s, t, budget).length == expected.length


def test_history_and_stats(gpu):
    g = generate_road_network(20_000, seed=6)
    q = CspQuery(g, backend=gpu)
    sets = build_query_sets(g, "distance", "travel_time", seed=1, per_set=3)
    for s, t, budget in internal_queries(g, sets, "Q3"):
        r = q.solve(s, t, budget)
        if r.answered_by.startswith("labeling"):
            h = r.history
            assert h.shape[1] == len(r.history_columns) and h.shape[0] == r.stats["iterations"]
            col = {name: i for i, name in enumerate(r.history_columns)}
            assert h[:, col["expanded"]].sum() == r.stats["settled"]
            assert h[:, col["created"]].sum() == r.stats["created"]
            assert (h[:, col["k_t"]] >= 64).all()
            return
    pytest.skip("no Q3 query needed labeling")


def test_parallelism_twin(gpu):
    xp = gpu.xp
    rng = np.random.default_rng(0)
    for t in (3, 12, 20, 64):
        x = np.abs(np.cumsum(rng.normal(0, 0.3, t))) + 1.0
        params = np.array([2.5, 0.1, 5000, 10_000_000, 300.0, 64, 65536], np.float64)
        out = xp.zeros(2, np.float64)
        gpu.launch("csp", "csp_parallelism_check", (xp.asarray(x), np.int32(t), xp.asarray(params),
                                                    out), grid=1, block=1)
        got = out.get()
        assert got[0] == pytest.approx(ar_forecast(x), rel=1e-9, abs=1e-12)
        assert int(got[1]) == next_k(*params[:2], int(params[2]), int(params[3]), params[4],
                                     int(params[5]), int(params[6]))


def test_lagrangian_search_equals_the_cpu(gpu):
    """LARAC's search under one multiplier: the GPU's near-far distances equal the CPU's
    reverse Dijkstra wherever the CPU settled (within its radius), and both tight source
    paths have the combined weight of the source's distance."""
    from engine.csp.bounds.lagrangian import cpu_search
    g = generate_road_network(20_000, seed=6)
    q = CspQuery(g, backend=gpu)
    rng = np.random.default_rng(3)
    for (s, t), (p, k) in zip(rng.integers(0, g.num_nodes, (4, 2)), [(1, 1), (3, 7), (0, 1), (5, 2)]):
        s, t = int(s), int(t)
        search = q.gpu.lagrange.search(s, t)
        try:
            d, d_s, length, cost = search(p, k, 0)
        except Exception:  # noqa: BLE001 (unreachable: INF at the source)
            continue
        d = gpu.to_host(d)
        cd, cd_s, c_length, c_cost = cpu_search(q.reverse, g.head, q.cost, s, t)(p, k, 2 * d_s)
        settled = cd != np.iinfo(np.int64).max
        assert settled.sum() > 100 and np.array_equal(cd[settled], d[settled])
        assert cd_s == d_s == k * length + p * cost == k * c_length + p * c_cost


def test_a_hard_query_starts_over_with_the_bound(gpu):
    """Past ``lagrangian_after`` labels the GPU query starts again with the Lagrangian
    bound: the CPU's answer, counts and history of both runs, the first run's labels."""
    g = generate_road_network(20_000, seed=5)
    never = CspQuery(g, backend=gpu, lagrangian="never")
    cpu = CspQuery(g, backend=cpu_backend())
    sets = build_query_sets(g, "distance", "travel_time", seed=4, per_set=6)
    hard = max(internal_queries(g, sets, "Q3"), key=lambda x: never.solve(*x).stats["created"])
    plain = never.solve(*hard)
    limit = plain.stats["created"] // 4
    r = CspQuery(g, backend=gpu, lagrangian_after=limit).solve(*hard)
    assert r.length == plain.length == cpu.solve(*hard).length
    assert r.lagrangian is not None     # the source's label is not counted as created:
    assert limit - 1 <= r.lagrangian["labels_before_restart"] <= limit
    assert r.lagrangian["lower"] <= r.length <= r.lagrangian["upper"]
    col = {name: i for i, name in enumerate(r.history_columns)}
    assert r.history.shape[0] == r.stats["iterations"]
    assert r.history[:, col["created"]].sum() == r.stats["created"] > limit
    assert (np.diff(r.history[:, col["iteration"]]) == 1).all()



# ------------------------------------------------ on the bi-criteria hierarchy
@pytest.mark.parametrize("seed", range(40))
def test_small_graphs_on_the_hierarchy_equal_brute_force(gpu, seed):
    g = random_two_metric_graph(seed)
    h = hierarchy_of(g, core_fraction=0.0)
    variants = [CspQuery(g, backend=gpu, hierarchy=h),
                CspQuery(g, backend=gpu, hierarchy=h, lagrangian="always")]
    for s, t, budget, within in brute_force_cases(g, variants[0], seed):
        for q in variants:
            check_answer(g, q.solve(s, t, budget), s, t, budget, min(l for l, _ in within))
        p = variants[0].solve(s, t, budget, pareto=True)
        assert [(x.length, x.cost) for x in p.pareto] == pareto_of(within)
        for x in p.pareto:
            assert path_totals(g.first_out, g.head, g.metrics["distance"],
                               g.metrics["travel_time"], s, t, x.arcs) == (x.length, x.cost)


def test_rome99_and_50k_on_the_hierarchy(rome_csp, gpu):
    g, length, sets = rome_csp
    L, C = (np.asarray(g.metrics[m], np.int64) for m in (length, "synthetic"))
    q = CspQuery(g, length, "synthetic", backend=gpu,
                 hierarchy=hierarchy_of(g, length, "synthetic"))
    for name in ("Q1", "Q2", "Q3"):
        for s, t, budget in internal_queries(g, sets, name):
            expected = reference_csp_compiled(g.first_out, g.head, L, C, s, t, budget)[0]
            check_answer(g, q.solve(s, t, budget), s, t, budget, expected, length, "synthetic")
            assert q.solve(s, t, budget, pareto=True).pareto[0].length == expected
            with pytest.raises(NoPathWithinBudget):
                q.solve(s, t, q.solve(s, t, 10**12).least_cost - 1)
    assert int(q.gpu.down_mask.sum()) == 0          # each query clears its target's marks
    g = generate_road_network(50_000, seed=3)
    sets = build_query_sets(g, "distance", "travel_time", seed=2)
    L, C = (np.asarray(g.metrics[m], np.int64) for m in ("distance", "travel_time"))
    h = hierarchy_of(g)
    on_gpu, cpu = CspQuery(g, backend=gpu, hierarchy=h), CspQuery(g, backend=cpu_backend(),
                                                                  hierarchy=h)
    for name in ("Q1", "Q2", "Q3"):
        for s, t, budget in internal_queries(g, sets, name):
            expected = reference_csp_compiled(g.first_out, g.head, L, C, s, t, budget)[0]
            check_answer(g, on_gpu.solve(s, t, budget), s, t, budget, expected)
            assert cpu.solve(s, t, budget).length == expected


def test_new_york_query_sets_on_the_hierarchy(ny, ny_queries, gpu):
    """NY Q1-Q3 on the hierarchy, GPU and CPU twin, against the stored reference; the
    Pareto sets of Q1 equal those on the graph itself."""
    stored = ny_queries
    h = hierarchy_of(ny)
    on_gpu, cpu = (CspQuery(ny, backend=b, hierarchy=h) for b in (gpu, cpu_backend()))
    plain = CspQuery(ny, backend=gpu)
    for name in ("Q1", "Q2", "Q3"):
        for item, (s, t, budget) in zip(stored["sets"][name], internal_queries(ny, stored, name)):
            expected = item["reference"]["length"]
            check_answer(ny, on_gpu.solve(s, t, budget), s, t, budget, expected)
            assert cpu.solve(s, t, budget).length == expected
            if name == "Q1":
                a = on_gpu.solve(s, t, budget, pareto=True)
                b = plain.solve(s, t, budget, pareto=True)
                assert [(x.length, x.cost) for x in a.pareto] == \
                    [(x.length, x.cost) for x in b.pareto]
