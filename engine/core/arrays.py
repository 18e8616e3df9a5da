"""Buffers for the Numba loops: arrays that grow, large arrays on 2 MB pages, and a
prefetch hint.

``grow`` is how every search and builder keeps an output or a heap of unknown size:
double when full, amortised O(1) per entry. ``huge`` and ``prefetch`` serve the
point-to-point queries, whose time is cache and TLB misses.
"""
from __future__ import annotations

import mmap

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@numba.njit(cache=True)
def grow(x, need):
    """``x``, or a copy at least twice as long (in its first axis) that holds its rows,
    with room for ``need`` rows; the new rows are zero."""
    if need <= x.shape[0]:
        return x
    y = np.zeros((max(need, 2 * x.shape[0]),) + x.shape[1:], dtype=x.dtype)
    y[:x.shape[0]] = x
    return y


@intrinsic
def prefetch(typingctx, arr, i):
    """Ask the caches for the line of arr[i, 0] without waiting for it."""
    def codegen(context, builder, sig, args):
        aty = sig.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        idx = [args[1]] + [context.get_constant(types.intp, 0)] * (aty.ndim - 1)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, idx, wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])   # read, keep
        return context.get_dummy_value()
    return types.void(arr, types.intp), codegen


HUGE_PAGE = 2 << 20


def huge_buffer(nbytes: int) -> tuple[mmap.mmap, memoryview, int]:
    """Fresh private anonymous memory of ``nbytes`` (rounded up to 2 MB) that asks Linux
    for 2 MB pages (where it has them): (the mapping, a 2 MB-aligned writable view of
    it, that view's address). Zero until written, and no page is touched before."""
    size = max(HUGE_PAGE, -(-nbytes // HUGE_PAGE) * HUGE_PAGE)
    # private: Linux gives shared anonymous memory no huge pages
    buf = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        buf.madvise(mmap.MADV_HUGEPAGE)
    except (OSError, AttributeError):    # no transparent huge pages: ordinary pages do
        pass
    address = np.frombuffer(buf, dtype=np.uint8).ctypes.data
    skip = -address % HUGE_PAGE
    return buf, memoryview(buf)[skip:skip + size], address + skip


def huge_zeros(shape, dtype) -> np.ndarray:
    """Zeros on 2 MB pages for a large array (1 MB or more) that a query reads at random:
    those reads then seldom miss the TLB. A small one starts on a 64-byte line."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < 1 << 20:
        raw = np.zeros(nbytes + 64, dtype=np.uint8)
        skip = -raw.ctypes.data % 64
        return raw[skip:skip + nbytes].view(dtype).reshape(shape)
    view = huge_buffer(nbytes)[1]
    return np.frombuffer(view[:nbytes], dtype=dtype).reshape(shape)


def huge(a: np.ndarray) -> np.ndarray:
    """A copy of ``a``, on 2 MB pages where it is large (huge_zeros)."""
    out = huge_zeros(a.shape, a.dtype)
    out[...] = a
    return out
