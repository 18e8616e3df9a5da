"""cache: write a graph's RouteLab cache (``.rlg``, engine.io.cache), headless or from
the window (File ▸ Save cache).

A cache holds every array of the loaded graph (the DIMACS siblings added, the OSM
extract's turn restrictions resolved) and is read back in a fraction of the time the
text or PBF files take: NY's three DIMACS files take about 1.5 s to parse, its cache
about 0.05 s, so one-shot commands (``routelab route G.rlg ...``) spend their time on
the answer. ``--out`` is an output (``Param(output=True)``): refused before any work
when it is one of the graph's files or siblings, a device, a FIFO or a folder.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from engine.capabilities import EVERY, Capability, Param, register


@dataclass(frozen=True)
class CacheWritten:
    path: str           # the cache written
    nodes: int
    arcs: int
    bytes: int          # its size on disk
    seconds: float      # writing it


def write(workspace, params: dict, ctx) -> CacheWritten:
    """Write the workspace's graph to ``params["out"]`` (atomically), once the target is
    checked against the files the graph came from (the window's saves; the command line
    has checked it before loading)."""
    from engine.io.atomic import check_writable
    from engine.io.cache import save_cache
    out = params.get("out")
    if not out:
        raise ValueError("cache: give the file to write with --out G.rlg")
    check_writable(out, workspace.input_files)
    started = time.perf_counter()
    ctx.progress(0.0, f"writing {os.path.basename(out)}")
    path = str(save_cache(workspace.graph, out) or out)
    g = workspace.graph
    return CacheWritten(path, g.num_nodes, g.num_arcs, os.path.getsize(path),
                        time.perf_counter() - started)


def to_json(workspace, params: dict, w: CacheWritten) -> dict:
    return {"source": workspace.graph.source, "out": w.path, "nodes": w.nodes, "arcs": w.arcs,
            "bytes": w.bytes, "write_seconds": round(w.seconds, 4)}


def text(r: dict) -> str:
    lines = [f"{r['source']}: {r['nodes']:,} nodes, {r['arcs']:,} arcs",
             f"  cache written to {r['out']} ({r['bytes'] / 1e6:.1f} MB in "
             f"{r['write_seconds']:.2f} s)"]
    if "load_seconds" in r:
        lines.append(f"  read in {r['load_seconds']:.2f} s; open the cache instead: "
                     f"routelab COMMAND {r['out']} ...")
    return "\n".join(lines)


CACHE = register(Capability(
    name="cache", label="Saving the cache",
    help="write the graph's RouteLab cache (.rlg), which loads many times faster than "
         "its DIMACS or OSM files",
    params=(Param("out", str, None, "the cache to write (.rlg)", file=True, required=True,
                  output=True),),
    run=write, to_json=to_json, to_text=text, needs_backend=False, policy=EVERY,
    order=92, menu="&File", menu_text="&Save cache…", shortcut="Ctrl+S"))
