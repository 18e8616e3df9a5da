"""CU-CH: contraction hierarchies built level by level (Karimi, Koppelman, Michael,
ICS'19). One module per step of the paper's Algorithm 1:

    contraction.py        contract(graph) -> Hierarchy: the levels, then the core
    level_graph.py        G_l: the graph a level is contracted in, as sorted arc arrays
    score.py     SCORE    1-hop witness edge difference and tie-breakers
    select.py    SELECT   least important C·|V_l| nodes, then two rounds of Luby's MIS
    shortcut.py  SHORTCUT 2-hop witness search, merged shortcuts
    witness.py            then a bounded local Dijkstra for longer detours (not in the paper)
    update.py    UPDATE   levels, upward/downward arcs, how shortcuts unpack
    extract.py   EXTRACT  the next level graph G_{l+1} in fresh arrays
    apsp.py      APSP     the core as a complete distance matrix
    hierarchy.py          Hierarchy: what contraction builds, saved as .rlh
    parameters.py         K, C and their checks
    query.py              ChQuery: point-to-point routes on a Hierarchy
    query_build.py        its arrays, built from the Hierarchy in a few Numba passes
    query_search.py       its searches (level by level), core join and unpacking
    phast.py              PHAST: one-to-all trees on a Hierarchy
    phast_gpu.py          its GPU query: captured launches, 32-bit rows, 64-bit fallback

Each step is one function over flat arrays. Its NumPy formulation (Numba for the
witness search, SciPy for APSP) is the specification and runs on the CPU; on the
GPU the same function runs fused CUDA kernels (engine/kernels/ch.cu) that compute
the same integers, so the CPU and the GPU build the same levels and shortcuts (all
keys are integers and every sort has a total order; only the core's predecessors
may differ between equally short paths). tests/gpu/test_ch_steps.py checks each
step's parity.

This package's face loads nothing: ``engine.ch.contraction`` (Numba, SciPy) is imported
when one of its names is first used, so that the parameters and the Hierarchy are
read without compiling anything.
"""
from __future__ import annotations

import importlib

__all__ = ["contract", "check_parameters", "Hierarchy"]

_NAMES = {"contract": "contraction", "Contraction": "contraction", "STEPS": "contraction",
          "core_fits": "contraction", "Hierarchy": "hierarchy", "check_parameters": "parameters",
          "DEFAULT_C": "parameters", "DEFAULT_K": "parameters", "MIN_C": "parameters",
          "CORE_BYTES_PER_PAIR": "parameters"}


def __getattr__(name: str):
    """engine.ch.NAME, from the module that defines it, imported on first use."""
    if name in _NAMES:
        return getattr(importlib.import_module(f"engine.ch.{_NAMES[name]}"), name)
    raise AttributeError(f"module 'engine.ch' has no attribute {name!r}")
