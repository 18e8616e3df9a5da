"""partition: the metric-independent nested CRP partition (top-down: METIS on a cluster
graph for the top level, then per cell, the cells in parallel)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.capabilities import Capability, Param, register
from engine.capabilities.common import text_lines
from engine.io.partition_file import MAX_LOG2

if TYPE_CHECKING:
    from engine.crp.partition.nested import Partition


def parse_sizes(text, what: str, allow_none: bool = False) -> tuple[int, ...] | None:
    """``"8,11,14"`` as (8, 11, 14); None or "" for the default; "none" (where allowed)
    for no levels. ValueError says what is wrong."""
    if text is None or not str(text).strip():
        return None
    text = str(text).strip()
    if allow_none and text.lower() == "none":
        return ()
    sizes = []
    for word in text.replace(" ", ",").split(","):
        if not word:
            continue
        try:
            k = int(word)
        except ValueError:
            raise ValueError(f"{what}: {word!r} is not an integer (give cell sizes as log2, "
                             f"e.g. 8,11,14)") from None
        if not 1 <= k <= MAX_LOG2:
            raise ValueError(f"{what}: {k} is out of range 1..{MAX_LOG2} (log2 of a cell size)")
        sizes.append(k)
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"{what}: {','.join(map(str, sizes))} is not strictly ascending")
    return tuple(sizes)


def build(workspace, params: dict, ctx) -> Partition:
    levels = parse_sizes(params.get("levels"), "levels")
    mezzanine = parse_sizes(params.get("mezzanine"), "mezzanine", allow_none=True)
    from engine.crp.partition.nested import partition_graph
    p = partition_graph(workspace.graph, levels=levels, mezzanine=mezzanine,
                        seed=params.get("seed") or 0, progress=ctx.progress, cancel=ctx.cancel)
    workspace.set_partition(p)
    if params.get("out"):
        p.save(params["out"])
    return p


def to_json(workspace, params: dict, p: Partition) -> dict:
    return {"summary": p.summary(workspace.graph), "out": params.get("out")}


def text(r: dict) -> str:
    s = r["summary"]
    lines = [f"partitioned in {s['partition_ms']:.0f} ms (seed {s['seed']}): {s['levels']} levels"]
    for level, (k, cells, cut, mezz) in enumerate(zip(s["cell_sizes_log2"], s["cells"],
                                                     s["boundary_arcs"], s["mezzanine"])):
        lines.append(f"  level {level}: cells of ≤ 2^{k:<2d} ({1 << k:>9,} nodes)  "
                     f"{cells:>9,} cells  {cut:>9,} boundary arcs{'  mezzanine' if mezz else ''}")
    return text_lines(lines, r["out"], "partition")


PARTITION = register(Capability(
    name="partition", label="Partition (CRP)",
    help="nested multilevel partition for CRP (METIS per cell, in parallel)",
    params=(Param("levels", str, None, "query levels as log2 of the cell size, ascending, "
                  "e.g. 8,11,14 (default: from the node count)"),
            Param("mezzanine", str, None, "mezzanine levels (customization only), e.g. 5; "
                  "'none' for none (default: 5 below the lowest query level)"),
            Param("seed", int, 0, "METIS seed (the same seed gives the same cells, on any number "
                  "of cores)"),
            Param("out", str, None, "write the partition here (.rlp)", file=True,
                  output=True)),
    run=build, to_json=to_json, to_text=text, needs_backend=False,
    order=60, menu="&Metric", menu_text="&Partition (CRP)"))
