"""Compilations said aloud: while a job runs, every Numba compilation it causes is told
as it starts, so that a first run never waits in silence ("preparing the CRP
kernels (first time only): 4 compiled").

Numba compiles a function on its first call with new argument types and keeps the
machine code in its cache on disk (``cache=True``: ``__pycache__/*.nbi``/``*.nbc``
beside the module, or ``NUMBA_CACHE_DIR``), so a compilation happens on the first run
of a feature after an install or an edit of its module, never again: a load from the
cache is no compilation and is not told. Numba's compile event (``numba:compile``,
emitted only when it compiles) is the one signal used: nothing is guessed from the
cache files. Numba is not imported for this: a watch started before Numba is loaded
listens from the moment it is (``routelab info`` and a plain ``routelab route`` never
load it).

``watching(on_compile)`` calls ``on_compile(family, done, name)`` at each compilation
while its block runs, on any thread (a job's worker threads compile too: CRP's
microcode does; Numba compiles under one process-wide lock, so compilations never
interleave, and a job's are told to it): ``family`` names what is compiled after the outermost function's
package ("CRP kernels", "route search", ...), ``done`` counts them. ``told(progress)``
turns that into progress messages of a job (the window's status bar; the fraction the
job last gave is kept); the command line prints a line per family on stderr.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

# package of the outermost function compiled -> what a person reads
FAMILIES = (("engine.crp.metric", "metric decoder"), ("engine.crp", "CRP kernels"), ("engine.ch", "contraction hierarchy kernels"),
            ("engine.csp", "cost-budgeted path kernels"),
            ("engine.sssp", "shortest-path tree kernels"), ("engine.routing", "route search"),
            ("engine.model", "route search"), ("engine.io", "file checks"),
            ("engine", "engine kernels"))
OTHER = "compiled code"

OnCompile = Callable[[str, int, str], None]


def family_of(module: str) -> str:
    for prefix, family in FAMILIES:
        if module == prefix or module.startswith(prefix + "."):
            return family
    return OTHER


def first_time(family: str) -> str:
    return f"preparing the {family} (first time only)"


@dataclass
class Watch:
    """What compiled on a thread while a ``watching`` block ran."""
    on_compile: OnCompile
    compiled: int = 0                          # functions compiled (callees included)
    families: list[str] = field(default_factory=list)
    seconds: float = 0.0                       # wall time spent compiling
    _depth: int = 0
    _family: str = OTHER
    _since: float = 0.0

    def started(self, module: str, name: str) -> None:
        if self._depth == 0:                   # a callee belongs to its caller's family
            self._family, self._since = family_of(module), time.perf_counter()
            if self._family not in self.families:
                self.families.append(self._family)
        self._depth += 1
        self.compiled += 1
        self.on_compile(self._family, self.compiled, name)

    def ended(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._since


_watches: list[Watch] = []          # the open watches, innermost last
_lock = threading.Lock()


@contextmanager
def watching(on_compile: OnCompile):
    """Within the block, ``on_compile(family, done, name)`` at every Numba compilation
    (the innermost open watch hears it); yields the Watch."""
    _listen()
    watch = Watch(on_compile)
    with _lock:
        _watches.append(watch)
    try:
        yield watch
    finally:
        with _lock:
            _watches.remove(watch)


@contextmanager
def told(progress):
    """A job's ``progress(fraction, message)`` that also says each compilation in the
    block: "preparing the CRP kernels (first time only): 3 compiled", at the fraction
    the job gave last. Yields the progress function for the job to use."""
    last = [0.0]

    def job_progress(fraction: float, message: str = "") -> None:
        last[0] = fraction
        progress(fraction, message)

    def on_compile(family: str, done: int, name: str) -> None:
        progress(last[0], f"{first_time(family)}: {done} compiled")

    with watching(on_compile):
        yield job_progress


# ------------------------------------------------------- Numba's compile event
_listening = False


def _listen() -> None:
    """Hear Numba's compile events: now if Numba is loaded, else once it is."""
    global _listening
    with _lock:
        if _listening:
            return
        _listening = True
        if "numba" in sys.modules:
            _register()
        else:
            sys.meta_path.insert(0, _WhenNumbaLoads())


def _register() -> None:
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, e) -> None:
            watch = _innermost()
            if watch is not None:
                f = getattr(e.data.get("dispatcher"), "py_func", None)
                watch.started(getattr(f, "__module__", "") or "",
                              getattr(f, "__qualname__", "?"))

        def on_end(self, e) -> None:
            watch = _innermost()
            if watch is not None and watch._depth > 0:
                watch.ended()

    event.register("numba:compile", Listener())


def _innermost() -> Watch | None:
    watches = _watches
    return watches[-1] if watches else None


class _WhenNumbaLoads(importlib.abc.MetaPathFinder):
    """Registers the listener right after ``numba`` is imported (a post-import hook:
    the regular finders find it; its loader runs, then ``_register``)."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module) -> None:
                run(module)
                _register()
            spec.loader.exec_module = exec_module
        return spec
