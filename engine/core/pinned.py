"""Page-locked host buffers on 2 MB pages, reused once free (issue #37).

The GPU customization's matrices come back to the host for the CPU query, whose A*
reads them a row at a time all over a gigabyte (24 M nodes). CuPy's pinned pool gives
4 KB pages, so nearly every row is a TLB miss. Memory from engine.core.arrays'
``huge_buffer``, registered with the driver (cudaHostRegister), is pinned too, so the
copy is still one DMA, and the rows sit on 2 MB pages (24 M nodes, 600 pairs, H200
host: query median 8.39-8.86 ms against 9.20-9.34 ms, the A* 4.19-5.08 against
5.11-5.39 ms).

A buffer is lent as one array; every view of it (np.split, reshape) keeps that array
alive, so the buffer is lent again only after all of them are gone. Buffers are never
given back to the system, as CuPy's pinned pool keeps its memory.
"""
from __future__ import annotations

import weakref

import numpy as np

from engine.core.arrays import huge_buffer


PORTABLE = 1                  # cudaHostRegisterPortable
_POOLS: list[HugePinnedPool] = []


def shared_pool(runtime) -> HugePinnedPool:
    """The process's pool. ``runtime``: CuPy's CUDA runtime module, whose hostRegister
    pins a buffer for every device (portable: several GPUs copy into one array)."""
    if not _POOLS:
        _POOLS.append(HugePinnedPool(lambda at, n: runtime.hostRegister(at, n, PORTABLE)))
    return _POOLS[0]


class HugePinnedPool:
    def __init__(self, register) -> None:
        """``register(address, nbytes)`` pins a buffer for the device's copies."""
        self._register = register
        self._buffers: list[_Buffer] = []

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised array of ``shape`` in a free registered buffer (a new one
        when none is free and large enough)."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        free = [b for b in self._buffers if b.size >= nbytes and b.free()]
        if free:
            buffer = min(free, key=lambda b: b.size)
        else:
            buffer = _Buffer(nbytes, self._register)
            self._buffers.append(buffer)
        return buffer.lend(nbytes, dtype).reshape(shape)

    @property
    def held_bytes(self) -> int:
        return sum(b.size for b in self._buffers)


class _Buffer:
    def __init__(self, nbytes: int, register) -> None:
        self._map, self._view, address = huge_buffer(nbytes)
        self.size = len(self._view)
        register(address, self.size)
        self._user = None

    def free(self) -> bool:
        return self._user is None or self._user() is None

    def lend(self, nbytes: int, dtype) -> np.ndarray:
        # np.frombuffer over a memoryview: the array's base is no array, so every view
        # made from it names it as base and keeps it alive while in use
        out = np.frombuffer(self._view[:nbytes], dtype=dtype)
        self._user = weakref.ref(out)
        return out
