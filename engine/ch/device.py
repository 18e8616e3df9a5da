"""Launching the fused contraction kernels of engine/kernels/ch.cu (GPU backend only).

The NumPy formulation in each step module is the specification; these kernels
compute the same integers without materialising every broken path, which is what
makes a level cost a few launches instead of hundreds of array operations.
"""
from __future__ import annotations

import numpy as np

from engine.backend import load_module

THREADS = 256


def on_gpu(xp) -> bool:
    return xp.__name__ == "cupy"


def launch(name: str, count: int, *args, block: int = THREADS) -> None:
    """Run kernel ``name`` with ``count`` threads in blocks of ``block``; ints go as int64."""
    if count <= 0:
        return
    args = tuple(np.int64(a) if isinstance(a, int) else a for a in args)
    blocks = (count + block - 1) // block
    load_module("ch").get_function(name)((blocks,), (block,), args)


def salt(level_key: int) -> np.uint64:
    """The per-level constant mixed into engine.ch.select.node_hash."""
    return np.uint64((level_key * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)


def host_empty(xp, size: int, dtype) -> np.ndarray:
    """A host array for results copied from the device: on the GPU it comes from
    CuPy's pinned-memory pool, so a later contraction reuses page-locked memory
    (no first-touch page faults, one direct DMA) instead of fresh pages."""
    if on_gpu(xp):
        import cupyx
        return cupyx.empty_pinned(size, dtype=dtype)
    return np.empty(size, dtype=dtype)


def to_host(xp, a) -> np.ndarray:
    """``a`` (contiguous) as a host array, through host_empty on the GPU."""
    if not on_gpu(xp):
        return np.asarray(a)
    out = host_empty(xp, a.shape, a.dtype)
    a.get(out=out)
    return out
