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


def huge(a: np.ndarray) -> np.ndarray:
    """A copy of a large array in fresh memory that asks Linux for 2 MB pages (where
    it has them): the query's random reads over ~100 MB then seldom miss the TLB.
    Small arrays are just copied, on a 64-byte boundary."""
    page = 2 << 20 if a.nbytes >= 1 << 20 and hasattr(mmap, "MADV_HUGEPAGE") else 64
    if page > 64:         # private: Linux gives shared anonymous memory no huge pages
        buf = mmap.mmap(-1, a.nbytes + page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            buf.madvise(mmap.MADV_HUGEPAGE)
        except OSError:   # a kernel without transparent huge pages: ordinary pages do
            pass
        raw = np.frombuffer(buf, dtype=np.uint8)
    else:
        raw = np.empty(a.nbytes + page, dtype=np.uint8)
    skip = -raw.ctypes.data % page
    out = raw[skip:skip + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out
