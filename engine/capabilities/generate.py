"""generate: write the generated road network (engine.generate.network, deterministic
from --nodes and --seed) to a file, to benchmark at any size up to continental ones:
``routelab generate --nodes N [--seed S] --out FILE``.

The file's name says the format:
  * ``.rlg``: RouteLab's cache (engine.io.cache), every array; the fastest to load;
  * ``NAME.gr``: DIMACS text (engine.io.dimacs_write): ``NAME.gr`` with the distance
    metric and ``NAME.co`` with the coordinates; a name of the DIMACS USA scheme,
    ``PREFIX-d.REST.gr`` (as ``USA-road-d.NY.gr``), also gets the travel-time file
    ``PREFIX-t.REST.gr``, and its coordinates go to ``PREFIX-d.REST.co``;
  * ``.osm.pbf``: OpenStreetMap (engine.generate.osm_writer, needs pyosmium): ways
    with their tags, node locations, the banned turns as restriction relations.
Every file is saved atomically; ``--out`` is an output (refused before any work when
it is a file the command reads, a device, a FIFO or a folder), and so is every other
file the format writes. It opens no graph: the command line's ``files`` stay empty.
The generated network takes about 500 bytes of memory per node while it is built
(24 M nodes: 12 GB), checked against the memory budget before it starts.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from engine.capabilities import EVERY, Capability, Param, register

FORMATS = {".rlg": "RouteLab cache", ".gr": "DIMACS text", ".osm.pbf": "OpenStreetMap PBF"}
BYTES_PER_NODE = 560        # peak while generating: 12 GB for 24 M nodes on the H100 host
MAX_NODES = 2**31 - 2       # node ids are int32
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Generated:
    nodes: int
    arcs: int
    banned_turns: int
    seed: int
    files: list          # (path, bytes) of every file written
    format: str
    generate_seconds: float
    write_seconds: float


def format_of(out: str) -> str:
    """The format a file name asks for (a key of FORMATS); ValueError names the choices."""
    name = os.path.basename(str(out)).lower()
    for suffix in FORMATS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return suffix
    raise ValueError(f"{out}: unknown format; name the file .rlg (RouteLab cache), .gr "
                     "(DIMACS text, with its .co) or .osm.pbf (OpenStreetMap)")


def targets(out: str, fmt: str) -> list[str]:
    """Every file a run writes for ``out`` (DIMACS: the .gr files and the .co)."""
    if fmt != ".gr":
        return [out]
    from engine.io.dimacs_write import dimacs_targets
    grs, co = dimacs_targets(out, ("distance", "travel_time"))
    return [str(p) for p in grs.values()] + [str(co)]


def preflight(params: dict, inputs=()) -> tuple[int, int, str, list[str]]:
    """(nodes, seed, format, files) once every argument is checked, before any work;
    no file written is one of ``inputs`` ((label, path): the window's open graph)."""
    from engine.generate.network import MIN_NODES
    from engine.io.atomic import check_writable
    from engine.io.limits import check_allocation
    if params.get("files"):
        raise ValueError(f"generate reads no files (got {params['files'][0]}): give "
                         "--nodes N --out FILE")
    nodes, seed, out = params.get("nodes"), params.get("seed") or 0, params.get("out")
    if not out:
        raise ValueError("generate: give the file to write with --out (.rlg, .gr or .osm.pbf)")
    if nodes is None or not MIN_NODES <= nodes <= MAX_NODES:
        raise ValueError(f"--nodes: a generated network has {MIN_NODES:,} to {MAX_NODES:,} "
                         f"nodes, not {nodes}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"--seed: give a seed of 0 to 2^63-1, not {seed}")
    fmt = format_of(out)
    if fmt == ".osm.pbf":
        try:
            import osmium  # noqa: F401 - only whether it is there
        except ImportError:
            raise ValueError("writing .osm.pbf needs the osmium package (pyosmium); "
                             "write .rlg or .gr instead") from None
    files = targets(out, fmt)
    for path in files:
        check_writable(path, inputs)
    check_allocation(nodes * BYTES_PER_NODE, f"generating a network of {nodes:,} nodes")
    return nodes, seed, fmt, files


def run(workspace, params: dict, ctx) -> Generated:
    nodes, seed, fmt, files = preflight(params, getattr(workspace, "input_files", ()))
    from engine.generate.network import generate_road_network
    started = time.perf_counter()
    graph = generate_road_network(
        nodes, seed=seed, cancel=ctx.cancel,
        progress=lambda f, what: ctx.progress(0.5 * f, f"generating {nodes:,} nodes: {what}"))
    generated = time.perf_counter()
    ctx.record({"step": "generated", "nodes": graph.num_nodes, "arcs": graph.num_arcs,
                "seconds": generated - started})
    ctx.cancel.check()

    def progress(fraction: float, message: str) -> None:
        ctx.progress(0.5 + 0.5 * fraction, message)

    progress(0.0, f"writing {os.path.basename(params['out'])}")
    written = _write(graph, params["out"], fmt, progress, ctx.cancel)
    done = time.perf_counter()
    return Generated(graph.num_nodes, graph.num_arcs, len(graph.turn_restrictions or ()), seed,
                     [(str(p), os.path.getsize(p)) for p in written], FORMATS[fmt],
                     generated - started, done - generated)


def _write(graph, out: str, fmt: str, progress, cancel) -> list:
    if fmt == ".rlg":
        from engine.io.cache import save_cache
        return [save_cache(graph, out)]
    if fmt == ".gr":
        from engine.io.dimacs_write import write_dimacs
        return write_dimacs(graph, out, comment=f"RouteLab {graph.source}", progress=progress,
                            cancel=cancel)
    from engine.generate.osm_writer import write_osm_pbf
    return [write_osm_pbf(graph, out, progress=progress, cancel=cancel)]


def to_json(workspace, params: dict, g: Generated) -> dict:
    return {"nodes": g.nodes, "arcs": g.arcs, "banned_turns": g.banned_turns, "seed": g.seed,
            "format": g.format, "files": [{"path": p, "bytes": b} for p, b in g.files],
            "generate_seconds": round(g.generate_seconds, 3),
            "write_seconds": round(g.write_seconds, 3)}


def text(r: dict) -> str:
    lines = [f"generated {r['nodes']:,} nodes, {r['arcs']:,} arcs, {r['banned_turns']:,} banned "
             f"turns (seed {r['seed']}) in {r['generate_seconds']:.1f} s",
             f"  {r['format']} written in {r['write_seconds']:.1f} s:"]
    lines += [f"    {f['path']} ({f['bytes'] / 1e6:,.1f} MB)" for f in r["files"]]
    return "\n".join(lines)


def record_text(record: dict) -> str:
    return (f"generated {record['nodes']:,} nodes, {record['arcs']:,} arcs in "
            f"{record['seconds']:.1f} s; writing…")


GENERATE = register(Capability(
    name="generate", label="Generating a network file",
    help="write the generated road network of N nodes as .rlg, DIMACS .gr/.co or .osm.pbf "
         "(the name says which), for benchmarks at any size",
    params=(Param("nodes", int, None, "how many nodes (exactly)", required=True),
            Param("seed", int, 1, "the generator's seed (the same nodes and seed give the "
                  "same network)"),
            Param("out", str, None, "the file to write: NAME.rlg, NAME.gr (+ NAME.co; "
                  "PREFIX-d.REST.gr also writes PREFIX-t.REST.gr) or NAME.osm.pbf",
                  file=True, required=True, output=True)),
    run=run, to_json=to_json, to_text=text, record_text=record_text, needs_backend=False,
    opens_files=True, policy=EVERY, order=93, menu="&File",
    menu_text="&Generate network file…"))
