"""Compilations said aloud (engine/core/compilation.py): every Numba compilation while a
watch is open is told once, under the family of the outermost function compiled, on
the job's worker threads too; code already compiled (or loaded from the cache) is not
told; a watch opened before Numba is loaded hears it once it is."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from engine.core.compilation import FAMILIES, family_of, first_time, told, watching
from tests.conftest import ROOT


def fresh(module: str, callee=None):
    """A new Numba function (never compiled) that says it lives in ``module``."""
    if callee is None:
        def f(x):
            return x + 1
    else:
        def f(x):
            return callee(x) * 2
    f.__module__ = module
    return numba.njit(f)


def test_a_compilation_is_told_with_its_family_and_a_count():
    heard = []
    add = fresh("engine.crp.customization.example")
    with watching(lambda *told: heard.append(told)) as watch:
        assert add(1) == 2
        assert add(5) == 6                      # compiled already: not told again
    assert heard == [("CRP kernels", 1, "fresh.<locals>.f")]
    assert watch.compiled == 1 and watch.families == ["CRP kernels"] and watch.seconds > 0


def test_a_callee_is_told_under_its_callers_family():
    heard = []
    helper = fresh("engine.core.heaps")
    caller = fresh("engine.routing.example", callee=helper)
    with watching(lambda *told: heard.append(told)) as watch:
        assert caller(np.int64(1)) == 4
    assert {family for family, _, _ in heard} == {"route search"}
    assert watch.compiled == len(heard) >= 2 and watch.families == ["route search"]


def test_compilations_on_a_jobs_worker_threads_are_told():
    heard = []
    add = fresh("engine.ch.example")
    with watching(lambda *told: heard.append(told)):
        with ThreadPoolExecutor(2) as pool:
            assert pool.submit(add, 1).result() == 2
    assert heard and heard[0][0] == "contraction hierarchy kernels"


def test_nothing_is_told_outside_a_watch_and_the_innermost_watch_hears():
    outer, inner = [], []
    add, other = fresh("engine.sssp.example"), fresh("engine.csp.example")
    add(1)                                      # no watch: compiled silently
    with watching(lambda *told: outer.append(told)):
        with watching(lambda *told: inner.append(told)):
            other(1)
    assert outer == [] and inner[0][0] == "cost-budgeted path kernels"


def test_told_keeps_the_jobs_fraction():
    messages = []
    add = fresh("engine.crp.example")
    with told(lambda fraction, message: messages.append((fraction, message))) as progress:
        progress(0.4, "customizing")
        add(1)
        progress(0.6, "")
    assert messages == [(0.4, "customizing"),
                        (0.4, "preparing the CRP kernels (first time only): 1 compiled"),
                        (0.6, "")]


def test_family_names():
    assert family_of("engine.crp.metric.interpreter") == "metric decoder"
    assert family_of("engine.crp.query.search") == "CRP kernels"
    assert family_of("engine.model.router") == "route search"
    assert family_of("engine.core.heaps") == "engine kernels"
    assert family_of("engines") == family_of("numba.np.arrayobj") == "compiled code"
    assert first_time("CRP kernels") == "preparing the CRP kernels (first time only)"
    assert all(prefix.startswith("engine") for prefix, _ in FAMILIES)


PROBE = """
import sys
from engine.core.compilation import watching
heard = []
with watching(lambda *told: heard.append(told)):
    assert "numba" not in sys.modules
    import numba
    def f(x):
        return x * 3
    f.__module__ = "engine.sssp.example"
    assert numba.njit(f)(2) == 6
print(heard[0][0])
"""


def test_a_watch_opened_before_numba_is_loaded_hears_it():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "shortest-path tree kernels"
