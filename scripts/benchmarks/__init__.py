"""Benchmark sections, one module per capability; each module's SECTIONS maps a
section name to (title, function returning (header, rows)). scripts/bench.py runs them."""
from __future__ import annotations

from benchmarks import ch, continental_io, crp, csp, draw, isochrone, live, load, proof, route, sssp, startup, turns

SECTIONS = {}
for _module in (load, startup, sssp, ch, draw, route, turns, proof, isochrone, crp, live, csp, continental_io):
    SECTIONS.update(_module.SECTIONS)
from benchmarks import crp_multi_gpu  # noqa: E402  (issue #37: CRP customization on several GPUs)
SECTIONS.update(crp_multi_gpu.SECTIONS)
from benchmarks import memory  # noqa: E402  (issue #37: bytes per node of the large structures)
SECTIONS.update(memory.SECTIONS)
from benchmarks import continental  # noqa: E402  (issue #37: the acceptance run at 24 M nodes)
SECTIONS.update(continental.SECTIONS)
from benchmarks import partition_scale  # noqa: E402  (issue #37: the CRP partition at scale)
SECTIONS.update(partition_scale.SECTIONS)
from benchmarks import osm_scale  # noqa: E402  (issue #37: the OSM loader at scale)
SECTIONS.update(osm_scale.SECTIONS)
from benchmarks import crp_query_scale  # noqa: E402  (issue #37: the CRP query at scale)
SECTIONS.update(crp_query_scale.SECTIONS)
