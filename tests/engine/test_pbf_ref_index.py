"""engine.io.pbf_ref_index.compact_index against np.unique(refs, return_inverse=True),
and its refusal (None) of a ref that is no node of the file."""
import numpy as np
import pytest

from engine.io.pbf_ref_index import compact_index


@pytest.mark.parametrize("seed", range(20))
def test_compact_index_equals_unique(seed):
    rng = np.random.default_rng(seed)
    ids = np.unique(rng.integers(1000, 1000 + int(rng.integers(1, 400)), 300)).astype(np.int64)
    refs = rng.choice(ids, int(rng.integers(1, 2000)))
    xs, ys = rng.integers(-10**9, 10**9, (2, ids.size)).astype(np.int32)
    unique_ids, ref_u, xy = compact_index(refs, ids, xs, ys)
    want_ids, want_u = np.unique(refs, return_inverse=True)
    assert np.array_equal(unique_ids, want_ids) and np.array_equal(ref_u, want_u.reshape(-1))
    assert ref_u.dtype == np.int32
    at = np.searchsorted(ids, unique_ids)
    assert np.array_equal(xy, np.stack([xs[at], ys[at]], axis=1))


def test_a_ref_to_no_node_gives_none():
    ids = np.array([10, 11, 13], np.int64)
    xs = ys = np.zeros(3, np.int32)
    assert compact_index(np.array([10, 12]), ids, xs, ys) is None   # a gap in the ids
    assert compact_index(np.array([10, 14]), ids, xs, ys) is None   # past the last id
    assert compact_index(np.array([9, 10]), ids, xs, ys) is None    # before the first
