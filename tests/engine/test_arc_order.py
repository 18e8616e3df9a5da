"""engine.core.arc_order against the NumPy forms it replaced in RoadGraph.from_arcs
(stable argsort by tail, fancy-index gathers), on random arc lists with self loops,
repeated tails and empty nodes, and on arcs already in order (no copy)."""
import numpy as np
import pytest

from engine.core import arc_order
from engine.core.graph import GraphError, RoadGraph


def _reference_order(tail, head):
    order = np.flatnonzero(tail != head)
    return order[np.argsort(tail[order], kind="stable")]


@pytest.mark.parametrize("seed", range(6))
def test_counting_order_equals_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 400))
    tail = rng.integers(0, n, m).astype(np.int32 if seed % 2 else np.int64)
    head = rng.integers(0, n, m).astype(tail.dtype)
    order, first = arc_order.tail_order(tail, head, n)
    want = _reference_order(tail, head)
    got = np.arange(m) if order is None else order
    assert np.array_equal(got, want)
    assert first.dtype == np.int32
    assert np.array_equal(first, np.r_[0, np.cumsum(np.bincount(tail[want], minlength=n))])


def test_sorted_arcs_need_no_order_and_no_copy():
    tail = np.array([0, 0, 1, 3, 3], np.int32)
    head = np.array([1, 2, 0, 1, 2], np.int32)
    order, first = arc_order.tail_order(tail, head, 5)
    assert order is None and first.tolist() == [0, 2, 3, 3, 5, 5]
    assert arc_order.gather(head, None, np.int32) is head
    loop = head.copy()
    loop[2] = 1   # a self loop: an order is needed to drop it
    assert arc_order.tail_order(tail, loop, 5)[0].tolist() == [0, 1, 3, 4]


def test_gathers_equal_numpy():
    rng = np.random.default_rng(7)
    order = rng.permutation(50)[:40]
    for dtype in (np.int8, np.int32, np.int64, np.float32, np.float64, np.bool_):
        values = rng.integers(0, 100, 50).astype(dtype)
        assert np.array_equal(arc_order.gather(values, order), values[order])
    lengths = rng.integers(0, 4, 50)
    first = np.r_[0, np.cumsum(lengths)]
    pts = rng.random((first[-1], 2))
    new_first, new_pts = arc_order.gather_ragged(first, pts, order)
    want = np.concatenate([pts[first[i]:first[i + 1]] for i in order])
    assert np.array_equal(new_first, np.r_[0, np.cumsum(lengths[order])])
    assert np.array_equal(new_pts, want)


def test_from_arcs_renumbers_restrictions_and_checks_ids():
    tail = np.array([2, 0, 1, 1, 0])
    head = np.array([0, 1, 2, 1, 2])   # arc 3 is a self loop
    g = RoadGraph.from_arcs(3, tail, head, {"w": np.arange(5)},
                            banned_turns=([1, 1, 3], [2, 3, 0]))
    assert g.head.tolist() == [1, 2, 2, 0] and g.metric("w").tolist() == [1, 4, 2, 0]
    assert list(zip(g.turn_restrictions.from_arc, g.turn_restrictions.to_arc)) == [(0, 2)]
    with pytest.raises(GraphError, match="do not meet"):
        RoadGraph.from_arcs(3, tail, head, {"w": np.arange(5)}, banned_turns=([1], [0]))
    with pytest.raises(GraphError, match="not unique"):
        RoadGraph.from_arcs(3, tail, head, {"w": np.arange(5)}, node_id=[5, 9, 5])


@pytest.mark.parametrize("seed", range(4))
def test_small_graphs_get_the_same_graph_from_numpy(seed, monkeypatch):
    """Below SMALL_ARCS arcs from_arcs orders them in NumPy (no Numba import): the same
    graph, arc for arc, as the Numba path gives."""
    from engine.core import arc_order_small
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 50)), int(rng.integers(1, 300))
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    if seed == 0:                                   # already in order: no copy either way
        keep = tail != head
        tail, head = np.sort(tail[keep]), head[keep]
        m = tail.size
    lengths = rng.integers(0, 3, m)
    kwargs = dict(arc_attrs={"x": rng.random(m)}, geometry_first=np.r_[0, np.cumsum(lengths)],
                  geometry_lonlat=rng.random((int(lengths.sum()), 2)),
                  node_id=rng.permutation(10 * n)[:n])
    small = RoadGraph.from_arcs(n, tail, head, {"w": np.arange(m)}, **kwargs)
    monkeypatch.setattr(arc_order_small, "SMALL_ARCS", 0)
    big = RoadGraph.from_arcs(n, tail, head, {"w": np.arange(m)}, **kwargs)
    for name in ("first_out", "head", "node_id", "geometry_first", "geometry_lonlat"):
        assert np.array_equal(getattr(small, name), getattr(big, name)), name
        assert getattr(small, name).dtype == getattr(big, name).dtype, name
    assert np.array_equal(small.metrics["w"], big.metrics["w"])
    assert np.array_equal(small.arc_attrs["x"], big.arc_attrs["x"])


def test_empty_and_non_integer_arc_lists():
    g = RoadGraph.from_arcs(3, np.array([]), np.array([]), {"w": np.zeros(0, np.int64)})
    assert g.num_arcs == 0 and g.first_out.tolist() == [0, 0, 0, 0]
    with pytest.raises(GraphError, match="not integers"):
        RoadGraph.from_arcs(3, np.array([0.0, 1.0]), np.array([1, 2]), {"w": np.ones(2, np.int64)})


@pytest.mark.parametrize("seed", range(4))
def test_keyed_counting_order_equals_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    num_keys = int(rng.integers(1, 50))
    keys = rng.integers(0, num_keys, int(rng.integers(0, 500))).astype(
        np.int32 if seed % 2 else np.int64)
    order, first = arc_order.counting_order(keys, num_keys)
    assert np.array_equal(order, np.argsort(keys, kind="stable"))
    assert np.array_equal(first, np.r_[0, np.cumsum(np.bincount(keys, minlength=num_keys))])


def test_keyed_counting_order_refuses_keys_out_of_range():
    with pytest.raises(ValueError, match="outside 0..2"):
        arc_order.counting_order(np.array([0, 3]), 3)
    with pytest.raises(ValueError):
        arc_order.counting_order(np.array([-1, 0]), 3)
