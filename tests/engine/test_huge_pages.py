"""Large arrays on 2 MB pages (engine/core/arrays.py) and the pool of pinned ones the GPU
customization copies its matrices into (engine/core/pinned.py)."""
import gc

import numpy as np

from engine.core.arrays import HUGE_PAGE, huge, huge_zeros
from engine.core.backend import cpu_backend
from engine.core.pinned import HugePinnedPool


def test_huge_zeros_are_zero_aligned_and_writable():
    big = huge_zeros((300, 1000), np.int32)              # 1.2 MB: on 2 MB pages
    assert big.shape == (300, 1000) and big.dtype == np.int32
    assert big.ctypes.data % HUGE_PAGE == 0 and not big.any()
    big[-1, -1] = 7
    assert big.sum() == 7
    small = huge_zeros(10, np.int64)
    assert small.ctypes.data % 64 == 0 and not small.any() and small.size == 10
    assert huge_zeros((4, 0), np.int32).shape == (4, 0)


def test_huge_copies():
    a = np.arange(3 << 18, dtype=np.int64).reshape(-1, 3)
    b = huge(a)
    assert np.array_equal(a, b) and b.ctypes.data % HUGE_PAGE == 0
    b[0, 0] = -1
    assert a[0, 0] == 0


def test_the_pool_registers_each_buffer_once_and_lends_it_again_only_when_free():
    registered = []
    pool = HugePinnedPool(lambda address, n: registered.append((address, n)))
    a = pool.empty(1000, np.int32)
    a[:] = 1
    assert len(registered) == 1 and registered[0][0] == a.ctypes.data
    assert registered[0][0] % HUGE_PAGE == 0 and registered[0][1] >= 4000
    parts = np.split(a, [10, 500])                       # views keep the buffer lent
    del a
    gc.collect()
    b = pool.empty(1000, np.int32)
    assert len(registered) == 2 and b.ctypes.data != parts[0].ctypes.data
    b[:] = 5
    assert all((p == 1).all() for p in parts)
    del parts
    gc.collect()
    c = pool.empty((20, 30), np.int64)                   # the first buffer is free again
    assert len(registered) == 2 and c.shape == (20, 30)
    assert c.ctypes.data == registered[0][0]
    assert pool.held_bytes == 2 * HUGE_PAGE


def test_a_larger_request_gets_a_new_buffer():
    registered = []
    pool = HugePinnedPool(lambda address, n: registered.append(n))
    a = pool.empty(10, np.int8)
    del a
    big = pool.empty(3 * HUGE_PAGE // 2, np.int8)        # 1.5 pages: rounded to 2
    assert registered == [HUGE_PAGE, 2 * HUGE_PAGE] and big.size == 3 * HUGE_PAGE // 2


def test_the_cpu_backend_gives_huge_zeros():
    out = cpu_backend().host_empty((1 << 19,), np.int32, huge=True)
    assert out.ctypes.data % HUGE_PAGE == 0 and not out.any()
