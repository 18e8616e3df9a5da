"""engine.io.osm_graph._pieces (ways cut at missing nodes, repeated refs and one-ref
pieces dropped), now two parallel passes over ways, against the serial scan over all
refs it replaced (kept here, in plain Python, as the reference)."""
import numpy as np
import pytest

from engine.io.osm_graph import _pieces


def reference_pieces(lengths, ref_u, missing_u):
    """_way_pieces in two passes over the refs; piece numbers count the pieces begun,
    as a cumulative sum of piece starts would (a start at a missing ref included)."""
    out_ref = np.empty(ref_u.size, np.int32)
    out_way = np.empty(ref_u.size, np.int32)
    out_piece = np.empty(ref_u.size, np.int64)
    n = pos = count = missing = 0
    after_missing = False
    for w in range(lengths.size):
        for j in range(lengths[w]):
            r = ref_u[pos]
            pos += 1
            if j == 0 or after_missing:
                count += 1
            after_missing = missing_u[r]
            if after_missing:
                missing += 1
            elif not (n > 0 and out_piece[n - 1] == count and out_ref[n - 1] == r):
                out_ref[n], out_way[n], out_piece[n] = r, w, count
                n += 1
    kept = 0   # drop the pieces left with one ref
    i = 0
    while i < n:
        e = i + 1
        while e < n and out_piece[e] == out_piece[i]:
            e += 1
        if e - i >= 2:
            for k in range(i, e):
                out_ref[kept], out_way[kept], out_piece[kept] = out_ref[k], out_way[k], out_piece[k]
                kept += 1
        i = e
    return out_ref[:kept].copy(), out_way[:kept].copy(), out_piece[:kept].copy(), missing


@pytest.mark.parametrize("seed", range(200))
def test_pieces_equal_the_serial_scan(seed):
    rng = np.random.default_rng(seed)
    u = int(rng.integers(1, 8))   # few nodes: repeats, consecutive duplicates, loops
    lengths = rng.integers(0, 8, int(rng.integers(0, 30))).astype(np.int64)
    ref_u = rng.integers(0, u, int(lengths.sum())).astype(np.int64)
    missing_u = rng.random(u) < rng.random() * 0.5
    got = _pieces(lengths, ref_u, missing_u)
    want = reference_pieces(lengths, ref_u, missing_u)
    for g, w in zip(got[:3], want[:3]):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    assert got[3] == want[3]
