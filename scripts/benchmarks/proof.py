"""The witness checks of hierarchy files (issue #35, part 2) on NY: the node-based
hierarchies of both metrics, the turn-aware one (every turn free) and the bi-criteria
one; the check alone with all threads, two and one, the whole validated load, and the
audit's crafted files (691 shortcuts dropped from a .rlh, 801 from a .rlb) refused.
``ROUTELAB_BENCH_PROOF_FILES=DIR`` keeps the built files there (and reuses them)."""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import DATA, best_of

HEADER = ["hierarchy", "pairs (by an arc / two / a search)", "check: all threads",
          "2 threads", "1 thread", "load, validated and checked", "notes"]


def bench_proof() -> tuple[list[str], list[list[str]]]:
    gr = DATA / "dimacs" / "USA-road-d.NY.gr.gz"
    if not gr.exists():
        return HEADER, [["NY", "", "", "", "", "", f"{gr} is not there"]]
    from engine.io import load
    ny = load([gr, DATA / "dimacs" / "USA-road-d.NY.co.gz"])
    keep = os.environ.get("ROUTELAB_BENCH_PROOF_FILES")
    folder = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="proof"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, path, build in _files(ny, folder):
        if not path.exists():
            build(path)
        rows.append(_row(name, path))
    rows += _crafted(folder)
    return HEADER, rows


def _files(ny, folder: Path):
    from engine.ch import contract
    from engine.csp.hierarchy.build import pareto_hierarchy_for
    from engine.csp.hierarchy.file import save_pareto_hierarchy
    from engine.model.hierarchy import contract_turn_aware
    from engine.workspace import Workspace
    for metric in ("distance", "travel_time"):
        yield (f"NY {metric}, node-based .rlh", folder / f"ny-{metric}.rlh",
               lambda p, m=metric: contract(ny, m).save(p))
    model = Workspace(ny).turn_model(("distance",), force=True)
    yield ("NY distance, turn-aware .rlh", folder / "ny-distance-turns.rlh",
           lambda p: contract_turn_aware(model, "distance").save(p))
    yield ("NY distance within travel_time, .rlb", folder / "ny.rlb",
           lambda p: save_pareto_hierarchy(pareto_hierarchy_for(ny, "distance", "travel_time"), p))


def _loader(path: Path):
    if path.suffix == ".rlb":
        from engine.csp.hierarchy.file import load_pareto_hierarchy
        from engine.csp.hierarchy.proof import prove_pareto
        return load_pareto_hierarchy, prove_pareto
    from engine.ch import Hierarchy
    from engine.ch.proof import prove
    return Hierarchy.load, prove


def _row(name: str, path: Path) -> list[str]:
    load, prove = _loader(path)
    h = load(path)                                       # compiles and warms up
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        load(path)
        times.append(time.perf_counter() - t0)
    from engine.ch.proof_work import workers
    cores = workers(h.num_nodes, None, 32 if path.suffix == ".rlb" else 28)  # as the load runs
    ms = {t: best_of(3, prove, h, path, t)[1] * 1000 for t in sorted({cores, 2, 1})}
    p = h.proof
    return [name, f"{p.pairs:,} ({p.direct:,} / {p.two_arcs:,} / {p.searched:,})",
            f"{ms[cores]:.0f} ms ({cores} threads)", f"{ms[2]:.0f} ms", f"{ms[1]:.0f} ms",
            f"{statistics.median(times):.2f} s",
            f"{path.stat().st_size / 1e6:.0f} MB; check best of 3, load median of 3"]


def _crafted(folder: Path) -> list[list[str]]:
    """The audit's files: shortcuts that no other names as a child dropped, the up/down
    (search) lists mended, so that only the witness check can refuse them."""
    from tests.hierarchy_damage import droppable, edited, pareto_droppable, pareto_edited
    from engine.io import LoadError
    rows = []
    for source, count in (("ny-distance.rlh", 691), ("ny.rlb", 801)):
        path = folder / source
        load, _ = _loader(path)
        h = load(path)
        rng = np.random.default_rng(count)
        if path.suffix == ".rlb":
            from engine.csp.hierarchy.file import save_pareto_hierarchy
            bad = save_pareto_hierarchy(pareto_edited(h, rng.choice(pareto_droppable(h), count,
                                                                    replace=False)),
                                        folder / f"crafted-{count}.rlb")
        else:
            bad = edited(h, rng.choice(droppable(h), count, replace=False)).save(
                folder / f"crafted-{count}.rlh")
        t0 = time.perf_counter()
        try:
            load(bad)
            verdict = "ACCEPTED"
        except LoadError as e:
            verdict = f"refused: {e.reason[:70]}…"
        rows.append([f"{source} with {count} shortcuts dropped", "", "", "", "",
                     f"{time.perf_counter() - t0:.2f} s", verdict])
    return rows


SECTIONS = {"proof": ("Hierarchy files: the witness check (issue #35), NY", bench_proof)}
