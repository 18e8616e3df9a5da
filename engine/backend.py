"""The array backend, chosen once per process: NumPy on the CPU or CuPy on a GPU.

``select("auto")`` takes CuPy when it imports and sees a CUDA device, else NumPy.
Algorithms receive a ``Backend`` and use ``backend.xp``; they never test for the GPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

CHOICES = ("auto", "cpu", "gpu")


class BackendError(RuntimeError):
    """The requested backend cannot run on this machine."""


@dataclass(frozen=True)
class Backend:
    name: str                 # "cpu" or "gpu"
    xp: ModuleType            # numpy or cupy
    device_name: str          # e.g. "NVIDIA H100 80GB HBM3" or the CPU description
    device_memory: int = 0    # bytes of device memory, 0 on the CPU

    @property
    def is_gpu(self) -> bool:
        return self.name == "gpu"

    def to_host(self, a) -> np.ndarray:
        return a.get() if hasattr(a, "get") else np.asarray(a)

    def describe(self) -> str:
        if self.is_gpu:
            return f"GPU: {self.device_name} ({self.device_memory / 2**30:.0f} GiB)"
        return f"CPU: {self.device_name}"


_selected: Backend | None = None


def cpu_backend() -> Backend:
    import platform
    import os
    cpu = platform.processor() or platform.machine()
    return Backend("cpu", np, f"{cpu}, {os.cpu_count()} cores (NumPy)")


def gpu_backend() -> Backend:
    """CuPy on device 0; raises BackendError with the reason when it is unavailable."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library that fails to load
        raise BackendError(f"CuPy is not available ({e.__class__.__name__}: {e}); "
                           "install the gpu extra: pip install '.[gpu]'") from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise BackendError("no CUDA device found")
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        total = int(props["totalGlobalMem"])
    except BackendError:
        raise
    except Exception as e:
        raise BackendError(f"no usable CUDA device ({e})") from None
    return Backend("gpu", cupy, name, total)


def select(choice: str = "auto") -> Backend:
    """Choose the process's backend once; later calls must agree or ask for 'auto'."""
    global _selected
    if choice not in CHOICES:
        raise BackendError(f"unknown backend {choice!r}; choose one of {', '.join(CHOICES)}")
    if _selected is not None and choice in ("auto", _selected.name):
        return _selected
    if choice == "cpu":
        backend = cpu_backend()
    elif choice == "gpu":
        backend = gpu_backend()
    else:
        try:
            backend = gpu_backend()
        except BackendError:
            backend = cpu_backend()
    _selected = backend
    return backend


def current() -> Backend:
    return _selected or select("auto")


# ------------------------------------------------------------------ CUDA kernels
_modules: dict[tuple, object] = {}


def kernel_source(name: str) -> str:
    """The text of ``engine/kernels/NAME.cu`` (package data)."""
    from importlib import resources
    return resources.files("engine.kernels").joinpath(f"{name}.cu").read_text()


def load_module(name: str, defines: tuple[str, ...] = (), cooperative: bool = False):
    """Compile ``engine/kernels/NAME.cu`` once per process (and per set of -D defines).

    ``cooperative`` enables grid-wide barriers (cooperative launch). CuPy also caches
    the compiled binary on disk, so a later process only links it.
    """
    key = (name, tuple(defines), cooperative)
    if key not in _modules:
        import cupy
        from importlib import resources
        include = str(resources.files("engine.kernels"))  # for shared *.cuh headers
        options = ("--std=c++17", f"-I{include}") + tuple(f"-D{d}" for d in defines)
        module = cupy.RawModule(code=kernel_source(name), options=options,
                                enable_cooperative_groups=cooperative)
        module.compile()
        _modules[key] = module
    return _modules[key]
