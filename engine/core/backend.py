"""The device layer: NumPy on the CPU or CuPy on a GPU, chosen once per process.

``select("auto")`` takes CuPy when it imports and sees a CUDA device, else NumPy.
Every algorithm receives a ``Backend``. Array work goes through ``backend.xp``
(numpy or cupy); everything else that touches the device goes through the
Backend too, and no other engine module imports CuPy:

- kernels: ``load_module`` compiles ``engine/kernels/NAME.cu`` once per process;
  ``launch`` is the one way to run a kernel (Python ints go as int64);
- ``synchronize``, ``mark`` / ``elapsed_ms`` (CUDA events on the GPU, perf_counter
  on the CPU), ``capture`` (a batch of launches replayed as one CUDA graph);
- host memory: ``host_empty`` (pinned on the GPU), ``to_host``, ``to_device``.

A step with a fused CUDA kernel and a NumPy/Numba twin asks ``backend.is_gpu``
inside the step's own function (the one question, asked in one way); callers of
the step never do.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from types import ModuleType

import numpy as np

CHOICES = ("auto", "cpu", "gpu")
THREADS = 256          # threads per block of a 1-D launch unless told otherwise


class BackendError(RuntimeError):
    """The requested backend cannot run on this machine."""


@dataclass(frozen=True)
class Backend:
    name: str                 # "cpu" or "gpu"
    xp: ModuleType            # numpy or cupy
    device_name: str          # e.g. "NVIDIA H100 80GB HBM3" or the CPU description
    device_memory: int = 0    # bytes of device memory, 0 on the CPU
    device_id: int = 0        # the CUDA device (several GPUs: one Backend per device)

    @property
    def is_gpu(self) -> bool:
        return self.name == "gpu"

    def describe(self) -> str:
        if self.is_gpu:
            return f"GPU: {self.device_name} ({self.device_memory / 2**30:.0f} GiB)"
        return f"CPU: {self.device_name}"

    def active(self):
        """A context in which this Backend's device is CUDA's current one: every
        allocation, launch, event and stream of a second device's work happens inside
        it (nothing to do on the CPU or on device 0 when it is current)."""
        if not self.is_gpu:
            from contextlib import nullcontext
            return nullcontext()
        return self.xp.cuda.Device(self.device_id)

    # ------------------------------------------------------------ kernels (GPU)
    def kernel(self, module: str, name: str, defines: tuple[str, ...] = (),
               cooperative: bool = False):
        """Kernel ``name`` of ``engine/kernels/MODULE.cu``, looked up once per process
        and device (a loaded module belongs to one device's context)."""
        key = (module, tuple(defines), cooperative, name, self.device_id)
        function = _functions.get(key)
        if function is None:
            function = load_module(module, defines, cooperative,
                                   self.device_id).get_function(name)
            _functions[key] = function
        return function

    def launch(self, module: str, name: str, args, *, threads: int | None = None,
               grid=None, block=THREADS, defines: tuple[str, ...] = (),
               cooperative: bool = False, shared_mem: int = 0) -> None:
        """Run a kernel: over ``threads`` threads in 1-D blocks of ``block`` (nothing
        to do for 0), or on an explicit ``grid`` of blocks, with ``shared_mem`` bytes
        of dynamic shared memory. Python ints in ``args`` go as int64; pass numpy
        scalars (np.int32(...)) for narrower parameters."""
        if threads is not None:
            if threads <= 0:
                return
            grid = ((threads + block - 1) // block,)
        args = tuple(np.int64(a) if type(a) is int else a for a in args)   # not bools
        function = self.kernel(module, name, defines, cooperative)
        key = (module, tuple(defines), cooperative, name, self.device_id)
        if shared_mem > _dynamic_shared.get(key, 0):
            # opt in: static and dynamic shared memory together may pass 48 KB
            function.max_dynamic_shared_size_bytes = shared_mem
            _dynamic_shared[key] = shared_mem
        function(_dims(grid), _dims(block), args, shared_mem=shared_mem)

    def memory_in_use(self) -> int | None:
        """Bytes of device memory our pool holds in arrays now; None on the CPU."""
        if not self.is_gpu:
            return None
        return int(self.xp.get_default_memory_pool().used_bytes())

    def shared_memory_per_block(self) -> int:
        """Bytes of shared memory one block may use with opt-in (48 KB on the CPU)."""
        if not self.is_gpu:
            return 48 * 1024
        return int(self.xp.cuda.Device(self.device_id).attributes["MaxSharedMemoryPerBlockOptin"])

    def multiprocessors(self) -> tuple[int, int]:
        """(streaming multiprocessors, bytes of shared memory each): what decides how many
        blocks run at once (the CPU: its cores, 48 KB)."""
        if not self.is_gpu:
            return os.cpu_count() or 1, 48 * 1024
        attributes = self.xp.cuda.Device(self.device_id).attributes
        # a tuning hint only (layout.minplus_shape): an H100's figure where not reported
        return (int(attributes["MultiProcessorCount"]),
                int(attributes.get("MaxSharedMemoryPerMultiprocessor", 228 * 1024)))

    def cooperative_blocks(self, module: str, name: str, threads: int, per_sm: int,
                           defines: tuple[str, ...] = ()) -> int:
        """``per_sm`` blocks per SM, fewer if they could not all be resident at once
        (a cooperative launch, with its grid-wide barrier, requires it)."""
        function = self.kernel(module, name, defines, cooperative=True)
        attributes = self.xp.cuda.Device(self.device_id).attributes
        regs = max(function.num_regs, 1)
        by_regs = attributes["MaxRegistersPerMultiprocessor"] // (regs * threads)
        by_threads = attributes["MaxThreadsPerMultiProcessor"] // threads
        return attributes["MultiProcessorCount"] * max(1, min(by_regs, by_threads, per_sm))

    def capture(self, batch):
        """A callable that replays ``batch``'s launches as one CUDA graph (a kernel in a
        replayed graph costs about 1 µs, a launch from Python about 5). The batch must
        launch the same kernels with the same arguments every time, and its kernels
        are looked up first (``kernel``): no module is compiled or loaded inside a
        capture. On the CPU, or where stream capture is unavailable, ``batch`` itself."""
        if not self.is_gpu:
            return batch
        cuda = self.xp.cuda
        try:
            stream = cuda.Stream(non_blocking=True)
            with stream:
                stream.begin_capture()
                batch()
                graph = stream.end_capture()
        except Exception:
            return batch
        return lambda: graph.launch(cuda.get_current_stream())

    # ------------------------------------------------------------ time
    def synchronize(self) -> None:
        """Wait until the device has finished the work queued so far."""
        if self.is_gpu:
            with self.active():
                self.xp.cuda.get_current_stream().synchronize()

    def mark(self):
        """A point in the work stream: a recorded CUDA event on the GPU (no wait),
        the wall clock on the CPU. ``elapsed_ms(start, end)`` reads two of them."""
        if not self.is_gpu:
            return time.perf_counter()
        with self.active():
            event = self.xp.cuda.Event()
            event.record()
        return event

    def elapsed_ms(self, start, end) -> float:
        if not self.is_gpu:
            return (end - start) * 1000.0
        end.synchronize()
        return self.xp.cuda.get_elapsed_time(start, end)

    def wait(self, event) -> None:
        """Make this device's current stream wait (on the device, not the host) for
        ``event``, a ``mark`` of any device: work queued after it starts once the
        marked work, maybe another GPU's, is done."""
        if self.is_gpu:
            with self.active():
                self.xp.cuda.get_current_stream().wait_event(event)

    def copy_into(self, dst, src) -> None:
        """Copy ``src`` into the contiguous ``dst`` (same size and dtype) on this
        device's stream, with no host wait; ``src`` may live on another GPU (a peer
        copy, staged by the driver where the GPUs have no peer access)."""
        if dst.nbytes != src.nbytes:
            raise ValueError(f"copy of {src.nbytes} bytes into {dst.nbytes}")
        if not self.is_gpu:
            dst[...] = src
            return
        with self.active():
            dst.data.copy_from_device_async(src.data, src.nbytes)

    def to_host_async(self, a, out: np.ndarray) -> None:
        """Queue the copy of the contiguous device array ``a`` into ``out`` (pinned, from
        ``host_empty``) on this device's stream; ``synchronize`` waits for it. Several
        GPUs copy at once this way, each over its own link."""
        if not hasattr(a, "get"):
            out[...] = a
            return
        if out.nbytes != a.nbytes:
            raise ValueError(f"copy of {a.nbytes} bytes into {out.nbytes}")
        import ctypes
        with self.active():
            a.data.copy_to_host_async(ctypes.c_void_p(out.ctypes.data), a.nbytes)

    # ------------------------------------------------------------ host memory
    def host_empty(self, shape, dtype, huge: bool = False) -> np.ndarray:
        """A host array for results copied from the device: on the GPU it comes from
        CuPy's pinned-memory pool, so a later run reuses page-locked memory (no
        first-touch page faults, one direct DMA) instead of fresh pages; ``huge``: on
        2 MB pages, for what a query reads at random (pinned.py on the GPU)."""
        if huge:                 # imported here, not at the top: they import Numba
            if self.is_gpu:
                from engine.core.pinned import shared_pool
                return shared_pool(self.xp.cuda.runtime).empty(shape, dtype)
            from engine.core.arrays import huge_zeros
            return huge_zeros(shape, dtype)
        if self.is_gpu:
            import cupyx
            return cupyx.empty_pinned(shape, dtype=dtype)
        return np.empty(shape, dtype=dtype)

    def to_host(self, a, out: np.ndarray | None = None, pinned: bool = False,
                huge: bool = False) -> np.ndarray:
        """``a`` as a host array: into ``out`` when given, else a new array (from
        ``host_empty`` with ``pinned``; ``a`` must then be contiguous)."""
        if not hasattr(a, "get"):                 # already a host array
            if out is None:
                return np.asarray(a)
            out[...] = a
            return out
        if out is None:
            if not pinned:
                return a.get()
            out = self.host_empty(a.shape, a.dtype, huge)
        a.get(out=out)
        return out

    def to_device(self, host, out=None):
        """``host`` on the backend: copied into ``out`` in place when given (a buffer a
        captured graph reads), else as a new array."""
        if out is None:
            return self.xp.asarray(host)
        if self.is_gpu:
            out.set(np.ascontiguousarray(host, dtype=out.dtype))
        else:
            out[...] = host
        return out


def _dims(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


_selected: Backend | None = None


def cpu_backend() -> Backend:
    import os
    return Backend("cpu", np, f"{cpu_model()}, {os.cpu_count()} cores (NumPy)")


def cpu_model() -> str:
    """The CPU's model name, as a person knows it ("AMD EPYC 7R13 Processor", "Intel
    Xeon Platinum 8375C CPU @ 2.90GHz"): /proc/cpuinfo's "model name" on Linux, sysctl's
    brand string on macOS, else platform.processor(); the architecture ("x86_64") only
    when none of them names it. Trademark marks are dropped."""
    import platform
    import re
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
        name = fields.get("model name") or fields.get("hardware") or fields.get("cpu model") or ""
    except OSError:
        pass
    if not name and platform.system() == "Darwin":
        import subprocess
        try:
            name = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=2).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    name = name or platform.processor() or platform.machine() or "unknown CPU"
    return re.sub(r"\s+", " ", re.sub(r"\((R|TM|tm|r)\)", "", name)).strip()


def gpu_backend(device: int = 0) -> Backend:
    """CuPy on CUDA device ``device``; raises BackendError with the reason when it is
    unavailable (no CuPy, no device, or no device of that id)."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library that fails to load
        raise BackendError(f"CuPy is not available ({e.__class__.__name__}: {e}); "
                           "install the gpu extra: pip install '.[gpu]'") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            raise BackendError("no CUDA device found")
        if not 0 <= device < count:
            raise BackendError(f"there is no CUDA device {device}: this machine has {count} "
                               f"(ids 0-{count - 1})")
        props = cupy.cuda.runtime.getDeviceProperties(device)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        total = int(props["totalGlobalMem"])
    except BackendError:
        raise
    except Exception as e:
        raise BackendError(f"no usable CUDA device ({e})") from None
    return Backend("gpu", cupy, name, total, device)


def device_count() -> int:
    """CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies); 0 without CuPy."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:       # no CuPy, or a CUDA library that fails to load
        return 0


def parse_devices(spec, count: int, what: str = "--devices") -> tuple[int, ...] | None:
    """CUDA device ids from "0,1,...", each once and below ``count`` (the devices this
    machine has); None for "" or None (every visible device). ValueError, naming
    ``what``, for anything else."""
    if spec is None or not str(spec).strip():
        return None
    ids = []
    for item in str(spec).split(","):
        item = item.strip()
        if not item.isdigit():
            raise ValueError(f"{what} {spec}: {item!r} is not a CUDA device id (give ids such "
                             f"as 0,1)")
        ids.append(int(item))
    if count < 1:
        raise ValueError(f"{what} {spec}: this machine has no CUDA device")
    for i in ids:
        if i >= count:
            raise ValueError(f"{what} {spec}: there is no CUDA device {i}; this machine has "
                             f"{count} (ids 0-{count - 1})")
    if len(set(ids)) < len(ids):
        raise ValueError(f"{what} {spec}: a device is named twice")
    return tuple(ids)


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
_functions: dict[tuple, object] = {}
_dynamic_shared: dict[tuple, int] = {}     # the dynamic shared memory each kernel was allowed


def kernel_source(name: str) -> str:
    """The text of ``engine/kernels/NAME.cu`` (package data)."""
    from importlib import resources
    return resources.files("engine.kernels").joinpath(f"{name}.cu").read_text()


def load_module(name: str, defines: tuple[str, ...] = (), cooperative: bool = False,
                device: int = 0):
    """Compile ``engine/kernels/NAME.cu`` once per process (and per set of -D defines)
    and device: it is loaded into ``device``'s context.

    ``cooperative`` enables grid-wide barriers (cooperative launch). CuPy also caches
    the compiled binary on disk, so a later process or device only links it.
    """
    key = (name, tuple(defines), cooperative, device)
    if key not in _modules:
        import cupy
        from importlib import resources
        include = str(resources.files("engine.kernels"))  # for shared *.cuh headers
        options = ("--std=c++17", f"-I{include}") + tuple(f"-D{d}" for d in defines)
        module = cupy.RawModule(code=kernel_source(name), options=options,
                                enable_cooperative_groups=cooperative)
        with cupy.cuda.Device(device):
            module.compile()
        _modules[key] = module
    return _modules[key]
